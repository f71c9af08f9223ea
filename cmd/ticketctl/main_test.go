package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// ticketctl runs the CLI in-process against the test database.
func ticketctl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	jsonOut = false
	var out bytes.Buffer
	root := newRoot(&out)
	root.SetArgs(args)
	root.SetErr(&out)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func TestTicketctlJSONCommands(t *testing.T) {
	db, url := testenv.DB(t)
	t.Setenv("DATABASE_URL", url)
	ctx := context.Background()

	out, err := ticketctl(t, "migrate", "--json")
	if err != nil || !strings.Contains(out, `"applied": []`) {
		t.Fatalf("migrate on a migrated db: %v %s", err, out)
	}

	out, err = ticketctl(t, "company", "create", "--name", "Acme", "--json")
	var company struct{ ID int64 }
	if err != nil || json.Unmarshal([]byte(out), &company) != nil || company.ID == 0 {
		t.Fatalf("company create: %v %s", err, out)
	}
	cid := strconv.FormatInt(company.ID, 10)
	// A company's report days are in its time zone: an IANA name, or none.
	out, err = ticketctl(t, "company", "create", "--name", "Acme Moscow", "--timezone", "Europe/Moscow", "--json")
	var zoned struct{ Timezone string }
	if err != nil || json.Unmarshal([]byte(out), &zoned) != nil || zoned.Timezone != "Europe/Moscow" {
		t.Fatalf("company create --timezone: %v %s", err, out)
	}
	if out, err := ticketctl(t, "company", "create", "--name", "Nowhere", "--timezone", "Mars/Olympus"); err == nil {
		t.Fatalf("company create with an unknown zone: %s", out)
	}

	out, err = ticketctl(t, "key", "create", "--company", cid, "--env", "production", "--scopes", "catalog:read,orders:read", "--json")
	var key struct {
		ID     int64
		Key    string
		Scopes []string
	}
	if err != nil || json.Unmarshal([]byte(out), &key) != nil || !strings.HasPrefix(key.Key, "tk_production_") || len(key.Scopes) != 2 {
		t.Fatalf("key create: %v %s", err, out)
	}
	// The key authenticates; only its hash is stored.
	auth := apikey.NewAuthenticator(db, 0)
	p, err := auth.Authenticate(ctx, key.Key)
	if err != nil || p.CompanyID != company.ID || p.IsTest() || !p.Has(apikey.ScopeCatalogRead) || p.Has(apikey.ScopeOrdersWrite) {
		t.Fatalf("authenticate created key: %+v %v", p, err)
	}
	var stored int
	if err := db.NewRaw("SELECT count(*) FROM api_keys WHERE key_prefix = ? AND position(? in encode(key_hash, 'escape')) = 0",
		key.Key[:20], key.Key).Scan(ctx, &stored); err != nil || stored != 1 {
		t.Fatalf("stored key: %d %v", stored, err)
	}
	if _, err := ticketctl(t, "key", "create", "--company", cid, "--env", "staging"); err == nil {
		t.Fatal("unknown environment accepted")
	}
	if _, err := ticketctl(t, "key", "create", "--company", cid, "--env", "sandbox", "--scopes", "admin"); err == nil {
		t.Fatal("unknown scope accepted")
	}

	dir := t.TempDir()
	good := filepath.Join(dir, "catalog.json")
	if err := os.WriteFile(good, catalogfile.Demo(time.Now()), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = ticketctl(t, "catalog", "import", "--company", cid, good, "--json")
	if err != nil || !strings.Contains(out, `"action": "created"`) {
		t.Fatalf("catalog import: %v %s", err, out)
	}
	out, err = ticketctl(t, "catalog", "import", "--company", cid, good)
	if err != nil || !strings.Contains(out, "0 created, 0 updated, 14 unchanged; 0 seats changed") {
		t.Fatalf("re-import: %v %s", err, out)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"cities": [{"ref": "", "name": ""}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = ticketctl(t, "catalog", "import", "--company", cid, bad, "--json")
	var errs catalogfile.Errors
	if !errors.As(err, &errs) || len(errs) != 2 {
		t.Fatalf("bad file: want 2 errors, got %v", err)
	}

	out, err = ticketctl(t, "key", "revoke", strconv.FormatInt(key.ID, 10), "--json")
	if err != nil || !strings.Contains(out, `"revoked_at"`) {
		t.Fatalf("revoke: %v %s", err, out)
	}
	if _, err := auth.Authenticate(ctx, key.Key); !errors.Is(err, apikey.ErrInvalidKey) {
		t.Fatalf("revoked key still authenticates: %v", err)
	}
	// The operator's revocation is in the company's audit log, as ticketctl's.
	var by string
	if err := db.NewRaw("SELECT actor_kind FROM audit_log WHERE company_id = ? AND action = 'key.revoke'", company.ID).Scan(ctx, &by); err != nil || by != "ticketctl" {
		t.Fatalf("the revocation's audit row: %q %v", by, err)
	}

	if _, err := db.ExecContext(ctx, `INSERT INTO request_log (request_id, company_id, method, path, status, duration_us, created_at)
		VALUES ('req_1', ?, 'GET', '/v1/events', 200, 10, now()), ('req_2', ?, 'GET', '/v1/events/9/categories', 404, 10, now())`,
		company.ID, company.ID); err != nil {
		t.Fatal(err)
	}
	out, err = ticketctl(t, "requests", "--company", cid, "--status", "404", "--since", "1h", "--json")
	var entries []struct {
		RequestID string `json:"request_id"`
	}
	if err != nil || json.Unmarshal([]byte(out), &entries) != nil || len(entries) != 1 || entries[0].RequestID != "req_2" {
		t.Fatalf("requests: %v %s", err, out)
	}

	out, err = ticketctl(t, "seed-demo", "--json")
	var seed struct {
		CompanyID int64 `json:"company_id"`
		Key       struct{ Key string }
	}
	if err != nil || json.Unmarshal([]byte(out), &seed) != nil || !strings.HasPrefix(seed.Key.Key, "tk_sandbox_") {
		t.Fatalf("seed-demo: %v %s", err, out)
	}
	// Seeding again reuses the demo company and changes no catalog record.
	out, err = ticketctl(t, "seed-demo")
	if err != nil || !strings.Contains(out, "0 created, 0 updated") {
		t.Fatalf("second seed-demo: %v %s", err, out)
	}
}

// The openapi command needs no database: it prints the served document.
func TestTicketctlOpenAPI(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://nobody@127.0.0.1:1/none?sslmode=disable")
	out, err := ticketctl(t, "openapi")
	if err != nil {
		t.Fatalf("openapi: %v %s", err, out)
	}
	if !strings.Contains(out, `"openapi": "3.1.0"`) {
		t.Fatalf("not an OpenAPI 3.1 document: %.200s", out)
	}
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("openapi output is not JSON: %v", err)
	}
	for path, method := range map[string]string{
		"/v1/events": "get", "/v1/events/{id}/availability": "get", "/v1/reservations": "post",
		"/v1/reservations/{id}": "patch", "/v1/orders/{id}/confirm": "post", "/aggregator/v1/reserve": "post",
	} {
		if _, ok := doc.Paths[path][method]; !ok {
			t.Errorf("document lacks %s %s", method, path)
		}
	}
}

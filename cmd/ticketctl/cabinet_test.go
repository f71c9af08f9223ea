package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/internal/organizer"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// acme is a database for ticketctl with a company Acme, and its id.
func acme(t *testing.T) (*bun.DB, string) {
	t.Helper()
	db, url := testenv.DB(t)
	t.Setenv("DATABASE_URL", url)
	t.Setenv("PUBLIC_BASE_URL", "https://tickets.example")
	co, err := store.CreateCompany(context.Background(), db, "Acme")
	if err != nil {
		t.Fatal(err)
	}
	return db, strconv.FormatInt(co.ID, 10)
}

// TestTicketctlUserAndSalesReport: `user create` prints a one-time link
// whose token is stored only as a hash; `user link` issues another;
// seed-demo prints the demo organizer's link; `report sales --json` gives
// the figures the cabinet shows (the same report, production orders only).
func TestTicketctlUserAndSalesReport(t *testing.T) {
	db, cid := acme(t)
	ctx := context.Background()

	out, err := ticketctl(t, "user", "create", "--company", cid, "--email", "Boss@Acme.test", "--json")
	var u struct {
		ID        int64  `json:"id"`
		Email     string `json:"email"`
		SignInURL string `json:"signin_url"`
	}
	if err != nil || json.Unmarshal([]byte(out), &u) != nil || u.Email != "boss@acme.test" ||
		!strings.HasPrefix(u.SignInURL, "https://tickets.example/cabinet/link/") {
		t.Fatalf("user create: %v %s", err, out)
	}
	token := strings.TrimPrefix(u.SignInURL, "https://tickets.example/cabinet/link/")
	sum := sha256.Sum256([]byte(token))
	var n int
	if err := db.NewRaw("SELECT count(*) FROM cabinet_signin_links WHERE token_hash = ? AND user_id = ?", sum[:], u.ID).Scan(ctx, &n); err != nil || n != 1 {
		t.Fatalf("the link's hash is not stored: %d %v", n, err)
	}
	if _, err := ticketctl(t, "user", "create", "--company", cid, "--email", "boss@acme.test"); err == nil {
		t.Fatal("a second user with the same e-mail")
	}
	if _, err := ticketctl(t, "user", "create", "--company", "999999", "--email", "x@acme.test"); err == nil {
		t.Fatal("a user of no company")
	}
	out, err = ticketctl(t, "user", "link", "--email", "boss@acme.test")
	if err != nil || !strings.Contains(out, "/cabinet/link/") || strings.Contains(out, token) {
		t.Fatalf("user link: %v %s", err, out)
	}
	if err := db.NewRaw("SELECT count(*) FROM cabinet_signin_links WHERE token_hash = ? AND used_at IS NULL", sum[:]).Scan(ctx, &n); err != nil || n != 0 {
		t.Fatalf("the first link still works after `user link`: %d %v", n, err)
	}
	if _, err := ticketctl(t, "user", "create", "--company", cid, "--email", "door@acme.test", "--role", "door"); err != nil {
		t.Fatalf("user create --role door: %v", err)
	}
	out, err = ticketctl(t, "user", "list", "--company", cid)
	if err != nil || !regexp.MustCompile(`door@acme\.test\s+door\s+invited`).MatchString(out) ||
		!regexp.MustCompile(`boss@acme\.test\s+owner\s+invited`).MatchString(out) {
		t.Fatalf("user list: %v\n%s", err, out)
	}
	// Disabling: the session version moves, no link works, no new one is issued.
	if _, err := ticketctl(t, "user", "disable"); err == nil {
		t.Fatal("user disable without --email or --id")
	}
	if out, err := ticketctl(t, "user", "disable", "--email", "boss@acme.test"); err != nil || !strings.Contains(out, "disabled") {
		t.Fatalf("user disable: %v %s", err, out)
	}
	var version, live int
	if err := db.NewRaw(`SELECT session_version, (SELECT count(*) FROM cabinet_signin_links WHERE user_id = ? AND used_at IS NULL)
		FROM cabinet_users WHERE id = ? AND disabled_at IS NOT NULL`, u.ID, u.ID).Scan(ctx, &version, &live); err != nil || version < 2 || live != 0 {
		t.Fatalf("after user disable: version %d, live links %d, %v", version, live, err)
	}
	if out, err := ticketctl(t, "user", "link", "--email", "boss@acme.test"); err == nil {
		t.Fatalf("user link of a disabled user: %s", out)
	}
	if _, err := ticketctl(t, "user", "disable", "--id", strconv.FormatInt(u.ID, 10)); err != nil {
		t.Fatalf("user disable --id: %v", err)
	}

	out, err = ticketctl(t, "seed-demo", "--json")
	var demo struct {
		CompanyID int64 `json:"company_id"`
		Organizer struct {
			Email     string `json:"email"`
			SignInURL string `json:"signin_url"`
		} `json:"organizer"`
	}
	if err != nil || json.Unmarshal([]byte(out), &demo) != nil || !strings.Contains(demo.Organizer.SignInURL, "/cabinet/link/") {
		t.Fatalf("seed-demo: %v %s", err, out)
	}
	// A second seed reuses the demo organizer with a fresh link.
	if out, err := ticketctl(t, "seed-demo"); err != nil || !strings.Contains(out, "demo organizer "+demo.Organizer.Email) {
		t.Fatalf("seed-demo again: %v %s", err, out)
	}

	// Sales: one production order, one sandbox order of the demo company.
	if _, err := catalogfile.Import(ctx, db, demo.CompanyID, catalogfile.Demo(time.Now())); err != nil {
		t.Fatal(err)
	}
	for _, env := range []string{"production", "sandbox"} {
		if _, err := ticketctl(t, "key", "create", "--company", strconv.FormatInt(demo.CompanyID, 10), "--env", env); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.NewRaw(`INSERT INTO orders (company_id, api_key_id, is_test, event_id, status, payment, currency, total, service_fee, amount,
			customer_email, customer_first_name, customer_last_name, customer_phone, access_token_hash, expires_at, paid_at)
		SELECT a.company_id, k.id, a.environment = 'sandbox', e.id, 'paid', 'external', 'RUB', 300000, 30000, 330000,
			'b@x.test', 'B', 'C', '', '\x01', now(), now()
		FROM api_keys k JOIN applications a ON a.id = k.application_id JOIN events e ON e.company_id = a.company_id AND e.ref = 'swan-lake'
		WHERE a.company_id = ?`, demo.CompanyID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	today := time.Now().UTC().Format(time.DateOnly)
	out, err = ticketctl(t, "report", "sales", "--company", strconv.FormatInt(demo.CompanyID, 10), "--from", today, "--to", today, "--json")
	if err != nil {
		t.Fatalf("report sales: %v %s", err, out)
	}
	var got store.SalesReport
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("report sales: %v %s", err, out)
	}
	if got.Total.Orders != 1 || got.Total.Gross != 330000 || got.Total.ServiceFees != 30000 {
		t.Fatalf("report sales totals (the sandbox order must not count): %+v", got.Total)
	}
	from, _ := time.Parse(time.DateOnly, today)
	want, err := store.GetSalesReport(ctx, db, store.ReportFilter{CompanyID: demo.CompanyID, From: from, To: from.AddDate(0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, _ := json.Marshal(want)
	var wantBack store.SalesReport
	_ = json.Unmarshal(wantJSON, &wantBack)
	if !reflect.DeepEqual(got, wantBack) {
		t.Fatalf("ticketctl's report differs from the cabinet's:\n%s\n%s", out, wantJSON)
	}
	if out, err := ticketctl(t, "report", "sales", "--company", strconv.FormatInt(demo.CompanyID, 10), "--csv"); err != nil ||
		!strings.HasPrefix(out, "section,") || !strings.Contains(out, "\ntotal,") {
		t.Fatalf("report sales --csv: %v %s", err, out)
	}
}

// TestTicketctlUserDisableKeepsAnOwner: as in the cabinet, the company's
// last active owner (a password set, not disabled) cannot be disabled and
// stays as it was; once another owner is active, it can.
func TestTicketctlUserDisableKeepsAnOwner(t *testing.T) {
	db, cid := acme(t)
	ctx := context.Background()
	for _, email := range []string{"boss@acme.test", "deputy@acme.test"} {
		if out, err := ticketctl(t, "user", "create", "--company", cid, "--email", email); err != nil {
			t.Fatalf("user create %s: %v %s", email, err, out)
		}
	}
	activate := func(email string) {
		t.Helper()
		if _, err := db.NewRaw("UPDATE cabinet_users SET joined_at = now() WHERE email = ?", email).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	activate("boss@acme.test")
	out, err := ticketctl(t, "user", "disable", "--email", "boss@acme.test")
	if err == nil || !strings.Contains(err.Error()+out, "last active owner") {
		t.Fatalf("disabling the last active owner: %v %s", err, out)
	}
	var disabled bool
	if err := db.NewRaw("SELECT disabled_at IS NOT NULL FROM cabinet_users WHERE email = 'boss@acme.test'").Scan(ctx, &disabled); err != nil || disabled {
		t.Fatalf("the last owner is disabled: %v %v", disabled, err)
	}
	activate("deputy@acme.test")
	if out, err := ticketctl(t, "user", "disable", "--email", "boss@acme.test"); err != nil || !strings.Contains(out, "disabled") {
		t.Fatalf("disabling an owner while another is active: %v %s", err, out)
	}
}

// TestTicketctlOneAddressTwoCompanies: an address may be a user of two
// companies; `user link` and `user disable` then need --company to say
// which membership, and act on that one alone.
func TestTicketctlOneAddressTwoCompanies(t *testing.T) {
	db, acmeID := acme(t)
	ctx := context.Background()
	other, err := store.CreateCompany(ctx, db, "Other")
	if err != nil {
		t.Fatal(err)
	}
	otherID := strconv.FormatInt(other.ID, 10)
	for _, cid := range []string{acmeID, otherID} {
		if out, err := ticketctl(t, "user", "create", "--company", cid, "--email", "pat@shared.test"); err != nil {
			t.Fatalf("user create in company %s: %v %s", cid, err, out)
		}
	}
	out, err := ticketctl(t, "user", "link", "--email", "pat@shared.test")
	if err == nil || !strings.Contains(err.Error(), "--company") || !strings.Contains(err.Error(), acmeID) || !strings.Contains(err.Error(), otherID) {
		t.Fatalf("user link of an address of two companies: %v %s", err, out)
	}
	out, err = ticketctl(t, "user", "link", "--email", "pat@shared.test", "--company", otherID, "--json")
	var u struct {
		ID        int64 `json:"id"`
		CompanyID int64 `json:"company_id"`
	}
	if err != nil || json.Unmarshal([]byte(out), &u) != nil || u.CompanyID != other.ID {
		t.Fatalf("user link --company: %v %s", err, out)
	}
	if out, err := ticketctl(t, "user", "disable", "--email", "pat@shared.test", "--company", acmeID); err != nil || !strings.Contains(out, "company "+acmeID) {
		t.Fatalf("user disable --company: %v %s", err, out)
	}
	var disabled []bool
	if err := db.NewRaw("SELECT disabled_at IS NOT NULL FROM cabinet_users WHERE email = 'pat@shared.test' ORDER BY company_id = ?", other.ID).
		Scan(ctx, &disabled); err != nil || len(disabled) != 2 || !disabled[0] || disabled[1] {
		t.Fatalf("after disabling in one company, disabled: %v %v", disabled, err)
	}
}

// linkToken runs `user link` with args and returns the link's token.
func linkToken(t *testing.T, args ...string) string {
	t.Helper()
	out, err := ticketctl(t, append([]string{"user", "link", "--json"}, args...)...)
	var u struct {
		SignInURL string `json:"signin_url"`
	}
	if err != nil || json.Unmarshal([]byte(out), &u) != nil || !strings.Contains(u.SignInURL, organizer.LinkPath) {
		t.Fatalf("user link %v: %v %s", args, err, out)
	}
	return u.SignInURL[strings.Index(u.SignInURL, organizer.LinkPath)+len(organizer.LinkPath):]
}

// TestTicketctlResetLinkOfAnInvitation: a person with a password whose
// only membership is an invitation (removed and invited back) and who
// forgot the password: `user link` gives an invitation's link, which asks
// for that password; `user link --reset` gives one that sets a new
// password and joins. Used, it spends the person's lost-password links of
// other companies, as any new password does.
func TestTicketctlResetLinkOfAnInvitation(t *testing.T) {
	db, acmeID := acme(t)
	ctx := context.Background()
	users := organizer.New(db, nil, organizer.Limits{})
	companyID, _ := strconv.ParseInt(acmeID, 10, 64)
	boss, bossLink, err := users.CreateUser(ctx, companyID, "boss@acme.test", organizer.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := users.UseLink(ctx, "192.0.2.1", strings.TrimPrefix(bossLink, organizer.LinkPath), "the boss's password"); err != nil {
		t.Fatal(err)
	}
	// pat sets a password, is removed, and is invited back.
	_, patLink, err := users.CreateUser(ctx, companyID, "pat@acme.test", organizer.RoleSupport)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := users.UseLink(ctx, "192.0.2.2", strings.TrimPrefix(patLink, organizer.LinkPath), "the forgotten password"); err != nil {
		t.Fatal(err)
	}
	if out, err := ticketctl(t, "user", "disable", "--email", "pat@acme.test"); err != nil {
		t.Fatalf("user disable: %v %s", err, out)
	}
	if _, err := users.Invite(ctx, boss, "pat@acme.test", organizer.RoleSupport); err != nil {
		t.Fatal(err)
	}

	// A plain link is the invitation's: it asks for the forgotten one.
	plain := linkToken(t, "--email", "pat@acme.test")
	if l, err := users.Link(ctx, plain); err != nil || !l.ExistingPassword {
		t.Fatalf("user link of the invitation: %+v %v, want one asking for the password", l, err)
	}
	reset := linkToken(t, "--email", "pat@acme.test", "--reset")
	if _, err := users.Link(ctx, plain); !errors.Is(err, organizer.ErrLinkInvalid) {
		t.Fatalf("the plain link after --reset: %v, want spent", err)
	}
	if l, err := users.Link(ctx, reset); err != nil || l.ExistingPassword || l.User.Joined {
		t.Fatalf("user link --reset: %+v %v, want a link that sets the password", l, err)
	}
	u, _, err := users.UseLink(ctx, "192.0.2.3", reset, "a new password of pat")
	if err != nil || !u.Joined || u.CompanyID != companyID {
		t.Fatalf("using the reset link: %+v %v", u, err)
	}
	if _, _, err := users.SignIn(ctx, "192.0.2.4", "pat@acme.test", "a new password of pat"); err != nil {
		t.Fatalf("signing in with the new password: %v", err)
	}
	if _, _, err := users.SignIn(ctx, "192.0.2.4", "pat@acme.test", "the forgotten password"); !errors.Is(err, organizer.ErrBadCredentials) {
		t.Fatalf("signing in with the old password: %v", err)
	}

	// sam is a member of Other with a pending lost-password link, and
	// invited to Acme: Acme's reset link spends Other's link.
	other, err := store.CreateCompany(ctx, db, "Other")
	if err != nil {
		t.Fatal(err)
	}
	_, samLink, err := users.CreateUser(ctx, other.ID, "sam@other.test", organizer.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := users.UseLink(ctx, "192.0.2.5", strings.TrimPrefix(samLink, organizer.LinkPath), "sam's first password"); err != nil {
		t.Fatal(err)
	}
	if _, err := users.Invite(ctx, boss, "sam@other.test", organizer.RoleFinance); err != nil {
		t.Fatal(err)
	}
	lost := linkToken(t, "--email", "sam@other.test", "--company", strconv.FormatInt(other.ID, 10))
	reset = linkToken(t, "--email", "sam@other.test", "--company", acmeID, "--reset")
	if _, _, err := users.UseLink(ctx, "192.0.2.6", reset, "sam's second password"); err != nil {
		t.Fatalf("sam's reset link: %v", err)
	}
	if _, err := users.Link(ctx, lost); !errors.Is(err, organizer.ErrLinkInvalid) {
		t.Fatalf("the other company's lost-password link after the reset: %v, want spent", err)
	}
}

// TestTicketctlResetTwoFactor: the operator removes a person's
// authenticator (every company's), ends the person's sessions, and each
// company's audit log says so; a person without one is an error.
func TestTicketctlResetTwoFactor(t *testing.T) {
	db, cid := acme(t)
	ctx := context.Background()
	if _, err := ticketctl(t, "user", "create", "--company", cid, "--email", "money@acme.test", "--role", "finance"); err != nil {
		t.Fatal(err)
	}
	// Joined, with an authenticator.
	if _, err := db.ExecContext(ctx, `UPDATE cabinet_users SET joined_at = now() WHERE email = 'money@acme.test';
		INSERT INTO cabinet_two_factor (email, sealed_secret, confirmed_at) VALUES ('money@acme.test', '\x00', now())`); err != nil {
		t.Fatal(err)
	}
	var before int
	if err := db.NewRaw("SELECT session_version FROM cabinet_users WHERE email = 'money@acme.test'").Scan(ctx, &before); err != nil {
		t.Fatal(err)
	}
	if out, err := ticketctl(t, "user", "reset-two-factor", "--email", "Money@Acme.test"); err != nil || !strings.Contains(out, "is removed") {
		t.Fatalf("reset-two-factor: %v %s", err, out)
	}
	var left, after, rows int
	if err := db.NewRaw(`SELECT (SELECT count(*) FROM cabinet_two_factor), (SELECT session_version FROM cabinet_users WHERE email = 'money@acme.test'),
		(SELECT count(*) FROM audit_log WHERE action = 'two_factor.reset' AND actor = 'money@acme.test' AND detail->>'by' = 'ticketctl')`).
		Scan(ctx, &left, &after, &rows); err != nil {
		t.Fatal(err)
	}
	if left != 0 || after != before+1 || rows != 1 {
		t.Fatalf("after the reset: %d authenticators, session version %d → %d, %d audit rows", left, before, after, rows)
	}
	if _, err := ticketctl(t, "user", "reset-two-factor", "--email", "money@acme.test"); err == nil {
		t.Fatal("a reset of nothing succeeded")
	}
}

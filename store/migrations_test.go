package store_test

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"

	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/store/migrations"
	"github.com/ticketsales/ticketsales/test/testenv"

	"github.com/uptrace/bun/dialect/pgdialect"
)

// Migration 15 reports again the old test payments nobody kept track of:
// paid, neither applied to their order nor returned nor on record.
func TestMigrationReportsDroppedTestPaymentsAgain(t *testing.T) {
	d := newDemo(t)
	ctx := context.Background()
	o, _ := d.gaOrder(t, 1, time.Now().Add(time.Hour))
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := d.DB.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	add := func(id string, orderID, refunded int64) {
		exec(`INSERT INTO gateway_payments (id, order_id, amount, currency, description, status, refunded, reported_at)
			VALUES (?, ?, 100, 'EUR', 'x', 'paid', ?, now())`, id, orderID, refunded)
	}
	add("dropped", 999999, 0)
	add("applied", o.ID, 0)
	exec("UPDATE orders SET payment_id = 'applied', paid_at = now() WHERE id = ?", o.ID)
	add("returned", 999998, 100)
	add("recorded", 999997, 0)
	exec(`INSERT INTO payments (gateway, id, order_id, amount, currency) VALUES ('test', 'recorded', 999997, 100, 'EUR')`)

	sql, err := migrations.FS.ReadFile("20261123000015_unreported_test_payments.tx.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	exec(string(sql))

	rows, err := d.DB.QueryContext(ctx, "SELECT id FROM gateway_payments WHERE reported_at IS NULL ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var unreported []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		unreported = append(unreported, id)
	}
	if len(unreported) != 1 || unreported[0] != "dropped" {
		t.Fatalf("payments to report again = %v, want [dropped]", unreported)
	}
}

// Migration 23 takes checkin from keys made when it was a default scope
// (they could admit tickets and read orders), and from then on a key with
// checkin carries nothing else.
func TestMigrationSeparatesDoorKeys(t *testing.T) {
	d := newDemo(t)
	ctx := context.Background()
	exec := func(q string, args ...any) error {
		_, err := d.DB.ExecContext(ctx, q, args...)
		return err
	}
	if err := exec(`UPDATE api_keys SET scopes = ARRAY['checkin', 'orders:read'] WHERE id = ?`, d.keyID); err == nil {
		t.Fatal("a key with checkin and orders:read was stored")
	}
	for _, c := range []string{"api_keys_door_limits", "api_keys_checkin_alone"} {
		if err := exec("ALTER TABLE api_keys DROP CONSTRAINT " + c); err != nil {
			t.Fatal(err)
		}
	}
	if err := exec(`UPDATE api_keys SET scopes = ARRAY['catalog:read', 'checkin', 'orders:read'] WHERE id = ?`, d.keyID); err != nil {
		t.Fatal(err)
	}
	sql, err := migrations.FS.ReadFile("20261127000023_door_keys.tx.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	if err := exec(string(sql)); err != nil {
		t.Fatal(err)
	}
	var scopes []string
	if err := d.DB.NewRaw("SELECT scopes FROM api_keys WHERE id = ?", d.keyID).Scan(ctx, pgdialect.Array(&scopes)); err != nil {
		t.Fatal(err)
	}
	if strings.Join(scopes, ",") != "catalog:read,orders:read" {
		t.Fatalf("the mixed key's scopes after the migration: %v", scopes)
	}
}

// Migration 37 keeps the conflicts listed before it as two_doors, paired
// with the admission they found inside: an offline entry settled
// already_checked_in after another device's admission, or another gate's
// when the admission named no device; not one at the admission's own gate.
func TestMigrationKeepsConflictsListed(t *testing.T) {
	d := newDemo(t)
	ctx := context.Background()
	o, _ := d.gaOrder(t, 1, time.Now().Add(time.Hour))
	if _, _, err := store.MarkOrderPaid(ctx, d.DB, o.ID, "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := store.IssueTickets(ctx, d.DB, o.ID, func(bool) string { return "2000000000017" }); err != nil {
		t.Fatal(err)
	}
	var ticket int64
	if err := d.DB.NewRaw("SELECT id FROM tickets WHERE order_id = ?", o.ID).Scan(ctx, &ticket); err != nil {
		t.Fatal(err)
	}
	scan := func(gate, device, outcome string, offline bool) int64 {
		t.Helper()
		var id int64
		if err := d.DB.NewRaw(`INSERT INTO check_ins (company_id, event_id, ticket_id, barcode, gate, device_id, outcome, api_key_id,
				scanned_at, offline, is_test) VALUES (?, ?, ?, '2000000000017', ?, ?, ?, ?, now(), ?, true) RETURNING id`,
			d.company, o.EventID, ticket, gate, device, outcome, d.keyID, offline).Scan(ctx, &id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	admitted := scan("North", "", "admitted", false)
	copied := scan("East", "dev-B", "already_checked_in", true)
	sameGate := scan("North", "dev-N", "already_checked_in", true)
	if _, err := d.DB.ExecContext(ctx, "ALTER TABLE check_ins DROP COLUMN door_outcome, DROP COLUMN conflict, DROP COLUMN conflict_with"); err != nil {
		t.Fatal(err)
	}
	sql, err := migrations.FS.ReadFile("20261130000037_check_in_conflicts.tx.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.DB.ExecContext(ctx, string(sql)); err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		ID           int64   `bun:"id"`
		Conflict     *string `bun:"conflict"`
		ConflictWith *int64  `bun:"conflict_with"`
	}
	if err := d.DB.NewRaw("SELECT id, conflict, conflict_with FROM check_ins ORDER BY id").Scan(ctx, &rows); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		kept := r.Conflict != nil && *r.Conflict == "two_doors" && r.ConflictWith != nil && *r.ConflictWith == admitted
		if (r.ID == copied) != kept || r.ID != copied && (r.Conflict != nil || r.ConflictWith != nil) {
			t.Errorf("scan %d (admitted %d, copy %d, same gate %d): %+v", r.ID, admitted, copied, sameGate, r)
		}
	}
}

// migrateTo applies the migrations named up to last (in name order) to
// db, a database or a schema of its own holding the schema before them.
func migrateTo(t *testing.T, db *bun.DB, last string) {
	t.Helper()
	ctx := context.Background()
	files := fstest.MapFS{}
	entries, err := fs.ReadDir(migrations.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() > last {
			continue
		}
		b, err := migrations.FS.ReadFile(e.Name())
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = &fstest.MapFile{Data: b}
	}
	if _, err := store.MigrateFS(ctx, db, files); err != nil {
		t.Fatalf("migrate to %s: %v", last, err)
	}
}

// Migration 37 adds the check of conflict kinds without checking the
// rows there are (that would hold check_ins locked for a whole scan of
// it), and 39 validates it without that lock; 39 also indexes the scans
// that point at another (each check_ins row deleted looks them up) and
// an event's conflicts, both partial.
func TestMigrationChecksAndIndexesConflicts(t *testing.T) {
	ctx := context.Background()
	_, url := testenv.DB(t)
	old, err := store.Open(ctx, url+"&search_path=before39")
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if _, err := old.ExecContext(ctx, "CREATE SCHEMA before39"); err != nil {
		t.Fatal(err)
	}
	migrateTo(t, old, "20261130000036_zzz")
	if _, err := old.ExecContext(ctx, `INSERT INTO check_ins (company_id, event_id, barcode, gate, outcome, api_key_id, scanned_at)
		VALUES (1, 1, '4006381333931', 'North', 'unknown', 1, now())`); err != nil {
		t.Fatal(err)
	}
	validated := func() bool {
		t.Helper()
		var ok bool
		if err := old.NewRaw(`SELECT convalidated FROM pg_constraint
			WHERE conrelid = 'check_ins'::regclass AND conname = 'check_ins_conflict_check'`).Scan(ctx, &ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	migrateTo(t, old, "20261130000038_zzz")
	if validated() {
		t.Fatal("migration 37 checked the rows of check_ins at once")
	}
	if _, err := old.ExecContext(ctx, "UPDATE check_ins SET conflict = 'copy'"); err == nil {
		t.Fatal("a conflict of no kind was stored after migration 37")
	}
	migrateTo(t, old, "20261130000039_zzz")
	if !validated() {
		t.Fatal("migration 39 did not validate the conflict kinds")
	}
	var indexes []struct {
		Name  string `bun:"name"`
		Def   string `bun:"def"`
		Valid bool   `bun:"valid"`
	}
	if err := old.NewRaw(`SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS def, i.indisvalid AS valid
		FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		WHERE i.indrelid = 'check_ins'::regclass AND c.relname IN ('check_ins_conflict_with', 'check_ins_event_conflicts')
		ORDER BY c.relname`).Scan(ctx, &indexes); err != nil {
		t.Fatal(err)
	}
	if len(indexes) != 2 || !indexes[0].Valid || !indexes[1].Valid ||
		!strings.HasSuffix(indexes[0].Def, "(conflict_with) WHERE (conflict_with IS NOT NULL)") ||
		!strings.HasSuffix(indexes[1].Def, "(event_id, scanned_at, id) WHERE (conflict IS NOT NULL)") {
		t.Fatalf("indexes of conflicts after migration 39: %+v", indexes)
	}
}

// Migration 38 makes each address a person with the password its one user
// had: users with a password joined, invitations not, the team page's last
// sign-in kept from the addresses, which become the person's. From then
// on an address may be a user of two companies, but not twice of one.
func TestMigrationMakesPeopleOfUsers(t *testing.T) {
	ctx := context.Background()
	_, url := testenv.DB(t)
	// The schema before 38, in a schema of its own in the test database.
	old, err := store.Open(ctx, url+"&search_path=before38")
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if _, err := old.ExecContext(ctx, "CREATE SCHEMA before38"); err != nil {
		t.Fatal(err)
	}
	const people = "20261130000038_cabinet_people.tx.up.sql"
	migrateTo(t, old, "20261130000037_zzz")
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := old.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`INSERT INTO companies (id, name) VALUES (1, 'A'), (2, 'B')`)
	exec(`INSERT INTO cabinet_users (id, company_id, email, role, password_hash, disabled_at, updated_at) VALUES
		(1, 1, 'owner@a.test', 'owner', 'hash-1', NULL, '2026-11-01T10:00:00Z'),
		(2, 1, 'invited@a.test', 'support', NULL, NULL, '2026-11-02T10:00:00Z'),
		(3, 1, 'gone@a.test', 'finance', 'hash-3', '2026-11-03T10:00:00Z', '2026-11-03T10:00:00Z')`)
	exec(`INSERT INTO cabinet_known_addresses (user_id, address, signed_in_at) VALUES
		(1, '192.0.2.1', '2026-11-05T10:00:00Z'), (1, '192.0.2.2', '2026-11-06T10:00:00Z')`)
	migrateTo(t, old, people)

	type row struct {
		Email        string     `bun:"email"`
		PasswordHash *string    `bun:"password_hash"`
		JoinedAt     *time.Time `bun:"joined_at"`
		LastSignInAt *time.Time `bun:"last_sign_in_at"`
	}
	var rows []row
	if err := old.NewRaw(`SELECT u.email, p.password_hash, u.joined_at, u.last_sign_in_at
		FROM cabinet_users u JOIN cabinet_people p USING (email) ORDER BY u.id`).Scan(ctx, &rows); err != nil {
		t.Fatal(err)
	}
	at := func(s string) time.Time { v, _ := time.Parse(time.RFC3339, s); return v }
	if len(rows) != 3 || rows[0].PasswordHash == nil || *rows[0].PasswordHash != "hash-1" || rows[0].JoinedAt == nil ||
		!rows[0].JoinedAt.Equal(at("2026-11-01T10:00:00Z")) || rows[0].LastSignInAt == nil || !rows[0].LastSignInAt.Equal(at("2026-11-06T10:00:00Z")) ||
		rows[1].PasswordHash != nil || rows[1].JoinedAt != nil || rows[1].LastSignInAt != nil ||
		rows[2].PasswordHash == nil || *rows[2].PasswordHash != "hash-3" || rows[2].JoinedAt == nil {
		t.Fatalf("after migration 38: %+v", rows)
	}
	var known []string
	if err := old.NewRaw("SELECT email || ' ' || address FROM cabinet_known_addresses ORDER BY address").Scan(ctx, &known); err != nil {
		t.Fatal(err)
	}
	if strings.Join(known, ",") != "owner@a.test 192.0.2.1,owner@a.test 192.0.2.2" {
		t.Fatalf("known addresses after migration 38: %v", known)
	}
	exec(`INSERT INTO cabinet_users (id, company_id, email, role) VALUES (4, 2, 'owner@a.test', 'developer')`)
	if _, err := old.ExecContext(ctx, `INSERT INTO cabinet_users (id, company_id, email, role) VALUES (5, 1, 'owner@a.test', 'developer')`); err == nil {
		t.Fatal("an address became a user of one company twice")
	}
	if _, err := old.ExecContext(ctx, `INSERT INTO cabinet_users (id, company_id, email, role) VALUES (6, 2, 'nobody@a.test', 'developer')`); err == nil {
		t.Fatal("a user of an address that is no person")
	}
}

// TestMigrateMarksOnlyWhatSucceeded: a migration is recorded as applied
// once it ran, not before. One outside a transaction that failed half-way
// (its first statement made, its second failed) is not recorded: the next
// start runs it again from its first statement, and it is recorded then.
// A file without --bun:split is one query, which Postgres runs whole or
// not at all.
func TestMigrateMarksOnlyWhatSucceeded(t *testing.T) {
	ctx := context.Background()
	_, url := testenv.DB(t)
	db, err := store.Open(ctx, url+"&search_path=marks")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE SCHEMA marks"); err != nil {
		t.Fatal(err)
	}
	files := fstest.MapFS{
		"20000101000001_first.up.sql": {Data: []byte("CREATE TABLE first (id int);\n")},
		"20000101000002_half.up.sql": {Data: []byte("CREATE TABLE IF NOT EXISTS half (id int);\n--bun:split\n" +
			"INSERT INTO half VALUES (1 / (SELECT count(*) FROM first));\n")},
		"20000101000003_whole.up.sql": {Data: []byte("CREATE TABLE whole (id int);\nSELECT 1 / 0;\n")},
	}
	applied := func() string {
		t.Helper()
		var names []string
		if err := db.NewRaw("SELECT name FROM bun_migrations ORDER BY name").Scan(ctx, &names); err != nil {
			t.Fatal(err)
		}
		return strings.Join(names, ",")
	}
	exists := func(table string) bool {
		t.Helper()
		var ok bool
		if err := db.NewRaw("SELECT to_regclass(?) IS NOT NULL", table).Scan(ctx, &ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if _, err := store.MigrateFS(ctx, db, files); err == nil {
		t.Fatal("a failing migration migrated")
	}
	if got := applied(); got != "20000101000001" || !exists("half") {
		t.Fatalf("after the half-way failure: applied %q (want the first only), half made: %v", got, exists("half"))
	}
	// Fixed (a row for the division), the next start runs it again whole.
	if _, err := db.ExecContext(ctx, "INSERT INTO first VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	if _, err := store.MigrateFS(ctx, db, files); err == nil {
		t.Fatal("the failing third migration migrated")
	}
	var rows int
	if err := db.NewRaw("SELECT count(*) FROM half").Scan(ctx, &rows); err != nil || rows != 1 {
		t.Fatalf("the half-way migration run again: %d rows, %v", rows, err)
	}
	if got := applied(); got != "20000101000001,20000101000002" || exists("whole") {
		t.Fatalf("after the third failed: applied %q, its table made: %v", got, exists("whole"))
	}
	files["20000101000003_whole.up.sql"] = &fstest.MapFile{Data: []byte("CREATE TABLE whole (id int);\nSELECT 1;\n")}
	if names, err := store.MigrateFS(ctx, db, files); err != nil || strings.Join(names, ",") != "20000101000003" {
		t.Fatalf("the fixed third migration: %v %v", names, err)
	}
}

// TestIndexMigrationsRunAgain: the migrations that build indexes
// concurrently, outside a transaction, can run again from their first
// statement (a start after one was cut short runs them again): an index
// left invalid by a cancelled build is built anew, valid; the rest is left
// as it was.
func TestIndexMigrationsRunAgain(t *testing.T) {
	d := newDemo(t)
	ctx := context.Background()
	// A build that failed half-way leaves an invalid index under the name:
	// here a unique one over two orders of one buyer.
	d.gaOrder(t, 1, time.Now().Add(time.Hour))
	d.gaOrder(t, 1, time.Now().Add(time.Hour))
	if _, err := d.DB.ExecContext(ctx, "DROP INDEX orders_company_email"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.DB.ExecContext(ctx, `CREATE UNIQUE INDEX CONCURRENTLY orders_company_email
		ON orders (company_id, lower(customer_email) text_pattern_ops)`); err == nil {
		t.Fatal("the unique index over two orders of one buyer was built")
	}
	type index struct {
		Name   string `bun:"name"`
		Valid  bool   `bun:"valid"`
		Unique bool   `bun:"uniq"`
	}
	indexes := func() map[string]index {
		t.Helper()
		var rows []index
		if err := d.DB.NewRaw(`SELECT c.relname AS name, i.indisvalid AS valid, i.indisunique AS uniq FROM pg_index i
			JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname IN ('reservations_unstarted', 'orders_company_email', 'orders_company_name',
			'orders_company_name_last', 'orders_company_payment_id', 'orders_sandbox_created', 'check_ins_conflict_with', 'check_ins_event_conflicts',
			'orders_company_reference', 'orders_metadata', 'event_seats_unsold_rank')`).
			Scan(ctx, &rows); err != nil {
			t.Fatal(err)
		}
		out := map[string]index{}
		for _, r := range rows {
			out[r.Name] = r
		}
		return out
	}
	if ix := indexes(); len(ix) != 11 || ix["orders_company_email"].Valid {
		t.Fatalf("before running again: %+v", ix)
	}
	files := fstest.MapFS{}
	for _, name := range []string{"20261121000011_reservations_unstarted_index.up.sql", "20261128000027_cabinet_orders_search.up.sql",
		"20261130000039_check_in_conflict_indexes.up.sql", "20261207000047_order_reference.up.sql",
		"20261208000048_unsold_seats_by_rank.up.sql"} {
		b, err := migrations.FS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = &fstest.MapFile{Data: b}
	}
	// Twice, each time as never run (a table of runs of its own).
	for run := range 2 {
		ms := migrate.NewMigrations()
		if err := ms.Discover(files); err != nil {
			t.Fatal(err)
		}
		m := migrate.NewMigrator(d.DB, ms, migrate.WithTableName(fmt.Sprintf("again_%d", run)),
			migrate.WithLocksTableName(fmt.Sprintf("again_%d_locks", run)))
		if err := m.Init(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Migrate(ctx); err != nil {
			t.Fatalf("run %d of the index migrations: %v", run, err)
		}
		ix := indexes()
		for name, i := range ix {
			if !i.Valid || i.Unique {
				t.Errorf("run %d: index %s: %+v", run, name, i)
			}
		}
		if len(ix) != 11 {
			t.Fatalf("run %d: %d indexes: %+v", run, len(ix), ix)
		}
	}
}

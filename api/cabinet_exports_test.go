package api_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/export"
	"github.com/ticketsales/ticketsales/internal/organizer"
	"github.com/ticketsales/ticketsales/store"
)

// exportGalaTitle is an event's title as organizers write them: Russian,
// 80 characters.
const exportGalaTitle = "Гала-концерт «Лебединое озеро»: избранные сцены балетов Чайковского, премьера 20"

// table is an export read back: its header and rows, each row keyed by
// the header.
type table struct {
	Header []string
	Rows   []map[string]string
}

func (tb table) col(name string) []string {
	var out []string
	for _, r := range tb.Rows {
		out = append(out, r[name])
	}
	return out
}

// readExport downloads path and reads it in its format: XLSX with
// excelize (raw values: numbers unformatted, dates as serials), CSV for
// Excel with ';' after its BOM, plain CSV with ','. It checks the status,
// the content type and the BOM.
func readExport(t *testing.T, b *browserless, path string) table {
	t.Helper()
	p := b.get(path)
	if p.Status != http.StatusOK {
		t.Fatalf("%s: %d %.300s", path, p.Status, p.Body)
	}
	u, _ := url.Parse(path)
	var rows [][]string
	switch {
	case strings.HasSuffix(u.Path, ".xlsx"):
		if ct := p.Header.Get("Content-Type"); ct != export.XLSX.ContentType() {
			t.Fatalf("%s: content type %q", path, ct)
		}
		f, err := excelize.OpenReader(strings.NewReader(p.Body))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		defer f.Close()
		if rows, err = f.GetRows(f.GetSheetName(0), excelize.Options{RawCellValue: true}); err != nil {
			t.Fatal(err)
		}
	case strings.HasSuffix(u.Path, "-excel.csv"):
		if !strings.HasPrefix(p.Body, export.BOM) {
			t.Fatalf("%s: no byte order mark: %.40q", path, p.Body)
		}
		r := csv.NewReader(strings.NewReader(strings.TrimPrefix(p.Body, export.BOM)))
		r.Comma = ';'
		var err error
		if rows, err = r.ReadAll(); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	default:
		if strings.HasPrefix(p.Body, export.BOM) {
			t.Fatalf("%s: a byte order mark in the programs' CSV", path)
		}
		var err error
		if rows, err = csv.NewReader(strings.NewReader(p.Body)).ReadAll(); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	if !strings.Contains(p.Header.Get("Content-Disposition"), "attachment") {
		t.Errorf("%s: not a download: %q", path, p.Header.Get("Content-Disposition"))
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no header", path)
	}
	tb := table{Header: rows[0]}
	for _, r := range rows[1:] {
		m := map[string]string{}
		for i, h := range rows[0] {
			if i < len(r) {
				m[h] = r[i]
			}
		}
		tb.Rows = append(tb.Rows, m)
	}
	return tb
}

// money units as each format writes them: XLSX's raw number, the Excel
// CSV's decimal comma, the plain CSV's dot.
func unitsIn(format string, minor int64) string {
	s := export.Units(minor)
	switch format {
	case "excel":
		return strings.Replace(s, ".", ",", 1)
	case "xlsx":
		v, _ := strconv.ParseFloat(s, 64)
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return s
}

// exportFormats are the three downloads of an export at base (its path
// without the ending), with the header names each uses.
var exportFormats = []struct {
	name, suffix string
	titles       bool // XLSX and Excel CSV have titles; plain CSV snake_case keys
}{{"xlsx", ".xlsx", true}, {"excel", "-excel.csv", true}, {"csv", ".csv", false}}

// TestCabinetExports: the orders list's orders and their tickets, the
// check-in page's scans and the sales report download as XLSX, CSV for
// Excel and plain CSV; each holds what its page shows (the same orders,
// with its filters), in Russian, amounts in millions as numbers, a
// partially refunded order's refund, a formula-like buyer's name as text.
// A door keeper's scans carry no buyer's e-mail; a developer cannot
// export orders; another company's orders and events are in no export.
func TestCabinetExports(t *testing.T) {
	f := newFixture(t)
	withOutbox(t, f)
	f.StartWorker(t)
	ctx := context.Background()
	if n := utf8.RuneCountInString(exportGalaTitle); n != 80 {
		t.Fatalf("the title has %d characters", n)
	}
	f.Import(t, f.companyA, []byte(fmt.Sprintf(`{"cities": [{"ref": "msk", "name": "Москва"}],
	  "venues": [{"ref": "bolshoi", "name": "Большой театр", "city": "msk", "timezone": "Europe/Moscow"}],
	  "events": [{"ref": "gala", "title": %q, "slug": "gala", "status": "published", "starts_at": "2030-03-01T19:00:00+03:00",
	    "venue": "bolshoi", "fee": {"mode": "separate", "rate_bp": 500, "min_fee": 0},
	    "categories": [{"ref": "vip", "name": "Партер, VIP-ложа", "price": 123456789, "capacity": 20}]}]}`, exportGalaTitle)))
	var gala, companyB int64
	if err := f.DB.NewRaw("SELECT id FROM events WHERE slug = 'gala' AND company_id = ?", f.companyA).Scan(ctx, &gala); err != nil {
		t.Fatal(err)
	}
	if err := f.DB.NewRaw("SELECT company_id FROM events WHERE id = ?", f.foreignID).Scan(ctx, &companyB); err != nil {
		t.Fatal(err)
	}
	prod, _ := f.Key(t, f.companyA, apikey.Production)
	door, _ := f.Key(t, f.companyA, apikey.Production, apikey.ScopeCheckin)
	var cats struct{ Data []category }
	f.Get(t, fmt.Sprintf("/v1/events/%d/categories", gala), prod).Decode(t, &cats)
	buy := func(key string, event, category int64, n int, buyer string) order {
		t.Helper()
		res := f.Do(t, http.MethodPost, "/v1/orders", key, fmt.Sprintf(`{"event_id": %d, "items": [{"ticket_category_id": %d, "quantity": %d}],
			"customer": %s, "payment": "external"}`, event, category, n, buyer), idemKey(t))
		var ob orderBody
		res.Decode(t, &ob)
		if res.Status != http.StatusCreated {
			t.Fatalf("order: %d %s", res.Status, res.Body)
		}
		if res := f.confirm(t, key, ob.Data.ID, ob.Data.Amount.Amount); res.Status != http.StatusOK {
			t.Fatalf("confirm: %d %s", res.Status, res.Body)
		}
		return ob.Data
	}
	const annaEmail, evilEmail, foreignEmail = "anna.ivanova@example.ru", "trick@example.ru", "foreign.buyer@example.org"
	anna := buy(prod, gala, cats.Data[0].ID, 2, `{"email": "`+annaEmail+`", "first_name": "Анна", "last_name": "Иванова-Петрова", "phone": "+7 912 000-11-22"}`)
	evil := buy(prod, gala, cats.Data[0].ID, 1, `{"email": "`+evilEmail+`", "first_name": "=HYPERLINK(\"http://evil.example\";\"Жми\")", "last_name": "Смирнов", "phone": "+7 900 111-22-33"}`)
	var foreignCats struct{ Data []category }
	f.Get(t, fmt.Sprintf("/v1/events/%d/categories", f.foreignID), f.keyB).Decode(t, &foreignCats)
	foreign := buy(f.keyB, f.foreignID, foreignCats.Data[0].ID, 1, `{"email": "`+foreignEmail+`", "first_name": "Чужой", "last_name": "Покупатель", "phone": "+7 900 000-00-00"}`)
	if anna.Amount.Amount < 100_000_000 {
		t.Fatalf("Anna's order is %d: not millions", anna.Amount.Amount)
	}

	// One of Anna's tickets is refunded (the order is partially refunded),
	// the other admitted at the door; an unknown barcode is refused.
	var ts struct{ Data []ticket }
	f.Get(t, fmt.Sprintf("/v1/orders/%d/tickets", anna.ID), prod).Decode(t, &ts)
	slices.SortFunc(ts.Data, func(a, b ticket) int { return strings.Compare(a.Number, b.Number) })
	var rb refundBody
	if res := f.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/refund", anna.ID), prod,
		fmt.Sprintf(`{"ticket_ids": [%d], "reason": "не сможет прийти"}`, ts.Data[0].ID), idemKey(t)); res.Status != http.StatusCreated {
		t.Fatalf("refund: %d %s", res.Status, res.Body)
	} else {
		res.Decode(t, &rb)
	}
	if rb.Data.Status != "completed" {
		t.Fatalf("refund: %+v", rb.Data)
	}
	if got := f.scan(t, door, gala, ts.Data[1].Barcode, "Главный вход"); got.Data.Outcome != "admitted" {
		t.Fatalf("scan: %+v", got.Data)
	}
	if got := f.scan(t, door, gala, "0000000000000", "Главный вход"); got.Data.Outcome == "admitted" {
		t.Fatalf("unknown scan: %+v", got.Data)
	}

	owner := newBrowserless(t, f.URL, nil)
	owner.setPassword(cabinetUser(t, f.Stack, f.URL, f.companyA, "owner@a.test"))

	// The door desk admits the other buyer's ticket by hand, then undoes
	// the admission.
	var evilTicket int64
	if err := f.DB.NewRaw("SELECT id FROM tickets WHERE order_id = ?", evil.ID).Scan(ctx, &evilTicket); err != nil {
		t.Fatal(err)
	}
	deskForm := func(kv ...string) url.Values {
		v := url.Values{"event": {strconv.FormatInt(gala, 10)}, "ticket": {strconv.FormatInt(evilTicket, 10)}}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	if p := owner.post("/cabinet/door/admit", deskForm("gate", "Касса", "reason", "сканер сломался")); p.Status != http.StatusOK {
		t.Fatalf("manual admission: %d %s", p.Status, p.Body)
	}
	if p := owner.post("/cabinet/door/undo", deskForm("reason", "впустили по ошибке")); p.Status != http.StatusOK {
		t.Fatalf("undo: %d %s", p.Status, p.Body)
	}

	// The orders list's filter, and the page's links with it.
	filter := url.Values{"event": {strconv.FormatInt(gala, 10)}}
	list := owner.get("/cabinet/orders?" + filter.Encode())
	onPage := orderIDsOn(t, list)
	if want := []int64{evil.ID, anna.ID}; !slices.Equal(onPage, want) {
		t.Fatalf("the list shows %v, want %v", onPage, want)
	}
	for _, fm := range exportFormats {
		for _, what := range []string{"orders", "attendees"} {
			href := "/cabinet/export/" + what + fm.suffix + "?" + filter.Encode()
			if !strings.Contains(list.Body, `href="`+strings.ReplaceAll(href, "&", "&amp;")+`"`) {
				t.Errorf("the orders list has no link to %s", href)
			}
		}
	}

	for _, fm := range exportFormats {
		t.Run("orders "+fm.name, func(t *testing.T) {
			k := func(title, key string) string {
				if fm.titles {
					return title
				}
				return key
			}
			tb := readExport(t, owner, "/cabinet/export/orders"+fm.suffix+"?"+filter.Encode())
			var ids []int64
			for _, s := range tb.col(k("Order", "order_id")) {
				id, _ := strconv.ParseInt(s, 10, 64)
				ids = append(ids, id)
			}
			if !slices.Equal(ids, onPage) {
				t.Fatalf("the export has orders %v, the page %v", ids, onPage)
			}
			evilRow, annaRow := tb.Rows[0], tb.Rows[1]
			if annaRow[k("Event", "event")] != exportGalaTitle || annaRow[k("Buyer", "buyer")] != "Анна Иванова-Петрова" ||
				annaRow[k("E-mail", "email")] != annaEmail {
				t.Errorf("Anna's row: %v", annaRow)
			}
			if annaRow[k("Amount", "amount")] != unitsIn(fm.name, anna.Amount.Amount) ||
				annaRow[k("Refunded", "refunded")] != unitsIn(fm.name, rb.Data.Amount.Amount) ||
				annaRow[k("Face value", "face_value")] != unitsIn(fm.name, anna.Total.Amount) ||
				annaRow[k("Tickets", "tickets")] != "2" || annaRow[k("Tickets refunded", "tickets_refunded")] != "1" ||
				annaRow[k("Status", "status")] != "Partly refunded" {
				t.Errorf("Anna's money: %v (amount %d, refunded %d)", annaRow, anna.Amount.Amount, rb.Data.Amount.Amount)
			}
			if !strings.Contains(list.Body, money(anna.Amount.Amount)) {
				t.Errorf("the list does not show %s", money(anna.Amount.Amount))
			}
			name := evilRow[k("Buyer", "buyer")]
			if fm.name == "xlsx" && name != `=HYPERLINK("http://evil.example";"Жми") Смирнов` ||
				fm.name != "xlsx" && !strings.HasPrefix(name, `'=HYPERLINK(`) {
				t.Errorf("the formula-like name is %q", name)
			}
			var created string
			for _, h := range tb.Header {
				if strings.HasPrefix(h, "Created") || h == "created_at" {
					created = h
				}
			}
			if fm.titles && created != "Created (UTC)" {
				t.Errorf("the created column is %q: no zone", created)
			}
			for _, r := range tb.Rows {
				if r[k("E-mail", "email")] == foreignEmail {
					t.Error("another company's order is exported")
				}
			}
		})
		t.Run("attendees "+fm.name, func(t *testing.T) {
			k := func(title, key string) string {
				if fm.titles {
					return title
				}
				return key
			}
			tb := readExport(t, owner, "/cabinet/export/attendees"+fm.suffix+"?"+filter.Encode())
			if len(tb.Rows) != 3 {
				t.Fatalf("%d tickets, want 3: %v", len(tb.Rows), tb.Rows)
			}
			byNumber := map[string]map[string]string{}
			for _, r := range tb.Rows {
				byNumber[r[k("Ticket", "ticket_number")]] = r
				if r[k("Price", "price")] != unitsIn(fm.name, 123456789) || r[k("Category", "category")] != "Партер, VIP-ложа" ||
					r[k("Event", "event")] != exportGalaTitle {
					t.Errorf("ticket row %v", r)
				}
			}
			refunded, admitted := byNumber[ts.Data[0].Number], byNumber[ts.Data[1].Number]
			if refunded == nil || admitted == nil || refunded[k("Ticket status", "ticket_status")] != "refunded" ||
				admitted[k("Ticket status", "ticket_status")] != "checked in" || admitted[k("Gate", "gate")] != "Главный вход" ||
				admitted[k("Admitted at (event's time zone)", "admitted_at")] == "" || refunded[k("Admitted at (event's time zone)", "admitted_at")] != "" ||
				admitted[k("Holder (buyer)", "buyer")] != "Анна Иванова-Петрова" || admitted[k("Event's time zone", "time_zone")] != "Europe/Moscow" {
				t.Errorf("Anna's tickets: %v / %v", refunded, admitted)
			}
			if fm.name == "csv" && !strings.HasSuffix(admitted["admitted_at"], "+03:00") {
				t.Errorf("admitted at %q: not in Moscow time", admitted["admitted_at"])
			}
			if slices.Contains(tb.Header, "barcode") || slices.Contains(tb.Header, "Barcode") {
				t.Error("barcodes are exported")
			}
		})
	}

	// Filters: the search and the status narrow the export as the list.
	for q, want := range map[string][]string{
		url.Values{"q": {"Анна"}}.Encode():                                        {strconv.FormatInt(anna.ID, 10)},
		url.Values{"status": {"partially_refunded"}}.Encode():                     {strconv.FormatInt(anna.ID, 10)},
		url.Values{"event": {strconv.FormatInt(f.ids["swan-lake"], 10)}}.Encode(): nil,
	} {
		if got := readExport(t, owner, "/cabinet/export/orders.csv?"+q).col("order_id"); !slices.Equal(got, want) {
			t.Errorf("orders of %s: %v, want %v", q, got, want)
		}
	}
	if p := owner.get("/cabinet/export/orders.xlsx?status=nonsense"); p.Status != http.StatusUnprocessableEntity {
		t.Errorf("a bad filter: %d", p.Status)
	}
	// Another company's event is not there.
	for _, path := range []string{"/cabinet/export/orders.xlsx", "/cabinet/export/attendees.csv", "/cabinet/export/checkins-excel.csv", "/cabinet/export/report.xlsx"} {
		if p := owner.get(fmt.Sprintf("%s?event=%d", path, f.foreignID)); p.Status != http.StatusNotFound {
			t.Errorf("%s of company B's event: %d", path, p.Status)
		}
	}

	// Check-ins: every scan, in the venue's time, with the buyer for
	// those who read orders; a door keeper gets no buyer's data.
	checkin := owner.get(fmt.Sprintf("/cabinet/checkin?event=%d", gala))
	if !strings.Contains(checkin.Body, fmt.Sprintf(`href="/cabinet/export/checkins.xlsx?event=%d"`, gala)) {
		t.Error("the check-in page has no link to its export")
	}
	doorUser := newBrowserless(t, f.URL, nil)
	doorUser.accept(cabinetUserAs(t, f.Stack, f.URL, f.companyA, "door@a.test", organizer.RoleDoor))
	for _, fm := range exportFormats {
		path := fmt.Sprintf("/cabinet/export/checkins%s?event=%d", fm.suffix, gala)
		t.Run("checkins "+fm.name, func(t *testing.T) {
			k := func(title, key string) string {
				if fm.titles {
					return title
				}
				return key
			}
			tb := readExport(t, owner, path)
			if len(tb.Rows) != 4 {
				t.Fatalf("%d scans, want 4: %v", len(tb.Rows), tb.Rows)
			}
			yes, no := "yes", "no"
			if fm.name == "csv" {
				yes, no = "true", "false"
			}
			in, unknown, manual, undo := tb.Rows[0], tb.Rows[1], tb.Rows[2], tb.Rows[3]
			if in[k("Ticket", "ticket_number")] != ts.Data[1].Number || in[k("Outcome", "outcome")] != "admitted" ||
				in[k("Outcome in words", "outcome_words")] != "admitted" || in[k("Gate", "gate")] != "Главный вход" || in[k("E-mail", "email")] != annaEmail ||
				in[k("Buyer", "buyer")] != "Анна Иванова-Петрова" || in[k("Category", "category")] != "Партер, VIP-ложа" ||
				in[k("Admission undone", "undone")] != no || in[k("Door desk user", "desk_user")] != "" || in[k("Door desk reason", "reason")] != "" ||
				in[k("Direction", "direction")] != "in" {
				t.Errorf("the admission: %v", in)
			}
			if unknown[k("Outcome in words", "outcome_words")] != "refused: unknown" || unknown[k("Ticket", "ticket_number")] != "" ||
				unknown[k("Admission undone", "undone")] != "" {
				t.Errorf("the unknown scan: %v", unknown)
			}
			// The door desk's: by whom and why; the admission marked
			// undone; the undo no pass through the door.
			if manual[k("Outcome", "outcome")] != "admitted" || manual[k("Admission undone", "undone")] != yes ||
				manual[k("Door desk user", "desk_user")] != "owner@a.test" || manual[k("Door desk reason", "reason")] != "сканер сломался" ||
				manual[k("Gate", "gate")] != "Касса" || manual[k("E-mail", "email")] != evilEmail {
				t.Errorf("the manual admission: %v", manual)
			}
			if undo[k("Outcome", "outcome")] != "undone" || undo[k("Outcome in words", "outcome_words")] != "admission undone at the door desk" ||
				undo[k("Door desk user", "desk_user")] != "owner@a.test" || undo[k("Door desk reason", "reason")] != "впустили по ошибке" ||
				undo[k("Direction", "direction")] != "" || undo[k("Admission undone", "undone")] != "" {
				t.Errorf("the undo: %v", undo)
			}
			if fm.titles && !slices.Contains(tb.Header, "Scanned (Europe/Moscow, the device's clock)") {
				t.Errorf("header %v: no zone", tb.Header)
			}
			if fm.name == "csv" && !strings.HasSuffix(in["scanned_at"], "+03:00") {
				t.Errorf("scanned at %q: not Moscow time", in["scanned_at"])
			}
			p := doorUser.get(path)
			dt := readExport(t, doorUser, path)
			if len(dt.Rows) != 4 || dt.Rows[0][k("Ticket", "ticket_number")] != ts.Data[1].Number ||
				dt.Rows[3][k("Door desk user", "desk_user")] != "owner@a.test" {
				t.Errorf("the door keeper's scans: %v", dt.Rows)
			}
			for _, h := range dt.Header {
				if h == k("E-mail", "email") || h == k("Buyer", "buyer") {
					t.Errorf("the door keeper's export has %q", h)
				}
			}
			if body := p.Body; strings.Contains(body, "anna.ivanova") || strings.Contains(body, "Иванова") {
				t.Error("the door keeper's export holds the buyer's data")
			}
		})
	}

	// The report: the rows of report.csv, in each format.
	machine := reportCSV(t, owner, "")
	for _, fm := range exportFormats {
		t.Run("report "+fm.name, func(t *testing.T) {
			tb := readExport(t, owner, "/cabinet/export/report"+fm.suffix)
			if len(tb.Rows) != len(machine) {
				t.Fatalf("%d rows, report.csv %d", len(tb.Rows), len(machine))
			}
			gross := "gross"
			if fm.titles {
				gross = "Gross, RUB"
			}
			total, _ := strconv.ParseFloat(machine[0]["gross"], 64)
			if total < 1_000_000 || tb.Rows[0][gross] != unitsIn(fm.name, int64(total*100+0.5)) {
				t.Errorf("total gross %q, report.csv %q", tb.Rows[0][gross], machine[0]["gross"])
			}
			found := false
			for _, r := range tb.Rows {
				if r[map[bool]string{true: "Event", false: "event"}[fm.titles]] == exportGalaTitle {
					found = true
				}
			}
			if !found {
				t.Error("the report has no row of the gala")
			}
		})
	}
	report := owner.get("/cabinet/report")
	if !strings.Contains(report.Body, `id="report-downloads"`) || !strings.Contains(report.Body, "/cabinet/export/report-excel.csv?") {
		t.Error("the report page has no export links")
	}

	// XLSX: money is a number cell, the formula-like name a text cell.
	p := owner.get("/cabinet/export/orders.xlsx?" + filter.Encode())
	x, err := excelize.OpenReader(bytes.NewReader([]byte(p.Body)))
	if err != nil {
		t.Fatal(err)
	}
	sheet := x.GetSheetName(0)
	cols, _ := x.GetRows(sheet)
	amountCol := slices.Index(cols[0], "Amount") + 1
	buyerCol := slices.Index(cols[0], "Buyer") + 1
	ac, _ := excelize.CoordinatesToCellName(amountCol, 3)
	bc, _ := excelize.CoordinatesToCellName(buyerCol, 2)
	if typ, _ := x.GetCellType(sheet, ac); typ != excelize.CellTypeNumber && typ != excelize.CellTypeUnset {
		t.Errorf("the amount cell %s is %v", ac, typ)
	}
	if shown, _ := x.GetCellValue(sheet, ac); !strings.Contains(shown, ",") || strings.Contains(shown, "E+") {
		t.Errorf("the amount shows %q", shown)
	}
	if fm, _ := x.GetCellFormula(sheet, bc); fm != "" {
		t.Errorf("the buyer's name is a formula: %q", fm)
	}
	x.Close()

	// Roles: support reads orders (and exports them); a developer and a
	// door keeper do not; finance has no check-in export.
	for role, want := range map[organizer.Role]map[string]int{
		organizer.RoleDeveloper: {"/cabinet/export/orders.xlsx": 403, "/cabinet/export/attendees.csv": 403, "/cabinet/export/checkins.csv": 403, "/cabinet/export/report.xlsx": 403},
		organizer.RoleDoor:      {"/cabinet/export/orders-excel.csv": 403, "/cabinet/export/attendees.xlsx": 403, "/cabinet/export/report.csv": 403},
		organizer.RoleSupport:   {"/cabinet/export/orders.csv": 200, "/cabinet/export/attendees.xlsx": 200, "/cabinet/export/report.csv": 403},
		organizer.RoleFinance:   {"/cabinet/export/orders.csv": 200, "/cabinet/export/checkins.xlsx": 403, "/cabinet/export/report-excel.csv": 200},
	} {
		b := newBrowserless(t, f.URL, nil)
		b.accept(cabinetUserAs(t, f.Stack, f.URL, f.companyA, "member-"+string(role)+"@a.test", role))
		for path, status := range want {
			if p := b.get(path); p.Status != status {
				t.Errorf("%s: %s answers %d, want %d", role, path, p.Status, status)
			}
		}
	}

	// Company B's owner exports B's order alone.
	bOwner := newBrowserless(t, f.URL, nil)
	bOwner.setPassword(cabinetUser(t, f.Stack, f.URL, companyB, "owner@b.test"))
	if got := readExport(t, bOwner, "/cabinet/export/orders.csv").col("order_id"); !slices.Equal(got, []string{strconv.FormatInt(foreign.ID, 10)}) {
		t.Errorf("company B's orders export: %v, want only %d", got, foreign.ID)
	}
	if got := readExport(t, bOwner, "/cabinet/export/attendees-excel.csv").col("E-mail"); !slices.Equal(got, []string{foreignEmail}) {
		t.Errorf("company B's attendees: %v", got)
	}
	if got := readExport(t, bOwner, fmt.Sprintf("/cabinet/export/checkins.xlsx?event=%d", f.foreignID)); len(got.Rows) != 0 {
		t.Errorf("company B's scans: %v", got.Rows)
	}
	if p := bOwner.get(fmt.Sprintf("/cabinet/export/checkins.csv?event=%d", gala)); p.Status != http.StatusNotFound {
		t.Errorf("company A's scans to company B: %d", p.Status)
	}
}

// TestCabinetExportFails: an export whose reading fails is never a file
// that looks complete: failing before its first byte (an XLSX workbook
// is written at its end; a CSV's first rows are buffered) it is an error
// page, 500, no attachment; failing mid-file (a CSV past its first
// rows) the response is cut, so the browser marks the download failed.
func TestCabinetExportFails(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	event := f.ids["swan-lake"]
	_, doorID := f.Key(t, f.companyA, apikey.Production, apikey.ScopeCheckin)
	// A batch of scans and more, then one the export cannot read (a
	// time out of range): the second batch's query fails.
	if _, err := f.DB.NewRaw(`INSERT INTO check_ins (company_id, event_id, barcode, gate, device_id, direction, outcome, api_key_id, scanned_at, is_test)
		SELECT ?, ?, lpad(g::text, 13, '0'), 'Северный вход', 'dev-1', 'in', 'unknown', ?, now(), false FROM generate_series(1, ?) g`,
		f.companyA, event, doorID, store.ExportBatch+100).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := f.DB.NewRaw(`INSERT INTO check_ins (company_id, event_id, barcode, gate, device_id, direction, outcome, api_key_id, scanned_at, is_test)
		VALUES (?, ?, '0000000000000', 'Северный вход', 'dev-1', 'in', 'unknown', ?, 'infinity', false)`,
		f.companyA, event, doorID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	owner := newBrowserless(t, f.URL, nil)
	owner.setPassword(cabinetUser(t, f.Stack, f.URL, f.companyA, "owner@a.test"))
	get := func(path string) (*http.Response, []byte, error) {
		t.Helper()
		res, err := owner.c.Get(owner.abs(path))
		if err != nil {
			return nil, nil, err
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		return res, body, err
	}
	base := fmt.Sprintf("/cabinet/export/checkins%%s?event=%d", event)
	// XLSX: nothing is sent before the workbook's end.
	res, body, err := get(fmt.Sprintf(base, ".xlsx"))
	if err != nil || res.StatusCode != http.StatusInternalServerError || res.Header.Get("Content-Disposition") != "" ||
		!strings.Contains(string(body), "Something went wrong") {
		t.Fatalf("the failed XLSX: %v %v %v\n%.300s", res.StatusCode, res.Header, err, body)
	}
	// CSV past its first rows: cut short.
	for _, suffix := range []string{".csv", "-excel.csv"} {
		res, body, err := get(fmt.Sprintf(base, suffix))
		if err == nil {
			t.Fatalf("the failed CSV %s reads whole: %d, %d bytes", suffix, res.StatusCode, len(body))
		}
	}
	// CSV failing in its first rows: an error page.
	if _, err := f.DB.NewRaw(`DELETE FROM check_ins WHERE scanned_at <> 'infinity'`).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{".csv", "-excel.csv"} {
		res, body, err := get(fmt.Sprintf(base, suffix))
		if err != nil || res.StatusCode != http.StatusInternalServerError || res.Header.Get("Content-Disposition") != "" {
			t.Fatalf("the early failed CSV %s: %v %v\n%.300s", suffix, res, err, body)
		}
	}
}

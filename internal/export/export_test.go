package export

import (
	"bytes"
	"encoding/csv"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
)

var testCols = []Column{
	{Key: "name", Title: "Имя покупателя", Kind: Text},
	{Key: "tickets", Title: "Tickets", Kind: Int},
	{Key: "amount", Title: "Amount", Kind: Money},
	{Key: "paid_at", Title: "Paid (Europe/Moscow)", Kind: Time},
	{Key: "day", Title: "Day", Kind: Date},
	{Key: "offline", Title: "Offline", Kind: Bool},
}

func testRows(t *testing.T, w Writer) {
	t.Helper()
	msk, err := time.LoadLocation("Europe/Moscow")
	if err != nil {
		t.Fatal(err)
	}
	paid := time.Date(2026, 11, 29, 23, 30, 5, 0, msk)
	for _, r := range [][]any{
		{"Анна; \"Ивановна\"", 2, int64(123456789), paid, "2026-11-29", true},
		{"=HYPERLINK(\"http://x\")", int64(0), int64(-5), nil, nil, false},
	} {
		if err := w.Row(r...); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestExcelCSV(t *testing.T) {
	var b bytes.Buffer
	w, err := New(&b, ExcelCSV, "x", testCols)
	if err != nil {
		t.Fatal(err)
	}
	testRows(t, w)
	s := b.String()
	if !strings.HasPrefix(s, BOM) {
		t.Fatalf("no BOM: %q", s)
	}
	r := csv.NewReader(strings.NewReader(strings.TrimPrefix(s, BOM)))
	r.Comma = ';'
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"Имя покупателя", "Tickets", "Amount", "Paid (Europe/Moscow)", "Day", "Offline"},
		{"Анна; \"Ивановна\"", "2", "1234567,89", "2026-11-29 23:30:05", "2026-11-29", "yes"},
		{"'=HYPERLINK(\"http://x\")", "0", "-0,05", "", "", "no"},
	}
	if strings.Join(flat(rows), "|") != strings.Join(flat(want), "|") {
		t.Fatalf("got %q\nwant %q", rows, want)
	}
	if !strings.Contains(s, "\r\n") {
		t.Error("lines do not end in CRLF")
	}
}

func TestPlainCSV(t *testing.T) {
	var b bytes.Buffer
	w, err := New(&b, CSV, "x", testCols)
	if err != nil {
		t.Fatal(err)
	}
	testRows(t, w)
	if strings.HasPrefix(b.String(), BOM) {
		t.Fatal("a BOM in the programs' CSV")
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"name", "tickets", "amount", "paid_at", "day", "offline"},
		{"Анна; \"Ивановна\"", "2", "1234567.89", "2026-11-29T23:30:05+03:00", "2026-11-29", "true"},
		{"'=HYPERLINK(\"http://x\")", "0", "-0.05", "", "", "false"},
	}
	if strings.Join(flat(rows), "|") != strings.Join(flat(want), "|") {
		t.Fatalf("got %q\nwant %q", rows, want)
	}
}

func TestXLSX(t *testing.T) {
	var b bytes.Buffer
	w, err := New(&b, XLSX, "Заказы: ноябрь/декабрь [2026] и ещё много слов", testCols)
	if err != nil {
		t.Fatal(err)
	}
	testRows(t, w)
	f, err := excelize.OpenReader(&b)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sheet := f.GetSheetName(0)
	if n := len([]rune(sheet)); n > 31 || strings.ContainsAny(sheet, "/[]") {
		t.Errorf("sheet %q", sheet)
	}
	raw, err := f.GetRows(sheet, excelize.Options{RawCellValue: true})
	if err != nil {
		t.Fatal(err)
	}
	if raw[0][0] != "Имя покупателя" || raw[1][0] != "Анна; \"Ивановна\"" || raw[1][1] != "2" || raw[1][2] != "1234567.89" || raw[2][2] != "-0.05" {
		t.Errorf("raw rows %q", raw)
	}
	shown, err := f.GetRows(sheet)
	if err != nil {
		t.Fatal(err)
	}
	if shown[1][2] != "1,234,567.89" || shown[1][3] != "2026-11-29 23:30:05" || shown[1][4] != "2026-11-29" {
		t.Errorf("shown rows %q", shown)
	}
	// The formula-like name is text, not a formula.
	if v, _ := f.GetCellValue(sheet, "A3"); v != "=HYPERLINK(\"http://x\")" {
		t.Errorf("A3 = %q", v)
	}
	if fm, _ := f.GetCellFormula(sheet, "A3"); fm != "" {
		t.Errorf("A3 is a formula: %q", fm)
	}
	if typ, _ := f.GetCellType(sheet, "C2"); typ != excelize.CellTypeNumber && typ != excelize.CellTypeUnset {
		t.Errorf("C2 type %v", typ)
	}
	st, _ := f.GetCellStyle(sheet, "A1")
	if style, err := f.GetStyle(st); err != nil || style.Font == nil || !style.Font.Bold {
		t.Errorf("header not bold: %+v %v", style, err)
	}
	panes, err := f.GetPanes(sheet)
	if err != nil || !panes.Freeze || panes.YSplit != 1 {
		t.Errorf("panes %+v %v", panes, err)
	}
	if w, _ := f.GetColWidth(sheet, "A"); w < 10 {
		t.Errorf("column A width %v", w)
	}
}

func flat(rows [][]string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, strings.Join(r, "¦"))
	}
	return out
}

// countingWriter counts the bytes written to it, and the writes.
type countingWriter struct{ n, writes int }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += len(p)
	c.writes++
	return len(p), nil
}

// TestAbortWritesNothing: a table given up before its Close has written
// nothing: XLSX writes its workbook at Close only, CSV keeps its first
// rows (and Excel CSV its byte order mark) in its buffer; so a download
// failing early can still be answered with an error page.
func TestAbortWritesNothing(t *testing.T) {
	for _, f := range Formats {
		var out countingWriter
		w, err := New(&out, f, "Лист", testCols)
		if err != nil {
			t.Fatal(err)
		}
		for range 10 {
			if err := w.Row("Анна", 2, int64(100), time.Now(), "2026-11-29", true); err != nil {
				t.Fatal(err)
			}
		}
		w.Abort()
		if out.n != 0 {
			t.Errorf("%s: %d bytes written before the table failed", f, out.n)
		}
	}
}

// TestXLSXStreams: the workbook is zipped straight to the output in many
// writes (not a buffer of the whole file written once), and opens.
func TestXLSXStreams(t *testing.T) {
	var buf bytes.Buffer
	var count countingWriter
	w, err := New(io.MultiWriter(&buf, &count), XLSX, "Лист", testCols)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20000 {
		if err := w.Row(strings.Repeat("Анна Иванова ", 1+i%5), i, int64(i)*100, time.Now(), "2026-11-29", i%2 == 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if count.writes < 10 {
		t.Errorf("the workbook of %d bytes came in %d writes", count.n, count.writes)
	}
	f, err := excelize.OpenReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := f.GetRows("Лист")
	if err != nil || len(rows) != 20001 {
		t.Fatalf("%d rows (%v)", len(rows), err)
	}
}

package export

import (
	"archive/zip"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/xuri/excelize/v2"
)

// Number formats of XLSX cells: money with two decimals and a thousands
// separator (the spreadsheet's locale shows its own separators), dates
// and times as ISO.
const (
	moneyFormat = "#,##0.00"
	timeFormat  = "yyyy-mm-dd hh:mm:ss"
	dateFormat  = "yyyy-mm-dd"
)

type xlsxWriter struct {
	out    io.Writer
	file   *excelize.File
	stream *excelize.StreamWriter
	cols   []Column
	styles map[Kind]int
	row    int
}

// sheetName is a name Excel accepts for a sheet: at most 31 characters,
// none of : \ / ? * [ ].
func sheetName(s string) string {
	s = strings.Map(func(r rune) rune {
		if strings.ContainsRune(`:\/?*[]`, r) {
			return '-'
		}
		return r
	}, s)
	if r := []rune(s); len(r) > 31 {
		s = string(r[:31])
	}
	if s == "" {
		s = "Sheet1"
	}
	return s
}

func newXLSX(w io.Writer, sheet string, cols []Column) (*xlsxWriter, error) {
	f := excelize.NewFile()
	// The workbook's zip goes straight to w: excelize's WriteTo would zip
	// it into a buffer of the whole file first (WriteToBuffer), the
	// buffer it hands the zip writer, which stays empty. Its zip64 header
	// fix-up (entries past 4 GiB, far beyond a sheet's million rows) reads
	// that buffer and so does nothing.
	f.SetZipWriter(func(io.Writer) excelize.ZipWriter { return zip.NewWriter(w) })
	x := &xlsxWriter{out: w, file: f, cols: cols, styles: map[Kind]int{}}
	fail := func(err error) (*xlsxWriter, error) {
		_ = f.Close()
		return nil, fmt.Errorf("export: xlsx: %w", err)
	}
	sheet = sheetName(sheet)
	if err := f.SetSheetName("Sheet1", sheet); err != nil {
		return fail(err)
	}
	for k, format := range map[Kind]string{Money: moneyFormat, Time: timeFormat, Date: dateFormat} {
		id, err := f.NewStyle(&excelize.Style{CustomNumFmt: &format})
		if err != nil {
			return fail(err)
		}
		x.styles[k] = id
	}
	bold, err := f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}, Alignment: &excelize.Alignment{WrapText: true, Vertical: "top"}})
	if err != nil {
		return fail(err)
	}
	if x.stream, err = f.NewStreamWriter(sheet); err != nil {
		return fail(err)
	}
	// The header stays in view as the rows scroll.
	if err := x.stream.SetPanes(&excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft",
		Selection: []excelize.Selection{{SQRef: "A2", ActiveCell: "A2", Pane: "bottomLeft"}}}); err != nil {
		return fail(err)
	}
	header := make([]any, len(cols))
	for i, c := range cols {
		if err := x.stream.SetColWidth(i+1, i+1, width(c)); err != nil {
			return fail(err)
		}
		header[i] = excelize.Cell{StyleID: bold, Value: c.title()}
	}
	if err := x.stream.SetRow("A1", header, excelize.RowOpts{StyleID: bold}); err != nil {
		return fail(err)
	}
	x.row = 1
	return x, nil
}

// width is a column's width in characters: its own, else enough for its
// kind's values and a title of a few words.
func width(c Column) float64 {
	if c.Width > 0 {
		return c.Width
	}
	w := map[Kind]float64{Text: 24, Int: 10, Money: 16, Time: 20, Date: 12, Bool: 8}[c.Kind]
	return min(max(w, float64(len([]rune(c.title())))*0.9+2), 40)
}

func (x *xlsxWriter) Row(values ...any) error {
	if len(values) != len(x.cols) {
		return fmt.Errorf("export: a row of %d values in a table of %d columns", len(values), len(x.cols))
	}
	cells := make([]any, len(values))
	for i, v := range values {
		c, err := x.cell(x.cols[i].Kind, v)
		if err != nil {
			return fmt.Errorf("export: column %d: %w", i+1, err)
		}
		cells[i] = c
	}
	x.row++
	ref, err := excelize.CoordinatesToCellName(1, x.row)
	if err != nil {
		return err
	}
	return x.stream.SetRow(ref, cells)
}

// cell is a value as an XLSX cell. Text stays text (never a formula);
// money is a number of currency units; times are date cells of the wall
// clock the value shows (a spreadsheet has no zones).
func (x *xlsxWriter) cell(k Kind, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch k {
	case Text:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("text: %T", v)
		}
		if s == "" {
			return nil, nil
		}
		return s, nil
	case Int:
		return integer(v)
	case Money:
		n, err := integer(v)
		return excelize.Cell{StyleID: x.styles[Money], Value: float64(n) / 100}, err
	case Time, Date:
		t, err := moment(v)
		if err != nil || t.IsZero() {
			return nil, err
		}
		if k == Date {
			t = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		} else {
			t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, time.UTC)
		}
		return excelize.Cell{StyleID: x.styles[k], Value: t}, nil
	case Bool:
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("bool: %T", v)
		}
		if b {
			return "yes", nil
		}
		return "no", nil
	}
	return nil, fmt.Errorf("kind %d", k)
}

// Close writes the workbook: nothing reaches the output before it.
func (x *xlsxWriter) Close() error {
	defer x.file.Close()
	if err := x.stream.Flush(); err != nil {
		return fmt.Errorf("export: xlsx: %w", err)
	}
	if _, err := x.file.WriteTo(x.out); err != nil {
		return fmt.Errorf("export: xlsx: %w", err)
	}
	return nil
}

// Abort discards the workbook and its temporary files.
func (x *xlsxWriter) Abort() { _ = x.file.Close() }

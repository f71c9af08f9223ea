// Package export writes the cabinet's tables as files a spreadsheet opens
// right: XLSX (numbers as numbers, dates as dates, a bold frozen header),
// CSV for Excel or LibreOffice with a comma-decimal locale (UTF-8 with a
// byte order mark, semicolons, decimal commas), and plain RFC 4180 CSV for
// programs (commas, dot decimals, no byte order mark). A table is its
// columns, then its rows one at a time: the writers keep no rows (XLSX's
// own stream spills to a temporary file past its buffer, and its Close
// zips the workbook straight to the output, not into memory first).
package export

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Format is one of the files a table is written as.
type Format string

// The formats.
const (
	// XLSX is an Excel workbook of one sheet.
	XLSX Format = "xlsx"
	// ExcelCSV is CSV as a spreadsheet with a comma-decimal locale
	// (Russian, most of Europe) opens it by double click: UTF-8 with a
	// byte order mark, ";" between cells, a decimal comma, times as
	// "2006-01-02 15:04:05" in the zone the header names.
	ExcelCSV Format = "excel-csv"
	// CSV is RFC 4180 CSV for programs: UTF-8 without a byte order mark,
	// ",", dot decimals, times in RFC 3339 with their offset, snake_case
	// headers.
	CSV Format = "csv"
)

// Formats lists the formats in the order the cabinet offers them.
var Formats = []Format{XLSX, ExcelCSV, CSV}

// Label is how the cabinet's download links name the format.
func (f Format) Label() string {
	switch f {
	case XLSX:
		return "XLSX"
	case ExcelCSV:
		return "CSV (Excel)"
	}
	return "CSV"
}

// Suffix is the end of the format's file name.
func (f Format) Suffix() string {
	switch f {
	case XLSX:
		return ".xlsx"
	case ExcelCSV:
		return "-excel.csv"
	}
	return ".csv"
}

// ContentType is the format's media type.
func (f Format) ContentType() string {
	if f == XLSX {
		return "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	}
	return "text/csv; charset=utf-8"
}

// Kind is what a column holds, which decides how each format writes it.
type Kind int

// The kinds of column.
const (
	// Text: a string. A text starting with = + - @ or a control character
	// is written to CSV with a leading apostrophe, so a spreadsheet never
	// runs it as a formula; XLSX keeps it as it is, in a text cell.
	Text Kind = iota
	// Int: an int or int64, written as digits.
	Int
	// Money: an int64 of minor units, written as currency units with two
	// decimals (an XLSX number cell shown with two decimals).
	Money
	// Time: a time.Time in the zone the column's title names (the zero
	// time is an empty cell). XLSX: a date cell; Excel CSV:
	// "2006-01-02 15:04:05"; CSV: RFC 3339.
	Time
	// Date: a time.Time whose date alone counts, or a "2006-01-02"
	// string. XLSX: a date cell.
	Date
	// Bool: yes or no (CSV: true or false).
	Bool
)

// Column is one column of a table.
type Column struct {
	// Key is the column's name in plain CSV (snake_case, stable for
	// programs); Title its header in XLSX and Excel CSV ("" = Key).
	Key, Title string
	Kind       Kind
	// Width is the XLSX column's width in characters (0: by kind).
	Width float64
}

func (c Column) title() string {
	if c.Title != "" {
		return c.Title
	}
	return c.Key
}

// Writer takes a table's rows, one Row call each, values in the order of
// the columns; nil (or a zero time) is an empty cell. Close finishes the
// file; nothing is complete before it. Abort, instead of Close, gives up a
// table whose rows failed: it writes nothing more (XLSX: nothing at all,
// its workbook is written at Close only) and frees what the table held.
type Writer interface {
	Row(values ...any) error
	Close() error
	Abort()
}

// New starts a table of cols in format f on w; sheet names the XLSX sheet.
func New(w io.Writer, f Format, sheet string, cols []Column) (Writer, error) {
	switch f {
	case XLSX:
		return newXLSX(w, sheet, cols)
	case ExcelCSV, CSV:
		return newCSV(w, f, cols)
	}
	return nil, fmt.Errorf("export: no format %q", f)
}

// ParseFormat is the format named s.
func ParseFormat(s string) (Format, bool) {
	for _, f := range Formats {
		if string(f) == s {
			return f, true
		}
	}
	return "", false
}

// BOM is UTF-8's byte order mark, which tells Excel the file is UTF-8.
const BOM = "\ufeff"

type csvWriter struct {
	w     *csv.Writer
	f     Format
	kinds []Kind
}

func newCSV(w io.Writer, f Format, cols []Column) (*csvWriter, error) {
	// The byte order mark goes through the CSV writer's buffer (csv takes
	// a bufio.Writer as its own): nothing reaches w before a buffer's
	// worth of rows, so a table failing early has written nothing.
	bw := bufio.NewWriter(w)
	cw := &csvWriter{w: csv.NewWriter(bw), f: f}
	cw.w.UseCRLF = true
	header := make([]string, len(cols))
	for i, c := range cols {
		cw.kinds = append(cw.kinds, c.Kind)
		header[i] = c.Key
		if f == ExcelCSV {
			header[i] = Cell(c.title())
		}
	}
	if f == ExcelCSV {
		cw.w.Comma = ';'
		if _, err := bw.WriteString(BOM); err != nil {
			return nil, err
		}
	}
	return cw, cw.w.Write(header)
}

func (c *csvWriter) Row(values ...any) error {
	if len(values) != len(c.kinds) {
		return fmt.Errorf("export: a row of %d values in a table of %d columns", len(values), len(c.kinds))
	}
	rec := make([]string, len(values))
	for i, v := range values {
		s, err := c.cell(c.kinds[i], v)
		if err != nil {
			return fmt.Errorf("export: column %d: %w", i+1, err)
		}
		rec[i] = s
	}
	return c.w.Write(rec)
}

func (c *csvWriter) cell(k Kind, v any) (string, error) {
	if v == nil {
		return "", nil
	}
	switch k {
	case Text:
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("text: %T", v)
		}
		return Cell(s), nil
	case Int:
		n, err := integer(v)
		return strconv.FormatInt(n, 10), err
	case Money:
		n, err := integer(v)
		s := Units(n)
		if c.f == ExcelCSV {
			s = strings.Replace(s, ".", ",", 1)
		}
		return s, err
	case Time, Date:
		t, err := moment(v)
		switch {
		case err != nil || t.IsZero():
			return "", err
		case k == Date:
			return t.Format(time.DateOnly), nil
		case c.f == ExcelCSV:
			return t.Format(time.DateTime), nil
		}
		return t.Format(time.RFC3339), nil
	case Bool:
		b, ok := v.(bool)
		if !ok {
			return "", fmt.Errorf("bool: %T", v)
		}
		if c.f == ExcelCSV {
			if b {
				return "yes", nil
			}
			return "no", nil
		}
		return strconv.FormatBool(b), nil
	}
	return "", fmt.Errorf("kind %d", k)
}

func (c *csvWriter) Close() error {
	c.w.Flush()
	return c.w.Error()
}

// Abort drops the rows not flushed yet.
func (c *csvWriter) Abort() {}

func integer(v any) (int64, error) {
	switch n := v.(type) {
	case int64:
		return n, nil
	case int:
		return int64(n), nil
	case int32:
		return int64(n), nil
	}
	return 0, fmt.Errorf("number: %T", v)
}

func moment(v any) (time.Time, error) {
	switch t := v.(type) {
	case time.Time:
		return t, nil
	case *time.Time:
		if t == nil {
			return time.Time{}, nil
		}
		return *t, nil
	case string:
		if t == "" {
			return time.Time{}, nil
		}
		return time.Parse(time.DateOnly, t)
	}
	return time.Time{}, errors.New("time: " + fmt.Sprintf("%T", v))
}

// Units writes minor units as currency units with two decimals, dot
// decimal, no thousands separator: 123456 → "1234.56", -5 → "-0.05".
func Units(minor int64) string {
	sign := ""
	u := uint64(minor)
	if minor < 0 {
		sign, u = "-", uint64(-minor) // -MinInt64 wraps to itself, read unsigned
	}
	return sign + strconv.FormatUint(u/100, 10) + "." + strconv.FormatUint(u%100/10, 10) + strconv.FormatUint(u%10, 10)
}

// Cell keeps a text cell (a title, a name) from being read as a formula by
// a spreadsheet that opens a CSV: one starting with = + - @ or a control
// character gets a leading apostrophe.
func Cell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r\n", rune(s[0])) {
		return "'" + s
	}
	return s
}

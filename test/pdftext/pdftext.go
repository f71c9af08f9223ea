// Package pdftext reads the text the tickets PDF shows, page by page, so
// tests can check what a buyer sees on each page. It reads the PDFs the
// service writes (fpdf: a page object names its content stream, deflated,
// and text in UTF-8 fonts is shown as UTF-16BE strings), not PDFs at large.
package pdftext

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
)

var (
	pageObj  = regexp.MustCompile(`(?s)\d+ 0 obj\s*<<\s*/Type /Page\b.*?/Contents (\d+) 0 R`)
	textShow = regexp.MustCompile(`BT ([-\d.]+) ([-\d.]+) Td \(((?:[^\\()]|\\.)*)\)\s*Tj`)
)

// Page is the text a page shows.
type Page struct{ Lines []Line }

// Line is one string shown, with where it starts: PDF points from the
// page's lower left corner, before any rotation the page applies to it.
type Line struct {
	Text string
	X, Y float64
}

// Text is the page's strings in drawing order, one a line.
func (p Page) Text() string {
	var b strings.Builder
	for _, l := range p.Lines {
		b.WriteString(l.Text)
		b.WriteByte('\n')
	}
	return b.String()
}

// Pages returns each page's text.
func Pages(pdf []byte) ([]Page, error) {
	var out []Page
	for _, m := range pageObj.FindAllSubmatch(pdf, -1) {
		content, err := stream(pdf, string(m[1]))
		if err != nil {
			return nil, err
		}
		var p Page
		for _, s := range textShow.FindAllSubmatch(content, -1) {
			x, _ := strconv.ParseFloat(string(s[1]), 64)
			y, _ := strconv.ParseFloat(string(s[2]), 64)
			p.Lines = append(p.Lines, Line{Text: decode(unescape(s[3])), X: x, Y: y})
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("pdftext: no pages found")
	}
	return out, nil
}

// stream returns object id's stream, inflated if it is deflated.
func stream(pdf []byte, id string) ([]byte, error) {
	head := regexp.MustCompile(`(?s)(?:^|\n)` + id + ` 0 obj\s*<<(.*?)>>\s*stream\r?\n`)
	loc := head.FindSubmatchIndex(pdf)
	if loc == nil {
		return nil, fmt.Errorf("pdftext: object %s has no stream", id)
	}
	dict := string(pdf[loc[2]:loc[3]])
	lm := regexp.MustCompile(`/Length (\d+)`).FindStringSubmatch(dict)
	if lm == nil {
		return nil, fmt.Errorf("pdftext: object %s: no /Length", id)
	}
	n, _ := strconv.Atoi(lm[1])
	if loc[1]+n > len(pdf) {
		return nil, fmt.Errorf("pdftext: object %s: stream past the end", id)
	}
	data := pdf[loc[1] : loc[1]+n]
	if !strings.Contains(dict, "/FlateDecode") {
		return data, nil
	}
	r, err := zlib.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("pdftext: object %s: %w", id, err)
	}
	return io.ReadAll(r)
}

// unescape undoes a PDF literal string's backslash escapes (fpdf writes
// \\, \(, \) and \r).
func unescape(s []byte) []byte {
	var out []byte
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			out = append(out, s[i])
			continue
		}
		i++
		switch s[i] {
		case 'r':
			out = append(out, '\r')
		case 'n':
			out = append(out, '\n')
		default:
			out = append(out, s[i])
		}
	}
	return out
}

// decode reads a UTF-16BE string (with or without its byte order mark).
func decode(b []byte) string {
	b = bytes.TrimPrefix(b, []byte{0xFE, 0xFF})
	u := make([]uint16, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		u = append(u, uint16(b[i])<<8|uint16(b[i+1]))
	}
	return string(utf16.Decode(u))
}

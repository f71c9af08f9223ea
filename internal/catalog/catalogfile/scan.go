package catalogfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// node is one JSON value of a catalog file and where it starts: the decoder
// walks these instead of encoding/json's structs, so it can report every
// problem of a file with its line (encoding/json stops at the first, in Go's
// own words).
type node struct {
	kind byte // '{' object, '[' array, '"' string, '0' number, 'b' true/false, 'n' null
	off  int
	raw  []byte // a string's or number's bytes as written
	// An object's members in file order (keys and their offsets), or an
	// array's items (vals only).
	keys    []string
	keyOffs []int
	vals    []*node
}

// maxDepth bounds nesting: a catalog file is six levels deep, a file of
// nothing but brackets must not exhaust the stack.
const maxDepth = 64

type syntaxError struct {
	off int
	msg string
}

type scanner struct {
	data  []byte
	pos   int
	depth int
}

// scan reads data as one JSON value followed by nothing but whitespace.
func scan(data []byte) (*node, *syntaxError) {
	s := &scanner{data: data}
	s.space()
	if s.pos == len(data) {
		return nil, &syntaxError{0, "the file is empty; a catalog file is one JSON object {...}"}
	}
	n, err := s.value()
	if err != nil {
		return nil, err
	}
	s.space()
	if s.pos < len(data) {
		return nil, &syntaxError{s.pos, "unexpected data after the catalog object"}
	}
	return n, nil
}

func (s *scanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\r', '\n':
			s.pos++
		default:
			return
		}
	}
}

func (s *scanner) fail(format string, args ...any) *syntaxError {
	return &syntaxError{s.pos, fmt.Sprintf(format, args...)}
}

// found names what stands at the scanner's position, for messages.
func (s *scanner) found() string {
	if s.pos >= len(s.data) {
		return "the end of the file"
	}
	r, _ := utf8.DecodeRune(s.data[s.pos:])
	if r == utf8.RuneError {
		return "a byte that is not UTF-8 text"
	}
	if r < ' ' {
		return fmt.Sprintf("a control character (U+%04X)", r)
	}
	return fmt.Sprintf("%q", r)
}

func (s *scanner) value() (*node, *syntaxError) {
	if s.pos >= len(s.data) {
		return nil, s.fail("the file ends where a value was expected (a bracket or brace left open?)")
	}
	switch c := s.data[s.pos]; {
	case c == '{':
		return s.object()
	case c == '[':
		return s.array()
	case c == '"':
		start := s.pos
		raw, err := s.str()
		if err != nil {
			return nil, err
		}
		return &node{kind: '"', off: start, raw: raw}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	case bytes.HasPrefix(s.data[s.pos:], []byte("true")), bytes.HasPrefix(s.data[s.pos:], []byte("false")):
		n := &node{kind: 'b', off: s.pos}
		if c == 't' {
			n.raw, s.pos = s.data[s.pos:s.pos+4], s.pos+4
		} else {
			n.raw, s.pos = s.data[s.pos:s.pos+5], s.pos+5
		}
		return n, nil
	case bytes.HasPrefix(s.data[s.pos:], []byte("null")):
		n := &node{kind: 'n', off: s.pos}
		s.pos += 4
		return n, nil
	case c == '\'':
		return nil, s.fail("text must be in double quotes (\"...\"), not single quotes")
	default:
		return nil, s.fail("expected a value (text in double quotes, a number, true, false, null, [...] or {...}), found %s", s.found())
	}
}

func (s *scanner) nest() *syntaxError {
	s.depth++
	if s.depth > maxDepth {
		return s.fail("nested deeper than %d levels", maxDepth)
	}
	return nil
}

func (s *scanner) object() (*node, *syntaxError) {
	if err := s.nest(); err != nil {
		return nil, err
	}
	defer func() { s.depth-- }()
	n := &node{kind: '{', off: s.pos}
	s.pos++ // {
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		return n, nil
	}
	for {
		s.space()
		if s.pos >= len(s.data) {
			return nil, s.fail("the file ends inside an object: a '}' is missing")
		}
		if s.data[s.pos] == '}' {
			return nil, s.fail("a comma before '}': remove the last comma")
		}
		if s.data[s.pos] != '"' {
			return nil, s.fail("expected a field name in double quotes, found %s", s.found())
		}
		keyOff := s.pos
		raw, err := s.str()
		if err != nil {
			return nil, err
		}
		var key string
		_ = json.Unmarshal(raw, &key) // str checked it
		s.space()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return nil, s.fail("expected ':' after the field name %q, found %s", key, s.found())
		}
		s.pos++
		s.space()
		v, err := s.value()
		if err != nil {
			return nil, err
		}
		n.keys, n.keyOffs, n.vals = append(n.keys, key), append(n.keyOffs, keyOff), append(n.vals, v)
		s.space()
		switch {
		case s.pos >= len(s.data):
			return nil, s.fail("the file ends inside an object: a '}' is missing")
		case s.data[s.pos] == ',':
			s.pos++
		case s.data[s.pos] == '}':
			s.pos++
			return n, nil
		case s.data[s.pos] == '"':
			return nil, s.fail("expected ',' between two fields, found %s", s.found())
		default:
			return nil, s.fail("expected ',' or '}' after the value of %q, found %s", key, s.found())
		}
	}
}

func (s *scanner) array() (*node, *syntaxError) {
	if err := s.nest(); err != nil {
		return nil, err
	}
	defer func() { s.depth-- }()
	n := &node{kind: '[', off: s.pos}
	s.pos++ // [
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		return n, nil
	}
	for {
		s.space()
		if s.pos < len(s.data) && s.data[s.pos] == ']' {
			return nil, s.fail("a comma before ']': remove the last comma")
		}
		if s.pos < len(s.data) && s.data[s.pos] == ',' {
			return nil, s.fail("two commas in a row: a list item is missing")
		}
		v, err := s.value()
		if err != nil {
			return nil, err
		}
		n.vals = append(n.vals, v)
		s.space()
		switch {
		case s.pos >= len(s.data):
			return nil, s.fail("the file ends inside a list: a ']' is missing")
		case s.data[s.pos] == ',':
			s.pos++
		case s.data[s.pos] == ']':
			s.pos++
			return n, nil
		default:
			return nil, s.fail("expected ',' or ']' after a list item, found %s", s.found())
		}
	}
}

// str reads a string with its quotes and checks it as JSON does.
func (s *scanner) str() ([]byte, *syntaxError) {
	start := s.pos
	s.pos++ // "
	for s.pos < len(s.data) {
		switch c := s.data[s.pos]; {
		case c == '"':
			s.pos++
			raw := s.data[start:s.pos]
			var v string
			if json.Unmarshal(raw, &v) != nil {
				return nil, &syntaxError{start, "the text has an invalid escape (a backslash must be followed by one of \" \\ / b f n r t or uXXXX)"}
			}
			return raw, nil
		case c == '\\':
			s.pos += 2
		case c < ' ':
			if c == '\n' {
				return nil, &syntaxError{start, "the text is not closed on its line: a '\"' is missing"}
			}
			return nil, s.fail("a control character (U+%04X) inside text: write it as an escape", c)
		default:
			s.pos++
		}
	}
	return nil, &syntaxError{start, "the text is not closed: a '\"' is missing"}
}

func (s *scanner) number() (*node, *syntaxError) {
	start := s.pos
	for s.pos < len(s.data) && strings.IndexByte("+-0123456789.eE", s.data[s.pos]) >= 0 {
		s.pos++
	}
	raw := s.data[start:s.pos]
	if !json.Valid(raw) {
		return nil, &syntaxError{start, fmt.Sprintf("%q is not a number as JSON writes them (like 150000, -1 or 12.5)", raw)}
	}
	return &node{kind: '0', off: start, raw: raw}, nil
}

// position is the 1-based line and column (in characters) of a byte offset.
func position(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	lineStart := bytes.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCount(before[lineStart:]) + 1
}

package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"unicode/utf8"
)

// canonicalJSON is body's JSON value written one way only: object members
// sorted by name, no whitespace, strings re-escaped the one way Go writes
// them. Two bodies that are the same JSON value but for whitespace, member
// order or string escapes ("\u00e9" for "é") give the same bytes, so an
// idempotent retry from a client that serialises its request again matches
// its first request.
//
// Numbers are kept as written: 1 and 1.0 are different requests, because
// the service reads them differently (an integer field refuses 1.0).
//
// ok is false when body is not one JSON value in UTF-8, has an object with
// a member twice (which value counts is up to the reader), nests deeper
// than maxCanonicalDepth or is larger than a body may be: such a body is
// compared byte for byte. The canonical text is itself JSON, so it never
// equals a body that is not.
func canonicalJSON(body []byte) (canon []byte, ok bool) {
	if len(body) == 0 || len(body) > maxBodyBytes || !utf8.Valid(body) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var out bytes.Buffer
	if err := writeCanonical(&out, dec, 0); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, false // more after the value
	}
	return out.Bytes(), true
}

var (
	errDuplicateMember = errors.New("an object has a member twice")
	errTooDeep         = errors.New("nested too deep")
)

// maxCanonicalDepth bounds the nesting canonicalJSON follows: the API's
// bodies nest a few levels, and each level costs a copy of what it holds,
// so a body of a million brackets must not cost seconds or gigabytes.
const maxCanonicalDepth = 32

// writeCanonical writes the next JSON value of dec canonically; depth is
// how deep in arrays and objects it is.
func writeCanonical(out *bytes.Buffer, dec *json.Decoder, depth int) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if _, ok := tok.(json.Delim); ok && depth >= maxCanonicalDepth {
		return errTooDeep
	}
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '[':
			out.WriteByte('[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					out.WriteByte(',')
				}
				if err := writeCanonical(out, dec, depth+1); err != nil {
					return err
				}
			}
			out.WriteByte(']')
		case '{':
			type member struct {
				name  string
				value []byte
			}
			var members []member
			for dec.More() {
				nt, err := dec.Token()
				if err != nil {
					return err
				}
				name, _ := nt.(string)
				var value bytes.Buffer
				if err := writeCanonical(&value, dec, depth+1); err != nil {
					return err
				}
				members = append(members, member{name, value.Bytes()})
			}
			slices.SortFunc(members, func(a, b member) int {
				switch {
				case a.name < b.name:
					return -1
				case a.name > b.name:
					return 1
				}
				return 0
			})
			out.WriteByte('{')
			for i, m := range members {
				if i > 0 {
					if members[i-1].name == m.name {
						return errDuplicateMember
					}
					out.WriteByte(',')
				}
				writeString(out, m.name)
				out.WriteByte(':')
				out.Write(m.value)
			}
			out.WriteByte('}')
		}
		// The closing delimiter.
		_, err := dec.Token()
		return err
	case string:
		writeString(out, v)
	case json.Number:
		out.WriteString(v.String())
	case bool:
		if v {
			out.WriteString("true")
		} else {
			out.WriteString("false")
		}
	case nil:
		out.WriteString("null")
	}
	return nil
}

func writeString(out *bytes.Buffer, s string) {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	out.Truncate(out.Len() - 1)
}

package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
)

// maxBodyDepth bounds how deep a request body nests. The API's bodies nest
// three levels; a body of a million brackets must not cost the decoders
// (the validation's, the operation's, the idempotency check's) their
// recursion.
const maxBodyDepth = 32

// memberError is a request body's member that makes it mean two things.
type memberError struct {
	location, message string
}

// strictBody checks that a JSON request body means one thing before any
// reader sees it: UTF-8 (Go's decoder would silently replace bad bytes),
// no object with a member twice or two members whose names differ only in
// letter case (Huma's validation matched names case-insensitively and
// checked one of them, while Go's decoding kept the last match, so a
// request was validated as one thing and used as another), no nesting past
// maxBodyDepth. Member names are otherwise the schema's to judge: with
// huma.ValidateStrictCasing a name in another case is an unknown member.
//
// Bodies that are not JSON (by Content-Type) are left to the operation,
// which refuses them with 415.
func strictBody(r *http.Request, body []byte) *Problem {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "" && mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return nil
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil // no body: the operation decides whether it needs one
	}
	if !utf8.Valid(body) {
		return newProblem(r.Context(), http.StatusBadRequest, "malformed_request",
			"The request body is not valid JSON: it is not UTF-8 (RFC 8259).")
	}
	me, err := checkMembers(body)
	switch {
	case err != nil:
		// Not JSON: the operation's decoder says where, as it always has.
		return nil
	case me != nil:
		p := newProblem(r.Context(), http.StatusUnprocessableEntity, "validation_error", "validation failed")
		p.Errors = []*huma.ErrorDetail{{Location: me.location, Message: me.message}}
		return p
	}
	return nil
}

// checkMembers walks body's one JSON value and returns the first member
// that breaks the rule of strictBody, or an error when body is not JSON.
func checkMembers(body []byte) (*memberError, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	me, err := walkValue(dec, "body", 0)
	if me != nil || err != nil {
		return me, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("more after the JSON value")
	}
	return nil, nil
}

// walkValue reads the next value of dec, at location path and nesting depth.
func walkValue(dec *json.Decoder, path string, depth int) (*memberError, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil, nil // a scalar
	}
	if depth >= maxBodyDepth {
		return &memberError{path, "nested more than " + strconv.Itoa(maxBodyDepth) + " levels deep"}, nil
	}
	switch d {
	case '[':
		for i := 0; dec.More(); i++ {
			if me, err := walkValue(dec, path+"["+strconv.Itoa(i)+"]", depth+1); me != nil || err != nil {
				return me, err
			}
		}
	case '{':
		// Folded names: a twin differs only in case, a repeat not at all.
		seen := map[string]string{}
		for dec.More() {
			nt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			name, _ := nt.(string)
			at := path + "." + name
			if first, dup := seen[strings.ToLower(name)]; dup {
				if first == name {
					return &memberError{at, "member given twice: a name appears once in an object"}, nil
				}
				return &memberError{at, "member given twice, as " + strconv.Quote(first) + " and " + strconv.Quote(name) +
					": names are case-sensitive, and an object holds no two that differ only in case"}, nil
			}
			seen[strings.ToLower(name)] = name
			if me, err := walkValue(dec, at, depth+1); me != nil || err != nil {
				return me, err
			}
		}
	}
	_, err = dec.Token() // the closing delimiter
	return nil, err
}

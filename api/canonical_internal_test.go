package api

import (
	"strings"
	"testing"
)

// A retry that serialises the same JSON value again matches its first
// request; anything that is another value, or not JSON, does not.
func TestCanonicalJSON(t *testing.T) {
	same := [][]string{
		{`{"event_id": 7, "seats": [{"zone_id": "a", "seat_id": "b"}]}`,
			"{\n  \"seats\" : [ { \"seat_id\":\"b\",\"zone_id\":\"a\" } ],\n  \"event_id\":7\n}\n",
			`{"seats":[{"zone_id":"\u0061","seat_id":"b"}],"event_id":7}`},
		{`{"reason": "caf\u00e9 <&>"}`, `{"reason":"café <&>"}`},
		{`{"a": {"y": 1, "x": [true, false, null]}}`, `{"a":{"x":[true,false,null],"y":1}}`},
	}
	for _, group := range same {
		want, ok := canonicalJSON([]byte(group[0]))
		if !ok {
			t.Fatalf("%s: not canonicalised", group[0])
		}
		for _, b := range group[1:] {
			if got, ok := canonicalJSON([]byte(b)); !ok || string(got) != string(want) {
				t.Fatalf("%s: %s, want %s", b, got, want)
			}
		}
	}
	differ := [][2]string{
		{`{"n": 1}`, `{"n": 1.0}`}, // numbers as written
		{`{"n": 1}`, `{"n": 1e0}`},
		{`[1, 2]`, `[2, 1]`}, // arrays keep their order
		{`{"a": "x"}`, `{"a": "x "}`},
		{`{"a": null}`, `{}`},
	}
	for _, d := range differ {
		a, _ := canonicalJSON([]byte(d[0]))
		b, _ := canonicalJSON([]byte(d[1]))
		if string(a) == string(b) {
			t.Fatalf("%s and %s canonicalise alike: %s", d[0], d[1], a)
		}
	}
	for _, b := range []string{"", "not json", `{"a": 1} {"b": 2}`, `{"a": 1, "a": 2}`, "{\"a\": \"\xff\"}", `{"a": [1,}`} {
		if got, ok := canonicalJSON([]byte(b)); ok {
			t.Fatalf("%q canonicalised to %s; want byte comparison", b, got)
		}
	}
	// Deep nesting is compared by bytes, and cheaply: a body of a
	// million brackets must not cost seconds or gigabytes.
	nested := func(n int) []byte { return []byte(strings.Repeat("[", n) + strings.Repeat("]", n)) }
	if _, ok := canonicalJSON(nested(maxCanonicalDepth + 1)); ok {
		t.Fatalf("%d levels canonicalised", maxCanonicalDepth+1)
	}
	if _, ok := canonicalJSON(nested(500_000)); ok { // a 1 MB body
		t.Fatal("half a million levels canonicalised")
	}
	if _, ok := canonicalJSON(nested(maxCanonicalDepth)); !ok {
		t.Fatalf("%d levels not canonicalised", maxCanonicalDepth)
	}
}

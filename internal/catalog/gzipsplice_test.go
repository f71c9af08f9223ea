package catalog

import (
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"
)

func TestSplicedGzipIsOneValidMember(t *testing.T) {
	prefix := []byte(`{"data":` + strings.Repeat(`{"seat_id":"a-1-1","status":"free"},`, 2000) + `null`)
	g, err := newSplicedGzip(prefix)
	if err != nil {
		t.Fatal(err)
	}
	for _, tail := range []string{`,"request_id":"req_1"}`, `,"request_id":"req_2222222222"}`, ``} {
		z := append(append([]byte{}, g.prefix...), g.Tail([]byte(tail))...) // as served: prefix, then tail
		r, err := gzip.NewReader(bytes.NewReader(z))
		if err != nil {
			t.Fatal(err)
		}
		r.Multistream(false) // one member, as strict clients read it
		got, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("tail %q: %v", tail, err)
		}
		if string(got) != string(prefix)+tail {
			t.Fatalf("tail %q: decoded %d bytes, want %d", tail, len(got), len(prefix)+len(tail))
		}
		if len(z) > len(prefix)/5 {
			t.Fatalf("not compressed: %d of %d", len(z), len(prefix))
		}
	}
}

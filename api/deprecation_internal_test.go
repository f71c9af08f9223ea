package api

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/humatest"
)

// TestDeprecatedOperation: the policy's one way to retire an operation
// shows in the document and on every answer, as docs/api.md promises.
func TestDeprecatedOperation(t *testing.T) {
	_, api := humatest.New(t)
	since := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	sunset := time.Date(2027, 7, 1, 0, 0, 0, 0, time.UTC)
	huma.Register(api, deprecated(huma.Operation{OperationID: "old-thing", Method: http.MethodGet, Path: "/old",
		Description: "An old thing."}, since, sunset, "Use `GET /new` instead."),
		func(context.Context, *struct{}) (*struct{ Body string }, error) {
			return &struct{ Body string }{"ok"}, nil
		})

	resp := api.Get("/old")
	if resp.Code != http.StatusOK {
		t.Fatalf("GET /old: %d %s", resp.Code, resp.Body)
	}
	for h, want := range map[string]string{
		"Deprecation": "@1796083200",
		"Sunset":      "Thu, 01 Jul 2027 00:00:00 GMT",
		"Link":        `</docs#/operations/old-thing>; rel="deprecation"`,
	} {
		if got := resp.Header().Get(h); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
	op := api.OpenAPI().Paths["/old"].Get
	if !op.Deprecated || !strings.Contains(op.Description, "**Deprecated** since 2026-12-01; it stops on 2027-07-01. Use `GET /new` instead.") {
		t.Errorf("the document: deprecated %v, %q", op.Deprecated, op.Description)
	}

	defer func() {
		if recover() == nil {
			t.Error("a sunset three months after the deprecation was accepted")
		}
	}()
	deprecated(huma.Operation{OperationID: "too-soon"}, since, since.AddDate(0, 3, 0), "")
}

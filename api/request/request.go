// Package request is what travels with one API request: its id, the caller
// once authenticated, its Idempotency-Key; and the scope an operation
// requires of the caller. The /v1 operations and the aggregator adapter
// both read it.
package request

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/ticketsales/ticketsales/internal/apikey"
)

type ctxKey struct{}

// Info travels with a request, so handlers, the access log and the request
// log can name it and its caller.
type Info struct {
	ID             string
	Principal      *apikey.Principal // set once authenticated
	IdempotencyKey string            // set once the idempotency middleware accepted it
	Adapter        bool              // a request of the aggregator adapter
}

// Start gives a request its id and returns the context that carries it.
func Start(ctx context.Context) (context.Context, *Info) {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	ri := &Info{ID: "req_" + hex.EncodeToString(b)}
	return context.WithValue(ctx, ctxKey{}, ri), ri
}

// From returns the request's info (nil outside a request).
func From(ctx context.Context) *Info {
	ri, _ := ctx.Value(ctxKey{}).(*Info)
	return ri
}

// ID returns the id of the request in ctx, or "".
func ID(ctx context.Context) string {
	if ri := From(ctx); ri != nil {
		return ri.ID
	}
	return ""
}

// IdempotencyKey returns the Idempotency-Key of the request in ctx, or "".
func IdempotencyKey(ctx context.Context) string {
	if ri := From(ctx); ri != nil {
		return ri.IdempotencyKey
	}
	return ""
}

// Principal returns the authenticated caller of the request in ctx, or nil.
func Principal(ctx context.Context) *apikey.Principal {
	if ri := From(ctx); ri != nil {
		return ri.Principal
	}
	return nil
}

// Caller is the authenticated caller: every scoped operation has one.
func Caller(ctx context.Context) *apikey.Principal {
	p := Principal(ctx)
	if p == nil {
		panic(fmt.Sprintf("no principal for request %s", ID(ctx)))
	}
	return p
}

// Scoped declares the scope an operation requires: in the OpenAPI document
// (security requirement) and for the authenticate middleware, which reads
// it from the operation's metadata.
func Scoped(op huma.Operation, scope string) huma.Operation {
	// Bearer schemes carry no scopes in OpenAPI: the scope is stated in
	// the description and enforced by the authenticate middleware.
	op.Security = []map[string][]string{{"bearer": {}}}
	if op.Description != "" {
		op.Description += "\n\n"
	}
	op.Description += "Requires an API key with the scope `" + scope + "`."
	if op.Metadata == nil {
		op.Metadata = map[string]any{}
	}
	op.Metadata["scope"] = scope
	op.Errors = append(op.Errors, http.StatusUnauthorized, http.StatusForbidden)
	return op
}

// RequiredScope is the scope an operation declared with Scoped ("": none).
func RequiredScope(op *huma.Operation) string {
	s, _ := op.Metadata["scope"].(string)
	return s
}

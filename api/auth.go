package api

import (
	"errors"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"ticketsales/apikey"
)

// scoped declares the operation's required scope: in the OpenAPI document
// (security requirement) and for the authenticate middleware.
func scoped(op huma.Operation, scope string) huma.Operation {
	op.Security = []map[string][]string{{"bearer": {scope}}}
	if op.Metadata == nil {
		op.Metadata = map[string]any{}
	}
	op.Metadata["scope"] = scope
	op.Errors = append(op.Errors, http.StatusUnauthorized, http.StatusForbidden)
	return op
}

// authenticate resolves the Bearer key to a principal and checks the
// operation's scope: 401 unauthenticated or 403 insufficient_scope.
func (s *Server) authenticate(ctx huma.Context, next func(huma.Context)) {
	rctx := ctx.Context()
	key, ok := strings.CutPrefix(ctx.Header("Authorization"), "Bearer ")
	if !ok {
		// Also accept a lowercase scheme, as RFC 9110 says schemes are case-insensitive.
		key, ok = strings.CutPrefix(ctx.Header("Authorization"), "bearer ")
	}
	if !ok || strings.TrimSpace(key) == "" {
		s.writeErr(ctx, newProblem(rctx, http.StatusUnauthorized, "unauthenticated",
			"Send the API key as `Authorization: Bearer <key>`.").withHeader("WWW-Authenticate", `Bearer realm="ticketsales"`))
		return
	}
	p, err := s.deps.Auth.Authenticate(rctx, strings.TrimSpace(key))
	switch {
	case errors.Is(err, apikey.ErrInvalidKey):
		s.writeErr(ctx, newProblem(rctx, http.StatusUnauthorized, "unauthenticated",
			"The API key is unknown or revoked.").withHeader("WWW-Authenticate", `Bearer realm="ticketsales", error="invalid_token"`))
		return
	case err != nil:
		s.writeErr(ctx, fromError(rctx, s.log, err))
		return
	}
	if ri, ok := rctx.Value(reqInfoKey).(*reqInfo); ok {
		ri.principal = p
	}
	if scope, _ := ctx.Operation().Metadata["scope"].(string); scope != "" && !p.Has(scope) {
		prob := newProblem(rctx, http.StatusForbidden, "insufficient_scope", "The API key lacks the scope "+scope+".")
		prob.RequiredScope = scope
		s.writeErr(ctx, prob.withHeader("WWW-Authenticate", `Bearer realm="ticketsales", error="insufficient_scope", scope="`+scope+`"`))
		return
	}
	next(ctx)
}

// writeErr writes a problem from Huma middleware.
func (s *Server) writeErr(ctx huma.Context, err error) {
	var p *Problem
	if !errors.As(err, &p) {
		p = newProblem(ctx.Context(), http.StatusInternalServerError, "internal", "")
	}
	for k, vs := range p.headers {
		for _, v := range vs {
			ctx.AppendHeader(k, v)
		}
	}
	ctx.SetHeader("Content-Type", "application/problem+json")
	ctx.SetStatus(p.Status)
	_ = s.API.Marshal(ctx.BodyWriter(), "application/json", p)
}

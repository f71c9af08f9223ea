package api

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/ticketsales/ticketsales/api/request"
	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/ratelimit"
	"github.com/ticketsales/ticketsales/store"
)

// authenticate resolves the Bearer key to a principal and checks the
// operation's scope: 401 api_key_missing, api_key_malformed or
// api_key_unknown (revoked keys too), or 403 insufficient_scope. A client
// (an IPv4 address, an IPv6 /64) past its budget of failed authentications
// gets 429 before its key is looked at, so keys cannot be guessed at the
// speed of the lookup.
func (s *Server) authenticate(ctx huma.Context, next func(huma.Context)) {
	rctx := ctx.Context()
	client := s.clientAddr(ctx)
	key, sent := bearer(ctx)
	if s.deps.AuthFailures != nil && !s.deps.Auth.KnownValid(key) {
		// A key known valid from the cache passes without a look at the
		// budget (no Redis call on a partner's request): partners behind
		// the same address as an attacker keep working. Anything else
		// waits, before any query.
		if wait, blocked := s.deps.AuthFailures.Blocked(rctx, client); blocked {
			s.writeErr(ctx, newProblem(rctx, http.StatusTooManyRequests, "rate_limited",
				"Too many failed authentications from this address; retry after the number of seconds in Retry-After.").
				withHeader("Retry-After", strconv.Itoa(max(int(math.Ceil(wait.Seconds())), 1))))
			return
		}
	}
	if !sent || key == "" || !apikey.WellFormed(key) {
		s.authFailed(rctx, client)
		s.writeErr(ctx, keyRefused(rctx, sent, key))
		return
	}
	p, err := s.deps.Auth.Authenticate(rctx, key)
	switch {
	case errors.Is(err, apikey.ErrInvalidKey):
		s.authFailed(rctx, client)
		s.writeErr(ctx, newProblem(rctx, http.StatusUnauthorized, "api_key_unknown",
			"The API key is not a key of this service, or it was revoked.").withHeader("WWW-Authenticate", `Bearer realm="ticketsales", error="invalid_token"`))
		return
	case err != nil:
		s.writeErr(ctx, fromError(rctx, s.log, err))
		return
	case p.IsTest() && !s.deps.SandboxEnabled:
		s.writeErr(ctx, newProblem(rctx, http.StatusUnauthorized, "api_key_unknown",
			"This deployment serves no sandbox: use a production key.").withHeader("WWW-Authenticate", `Bearer realm="ticketsales", error="invalid_token"`))
		return
	}
	if ri := request.From(rctx); ri != nil {
		ri.Principal = p
	}
	if !s.rateLimit(ctx, p) {
		return
	}
	if scope := request.RequiredScope(ctx.Operation()); scope != "" && !p.Has(scope) {
		prob := newProblem(rctx, http.StatusForbidden, "insufficient_scope", "The API key lacks the scope "+scope+".")
		prob.RequiredScope = scope
		s.writeErr(ctx, prob.withHeader("WWW-Authenticate", `Bearer realm="ticketsales", error="insufficient_scope", scope="`+scope+`"`))
		return
	}
	// What the key changes (a refund, a webhook endpoint) is the key's in
	// the company's audit log: its listing prefix names it (never more of
	// the key).
	prefix := key[:strings.LastIndexByte(key, '_')+7]
	next(huma.WithContext(ctx, store.WithActor(ctx.Context(), store.Actor{Kind: store.ActorKey, KeyID: p.KeyID,
		Label: "API key " + prefix + "…"})))
}

func (s *Server) authFailed(ctx context.Context, client string) {
	if s.deps.AuthFailures != nil {
		s.deps.AuthFailures.Fail(ctx, client)
	}
}

// clientAddr is the client failed authentications are counted under: the
// TCP peer's address, or with ClientIPHeader the address in that header
// (the last of a list: the one the trusted proxy saw itself); an IPv6
// address's /64, which one client usually has whole. A missing or
// unusable header counts under the peer, the proxy.
func (s *Server) clientAddr(ctx huma.Context) string {
	var trusted string
	if h := s.deps.ClientIPHeader; h != "" {
		trusted = ctx.Header(h)
	}
	return ratelimit.Client(trusted, ctx.RemoteAddr())
}

// bearer is the request's API key and whether an Authorization header was
// sent at all; key is "" when the header is not a Bearer credential.
func bearer(ctx huma.Context) (key string, sent bool) {
	h := ctx.Header("Authorization")
	if h == "" {
		return "", false
	}
	key, ok := strings.CutPrefix(h, "Bearer ")
	if !ok {
		// Also accept a lowercase scheme, as RFC 9110 says schemes are case-insensitive.
		key, ok = strings.CutPrefix(h, "bearer ")
	}
	if !ok {
		return "", true
	}
	return strings.TrimSpace(key), true
}

// keyRefused is the 401 of a request without a usable key: none sent
// (api_key_missing, a bare challenge as RFC 6750 asks), or a header that is
// not `Bearer <key>` or a key not of the shape every key has
// (api_key_malformed). Both are decided from the request alone: they say
// nothing about which keys exist.
func keyRefused(ctx context.Context, sent bool, key string) *Problem {
	if !sent {
		return newProblem(ctx, http.StatusUnauthorized, "api_key_missing",
			"Send the API key as `Authorization: Bearer <key>`.").withHeader("WWW-Authenticate", `Bearer realm="ticketsales"`)
	}
	detail := "The API key is malformed: a key is `tk_sandbox_` or `tk_production_` and 48 lowercase hex digits, " +
		"sent as `Authorization: Bearer <key>`."
	if key == "" {
		detail = "The Authorization header is not `Bearer <key>`."
	}
	return newProblem(ctx, http.StatusUnauthorized, "api_key_malformed", detail).
		withHeader("WWW-Authenticate", `Bearer realm="ticketsales", error="invalid_token"`)
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

// rateLimit applies the key's token bucket: every answer carries the IETF
// RateLimit fields; past the limit the answer is 429 with Retry-After equal
// to the RateLimit reset. A limiter failure (Redis down) lets the request
// through: the limit protects the service, it must not take it down.
func (s *Server) rateLimit(ctx huma.Context, p *apikey.Principal) bool {
	if s.deps.Limiter == nil {
		return true
	}
	l := s.deps.DefaultLimit
	if p.RateLimitRPS != nil {
		l.Rate = *p.RateLimitRPS
	}
	if p.RateLimitBurst != nil {
		l.Burst = *p.RateLimitBurst
	}
	return s.takeToken(ctx, "key:"+strconv.FormatInt(p.KeyID, 10), l, "Too many requests for this API key")
}

// takeToken takes one token of the bucket named key under limit l, sets
// the IETF RateLimit fields, and answers 429 with Retry-After (tooMany,
// then how long to wait) when the bucket is empty. A limiter failure
// (Redis down) lets the request through: the limit protects the service,
// it must not take it down.
func (s *Server) takeToken(ctx huma.Context, key string, l ratelimit.Limit, tooMany string) bool {
	rctx := ctx.Context()
	res, err := s.deps.Limiter.Allow(rctx, key, l)
	if err != nil {
		s.log.WarnContext(rctx, "rate limiter unavailable; request let through", "bucket", key, "request_id", request.ID(rctx), "err", err)
		return true
	}
	policy, limit, retryAfter := ratelimit.Headers(l, res)
	ctx.SetHeader("RateLimit-Policy", policy)
	ctx.SetHeader("RateLimit", limit)
	if !res.Allowed {
		s.writeErr(ctx, newProblem(rctx, http.StatusTooManyRequests, "rate_limited",
			tooMany+"; retry after the number of seconds in Retry-After.").withHeader("Retry-After", retryAfter))
		return false
	}
	return true
}

package api_test

import (
	"io"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"

	"github.com/ticketsales/ticketsales/api"
)

// document is the OpenAPI document as the service serves it, built without
// a database.
func document(t *testing.T) *huma.OpenAPI {
	t.Helper()
	return api.New(api.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}).API.OpenAPI()
}

// TestOpenAPIDeclaresEverySuccess: a client generated from the document can
// read every 2xx it gets: each has its body (but 204), and a 201 or 202 its
// Location, required, so a client may follow it.
func TestOpenAPIDeclaresEverySuccess(t *testing.T) {
	for path, item := range document(t).Paths {
		for method, op := range map[string]*huma.Operation{"GET": item.Get, "POST": item.Post, "PUT": item.Put, "PATCH": item.Patch, "DELETE": item.Delete} {
			if op == nil {
				continue
			}
			for status, res := range op.Responses {
				if !strings.HasPrefix(status, "2") {
					continue
				}
				if status != "204" && len(res.Content) == 0 {
					t.Errorf("%s %s: %s declared without a body", method, path, status)
				}
				if loc := res.Headers["Location"]; (status == "201" || status == "202") && (loc == nil || !loc.Required) &&
					op.OperationID != "redeliver-webhook-event" && // goes to several endpoints, or none: its body names them
					op.OperationID != "create-seat-map-token" { // a token is a credential, not a resource to read back
					t.Errorf("%s %s: %s without a required Location", method, path, status)
				}
			}
			if res := op.Responses["303"]; res != nil && (res.Headers["Location"] == nil || !res.Headers["Location"].Required) {
				t.Errorf("%s %s: 303 without a required Location", method, path)
			}
		}
	}
}

// TestOpenAPIDefaultsAreOptional: a field the server fills in when it is
// left out (ttl_minutes, the aggregator's ttl, any with a default) is
// optional in the document and in the published TypeScript types, so a
// partner's typed client may leave it out.
func TestOpenAPIDefaultsAreOptional(t *testing.T) {
	ts, err := os.ReadFile("../sdk/ts/src/schema.d.ts")
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for name, s := range document(t).Components.Schemas.Map() {
		for prop, ps := range s.Properties {
			if ps.Default == nil {
				continue
			}
			found[prop] = true
			for _, r := range s.Required {
				if r == prop {
					t.Errorf("%s.%s has a default (%v) yet is required", name, prop, ps.Default)
				}
			}
			if regexp.MustCompile(`(?m)^\s+"?` + regexp.QuoteMeta(prop) + `"?: `).Match(ts) {
				t.Errorf("%s.%s has a default yet the TypeScript types require it", name, prop)
			}
		}
	}
	for _, prop := range []string{"ttl_minutes", "ttl"} {
		if !found[prop] {
			t.Errorf("%s is not declared with its default", prop)
		}
	}
}

// TestOpenAPIAnswersAreOpen: no schema an answer or a webhook uses is closed
// (additionalProperties: false), so a partner who validates answers
// against the document keeps working when the service adds a member; and
// every schema a request body uses is closed, so a request's unknown
// member is still refused (docs/api.md, Compatibility).
func TestOpenAPIAnswersAreOpen(t *testing.T) {
	doc := document(t)
	schemas := doc.Components.Schemas.Map()
	// each calls f on s and on every schema s leads to, through references.
	var each func(s *huma.Schema, where string, seen map[string]bool, f func(*huma.Schema, string))
	each = func(s *huma.Schema, where string, seen map[string]bool, f func(*huma.Schema, string)) {
		if s == nil {
			return
		}
		if s.Ref != "" {
			name := strings.TrimPrefix(s.Ref, "#/components/schemas/")
			if seen[name] {
				return
			}
			seen[name] = true
			s, where = schemas[name], name
			if s == nil {
				t.Errorf("%s refers to %s, which is not in the document", where, name)
				return
			}
		}
		f(s, where)
		for p, ps := range s.Properties {
			each(ps, where+"."+p, seen, f)
		}
		each(s.Items, where+"[]", seen, f)
		if a, ok := s.AdditionalProperties.(*huma.Schema); ok {
			each(a, where+"{}", seen, f)
		}
		for _, list := range [][]*huma.Schema{s.AllOf, s.AnyOf, s.OneOf} {
			for _, x := range list {
				each(x, where, seen, f)
			}
		}
	}
	answers, requests := 0, 0
	for typ, item := range doc.Webhooks {
		// What the service sends to partners is read as answers are.
		for _, mt := range item.Post.RequestBody.Content {
			each(mt.Schema, "webhook "+typ, map[string]bool{}, func(s *huma.Schema, where string) {
				answers++
				if allowed, ok := s.AdditionalProperties.(bool); ok && !allowed {
					t.Errorf("%s: closed (additionalProperties: false) in a webhook", where)
				}
			})
		}
	}
	for path, item := range doc.Paths {
		for method, op := range map[string]*huma.Operation{"GET": item.Get, "POST": item.Post, "PUT": item.Put, "PATCH": item.Patch, "DELETE": item.Delete} {
			if op == nil {
				continue
			}
			for status, res := range op.Responses {
				for _, mt := range res.Content {
					each(mt.Schema, method+" "+path+" "+status, map[string]bool{}, func(s *huma.Schema, where string) {
						answers++
						if allowed, ok := s.AdditionalProperties.(bool); ok && !allowed {
							t.Errorf("%s: closed (additionalProperties: false) in an answer", where)
						}
					})
				}
			}
			if op.RequestBody == nil {
				continue
			}
			for ct, mt := range op.RequestBody.Content {
				if !strings.Contains(ct, "json") {
					continue // a browser's form (the test payment page) is not an API request
				}
				each(mt.Schema, method+" "+path+" request", map[string]bool{}, func(s *huma.Schema, where string) {
					if s.Type != "object" || len(s.Properties) == 0 {
						return
					}
					requests++
					if allowed, ok := s.AdditionalProperties.(bool); !ok || allowed {
						t.Errorf("%s: a request's object open to unknown members", where)
					}
				})
			}
		}
	}
	if answers < 80 || requests < 15 {
		t.Fatalf("checked %d answer schemas and %d request objects: the walk lost its way", answers, requests)
	}
}

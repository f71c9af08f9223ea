package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"ticketsales/api"
	"ticketsales/apikey"
	"ticketsales/store"
	"ticketsales/testenv"
)

// A malformed key is refused on its shape: an instance whose key lookups go
// to a closed pool still answers 401, while a well-formed key, which does
// need its query, fails there.
func TestMalformedKeyNeedsNoQuery(t *testing.T) {
	s := testenv.NewStack(t)
	closed, err := store.Open(context.Background(), s.DBURL)
	if err != nil {
		t.Fatal(err)
	}
	_ = closed.Close()
	url := s.APIWith(t, func(d *api.Deps) { d.Auth = apikey.NewAuthenticator(closed, 0) })

	good, _, _ := apikey.Generate(apikey.Sandbox)
	for _, key := range []string{"nope", "tk_sandbox_nope", "tk_staging_" + good[len("tk_sandbox_"):],
		strings.ToUpper(good), good + "0", good[:len(good)-1] + "g"} {
		res := testenv.Do(t, url, http.MethodGet, "/v1/cities", key, "")
		expectProblem(t, res, http.StatusUnauthorized, "unauthenticated")
	}
	if res := testenv.Do(t, url, http.MethodGet, "/v1/cities", good, ""); res.Status < 500 {
		t.Fatalf("a well-formed key over a closed pool: %d %s; the lookup did not run", res.Status, res.Body)
	}
}

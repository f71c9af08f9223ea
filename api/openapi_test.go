package api_test

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/ticketsales/ticketsales/test/testenv"
)

// TestServedDocumentIsThePublishedOne: the document a running service
// serves is the one the published clients (sdk/) were generated from (but for servers, which
// names the deployment), so the published clients fit the service.
func TestServedDocumentIsThePublishedOne(t *testing.T) {
	s := testenv.NewStack(t)
	res := s.Get(t, "/openapi.json", "")
	var served, published map[string]any
	res.Decode(t, &served)
	raw, err := os.ReadFile("../sdk/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &published); err != nil {
		t.Fatal(err)
	}
	servers, _ := served["servers"].([]any)
	if len(servers) != 1 || servers[0].(map[string]any)["url"] != s.URL {
		t.Fatalf("servers %v, want this deployment's public base URL %s", servers, s.URL)
	}
	delete(served, "servers")
	delete(published, "servers")
	if !reflect.DeepEqual(served, published) {
		t.Fatal("the served document differs from sdk/openapi.json: run `scripts/clients.sh write` and commit")
	}
}

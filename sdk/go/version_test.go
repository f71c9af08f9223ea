package ticketsales

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
)

// The SDK is versioned with the API: APIVersion is the version of the
// document the code was generated from (sdk/openapi.json, beside this
// module in the repository), and the release's major and minor are the
// API's.
func TestVersionIsTheAPIs(t *testing.T) {
	raw, err := os.ReadFile("../openapi.json")
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("not in the repository (a module download): no document beside it")
	} else if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Info struct{ Version string }
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Info.Version != APIVersion {
		t.Fatalf("the document is version %s, APIVersion %s: regenerate and set APIVersion (and Version) in ticketsales.go", doc.Info.Version, APIVersion)
	}
	majorMinor := func(v string) string { p := strings.SplitN(v, ".", 3); return strings.Join(p[:min(2, len(p))], ".") }
	if majorMinor(Version) != majorMinor(APIVersion) {
		t.Fatalf("Version %s is not a release of API %s", Version, APIVersion)
	}
	if !strings.Contains(userAgent, Version) {
		t.Fatalf("User-Agent %q does not name the release", userAgent)
	}
}

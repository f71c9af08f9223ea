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
// module in the repository), and the release is the API's version.
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
	// One number for the document and the SDKs (docs/releasing.md).
	if Version != APIVersion {
		t.Fatalf("Version %s, APIVersion %s: a release has one version", Version, APIVersion)
	}
	if !strings.Contains(userAgent, Version) {
		t.Fatalf("User-Agent %q does not name the release", userAgent)
	}
}

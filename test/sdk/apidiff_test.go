package sdk_test

import (
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/exp/apidiff"
	"golang.org/x/mod/semver"
	"golang.org/x/tools/go/packages"
)

// apiBreaksAllowed are the changes apidiff calls incompatible that do
// not break a partner's code, by the form of apidiff's message, each with
// the reason. Keep it short: anything else is fixed in the document.
var apiBreaksAllowed = []allowedBreak{{
	regexp.MustCompile(`^(ClientInterface|ClientWithResponsesInterface)\.\w+: added$`),
	"each new operation adds its methods to the clients' interfaces, and a new operation is a minor " +
		"change (docs/api.md); the interfaces are for calling the clients through, and a partner's " +
		"fake embeds one rather than implementing every method (sdk/go/README.md)",
}, {
	// Order gained metadata (a map, always present) after 1.0.0.
	regexp.MustCompile(`^(Order|EnvelopeOrder): old is comparable, new is not$`),
	"== on a decoded order compares the addresses its optional members point to (PaidAt, PaymentUrl, " +
		"…) and time.Time's locations, so no partner's code can rely on it; keeping it would take a " +
		"*map for a member that is always there",
}}

type allowedBreak struct {
	change *regexp.Regexp // matches apidiff's message
	why    string
}

// TestGoSDKStaysSourceCompatible holds the Go SDK to semantic versioning
// at the source level (docs/releasing.md: a renamed generated type is a
// breaking change): a partner's code written against the latest release
// must still compile against today's SDK. TestOldClientsWork shows the
// wire stays compatible; this compares the Go API. The latest document in
// sdk/history is generated as TestOldClientsWork generates it (the same
// client, generated once), and apidiff compares that package's exported
// API with today's sdk/go (its generated layer and the hand-written one):
// a removed or renamed identifier, a changed field type or a changed
// signature fails; additions pass. The release's hand-written files are
// not kept anywhere, so only its generated layer is compared, which is
// what the document decides.
func TestGoSDKStaysSourceCompatible(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a client and type-checks two packages")
	}
	docs, err := filepath.Glob(filepath.Join("..", "..", "sdk", "history", "openapi-*.json"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("sdk/history has no published document (%v)", err)
	}
	version := func(doc string) string {
		return "v" + strings.TrimSuffix(strings.TrimPrefix(filepath.Base(doc), "openapi-"), ".json")
	}
	latest := slices.MaxFunc(docs, func(a, b string) int { return semver.Compare(version(a), version(b)) })
	if !semver.IsValid(version(latest)) {
		t.Fatalf("%s: not openapi-X.Y.Z.json", latest)
	}

	// The old client's module lists only the runtime: -mod=mod completes
	// its requirements from the module cache. sdk/go's go.mod is complete.
	old := goAPI(t, filepath.Join(oldClientModule(t, latest, nil), "client"), "GOFLAGS=-mod=mod")
	now := goAPI(t, filepath.Join("..", "..", "sdk", "go"), "GOFLAGS=-mod=readonly")
	var breaks []string
	additions := 0
	allowed := make([][]string, len(apiBreaksAllowed))
	for _, c := range apidiff.Changes(old, now).Changes {
		i := slices.IndexFunc(apiBreaksAllowed, func(a allowedBreak) bool { return a.change.MatchString(c.Message) })
		switch {
		case c.Compatible:
			additions++
		case i >= 0:
			allowed[i] = append(allowed[i], c.Message)
		default:
			breaks = append(breaks, c.Message)
		}
	}
	t.Logf("the Go SDK against %s's generated layer: %d compatible changes", version(latest), additions)
	for i, a := range apiBreaksAllowed {
		if len(allowed[i]) > 0 {
			t.Logf("allowed, since %s:\n  %s", a.why, strings.Join(allowed[i], "\n  "))
		}
	}
	if len(breaks) > 0 {
		t.Errorf("the Go SDK breaks code written against %s, which needs a new major version (docs/releasing.md); "+
			"keep the old Go name or type in the document (x-go-type, as api/problem.go does):\n  %s",
			version(latest), strings.Join(breaks, "\n  "))
	}
}

// goAPI type-checks the package in dir, in a module of its own, with the
// environment plus env, and returns its types.
func goAPI(t *testing.T, dir string, env ...string) *types.Package {
	t.Helper()
	pkgs, err := packages.Load(&packages.Config{
		Mode: packages.NeedName | packages.NeedTypes,
		Dir:  dir,
		Env:  append(append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local"), env...),
	}, ".")
	if err != nil {
		t.Fatalf("load %s: %v", dir, err)
	}
	if len(pkgs) != 1 {
		t.Fatalf("load %s: %d packages", dir, len(pkgs))
	}
	for _, e := range pkgs[0].Errors {
		t.Errorf("load %s: %v", dir, e)
	}
	if t.Failed() {
		t.FailNow()
	}
	return pkgs[0].Types
}

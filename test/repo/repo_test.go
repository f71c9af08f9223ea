// Package repo keeps the repository a clean entrance: no build output or
// binaries in git.
package repo_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxTracked is the size above which a tracked file must be on allowed.
const maxTracked = 1 << 20

// allowed are the tracked files over maxTracked, each for a reason.
var allowed = map[string]string{
	// The Go SDK's client generated from the OpenAPI document, published for
	// partners; scripts/clients.sh checks it is current.
	"sdk/go/client.gen.go": "generated client",
	// The /docs reference UI, embedded in the binary (no CDN); its licence
	// and pinned hash sit beside it (scripts/docs-assets.sh).
	"api/reference/assets/elements-9.0.15/web-components.min.js": "embedded docs UI",
}

func TestNoLargeTrackedFiles(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("not a git checkout (%v): nothing tracked to check", err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		fi, err := os.Stat(filepath.Join(root, f))
		if err != nil || fi.Size() <= maxTracked {
			continue // deleted in the work tree, or small
		}
		if _, ok := allowed[f]; !ok {
			t.Errorf("%s is tracked and %d bytes: build output or a binary? Remove it and ignore it, or allow it in test/repo with a reason", f, fi.Size())
		}
	}
}

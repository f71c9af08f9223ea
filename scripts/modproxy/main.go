// Command modproxy publishes a Go module into a module proxy laid out in a
// directory (GOPROXY=file://DIR), as the go command downloads it: the
// release's archive of the Go SDK (scripts/release.sh) and the tests that
// install the SDK as a partner does (test/sdk, test/release) are made here,
// the one way.
//
//	go run ./scripts/modproxy -module github.com/ticketsales/ticketsales/sdk/go -dir sdk/go -version v1.0.0 -out dist/1.0.0/goproxy
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// publish puts the module in dir (its go.mod names path) at version into
// the proxy directory proxy as GOPROXY's protocol serves it: the version's
// .info (with at, the release's time), .mod and .zip, and the version in
// the list of versions.
func publish(proxy, path, dir, version string, at time.Time) error {
	mv := module.Version{Path: path, Version: version}
	if err := module.Check(path, version); err != nil {
		return fmt.Errorf("publish %s@%s: %w", path, version, err)
	}
	escaped, err := module.EscapePath(path)
	if err != nil {
		return fmt.Errorf("publish %s: %w", path, err)
	}
	escapedVersion, err := module.EscapeVersion(version)
	if err != nil {
		return fmt.Errorf("publish %s@%s: %w", path, version, err)
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return fmt.Errorf("publish %s: %w", path, err)
	}
	atV := filepath.Join(proxy, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(atV, 0o755); err != nil {
		return fmt.Errorf("publish %s: %w", path, err)
	}
	base := filepath.Join(atV, escapedVersion)
	f, err := os.Create(base + ".zip")
	if err != nil {
		return fmt.Errorf("publish %s: %w", path, err)
	}
	if err := modzip.CreateFromDir(f, mv, dir); err != nil {
		f.Close()
		return fmt.Errorf("publish %s@%s: the module zip: %w", path, version, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("publish %s: %w", path, err)
	}
	if err := os.WriteFile(base+".mod", gomod, 0o644); err != nil {
		return fmt.Errorf("publish %s: %w", path, err)
	}
	info, err := json.Marshal(struct{ Version, Time string }{version, at.UTC().Format(time.RFC3339)})
	if err != nil {
		return err
	}
	if err := os.WriteFile(base+".info", info, 0o644); err != nil {
		return fmt.Errorf("publish %s: %w", path, err)
	}
	// The list keeps the versions already published there.
	list := filepath.Join(atV, "list")
	old, err := os.ReadFile(list)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("publish %s: %w", path, err)
	}
	versions := strings.Fields(string(old))
	if !slices.Contains(versions, version) {
		versions = append(versions, version)
	}
	if err := os.WriteFile(list, []byte(strings.Join(versions, "\n")+"\n"), 0o644); err != nil {
		return fmt.Errorf("publish %s: %w", path, err)
	}
	return nil
}

func main() {
	path := flag.String("module", "", "the module's path, as its go.mod names it")
	dir := flag.String("dir", "", "the module's directory")
	version := flag.String("version", "", "the version to publish (vX.Y.Z)")
	at := flag.String("time", "", "the version's time, RFC 3339 (default now)")
	out := flag.String("out", "", "the proxy directory")
	flag.Parse()
	if *path == "" || *dir == "" || *version == "" || *out == "" {
		flag.Usage()
		log.Fatal("modproxy: -module, -dir, -version and -out are required")
	}
	when := time.Now()
	if *at != "" {
		var err error
		if when, err = time.Parse(time.RFC3339, *at); err != nil {
			log.Fatalf("modproxy: -time: %v", err)
		}
	}
	if err := publish(*out, *path, *dir, *version, when); err != nil {
		log.Fatalf("modproxy: %v", err)
	}
}

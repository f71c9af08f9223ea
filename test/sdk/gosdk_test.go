package sdk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ticketsales "github.com/ticketsales/ticketsales/sdk/go"
)

const sdkPath = "github.com/ticketsales/ticketsales/sdk/go"

// TestPartnerModuleRunsTheSandboxCheck gets the Go SDK the way a partner
// does and runs the sandbox check with it against the real stack. The SDK
// (sdk/go as it is in this checkout) is published at its release version
// to a module proxy in a directory, the layout a proxy serves; a partner's
// module outside the repository (example.com/partner, the SDK's example as
// its main.go, no replace, no workspace) requires that version, and `go
// run .` resolves it through the proxy into a module cache of its own, so
// nothing of the repository leaks in: a file the module zip leaves out, a
// dependency the SDK's go.mod forgets or an import of the server's would
// fail here. Every answer the program gets is checked against the served
// document on the way (contractProxy).
func TestPartnerModuleRunsTheSandboxCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module and runs the stack")
	}
	s, key := sandbox(t)
	version := "v" + ticketsales.Version

	proxy := t.TempDir()
	publish(t, proxy, "../../sdk/go", version)

	partner := t.TempDir()
	write(t, filepath.Join(partner, "go.mod"), "module example.com/partner\n\ngo 1.24\n\nrequire "+sdkPath+" "+version+"\n")
	// The SDK's dependencies' sums as the checksum database has them (the
	// SDK's own go.sum), so the run needs no database; the SDK's own sum,
	// which no database has yet (GONOSUMDB), the go command adds.
	copyFile(t, "../../sdk/go/go.sum", filepath.Join(partner, "go.sum"))
	copyFile(t, "../../sdk/go/example/main.go", filepath.Join(partner, "main.go"))

	env := append(os.Environ(), partnerGoEnv(t, proxy)...)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	run := func(stdout, stderr *bytes.Buffer, name string, args ...string) error {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = partner, env, stdout, stderr
		return cmd.Run()
	}

	var out bytes.Buffer
	runEnv := append(env, "TICKETS_URL="+contractProxy(t, s.URL), "TICKETS_KEY="+key)
	cmd := exec.CommandContext(ctx, "go", "run", ".")
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = partner, runEnv, &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("the partner's program: %v\n%s", err, out.String())
	}
	t.Logf("%s", out.String())
	if !strings.Contains(out.String(), "refunded order") || !strings.Contains(out.String(), "sandbox check passed (SDK "+ticketsales.Version) {
		t.Fatalf("the sandbox check did not finish:\n%s", out.String())
	}

	// It was the published module, from the proxy, at that version.
	var m, errOut bytes.Buffer
	if err := run(&m, &errOut, "go", "list", "-m", "-json", sdkPath); err != nil {
		t.Fatalf("go list -m: %v\n%s", err, errOut.String())
	}
	var got struct {
		Version, Dir string
		Replace      *struct{}
	}
	if err := json.Unmarshal(m.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Version != version || got.Replace != nil || !strings.Contains(got.Dir, "modcache") {
		t.Fatalf("the partner's SDK: %s", m.String())
	}
}

// partnerGoEnv is the go command's settings of a partner's module that
// gets the SDK from the module proxy directory proxy: ours first; then the
// downloads this machine has already (a module cache's download directory
// is a proxy's layout), then whatever proxy the machine uses; a module
// cache of its own, never an earlier run's copy of the same version.
func partnerGoEnv(t *testing.T, proxy string) []string {
	t.Helper()
	goProxy, err := exec.Command("go", "env", "GOPROXY").Output()
	if err != nil {
		t.Fatal(err)
	}
	modCache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	return []string{
		"GOPROXY=file://" + filepath.ToSlash(proxy) + ",file://" +
			filepath.ToSlash(filepath.Join(strings.TrimSpace(string(modCache)), "cache", "download")) + "," + strings.TrimSpace(string(goProxy)),
		"GOMODCACHE=" + filepath.Join(t.TempDir(), "modcache"),
		"GONOSUMDB=github.com/ticketsales",
		"GOFLAGS=-mod=mod -modcacherw", // writable, so the temporary directory can be removed
		"GOWORK=off",
		"GOTOOLCHAIN=local",
	}
}

// publish puts the module in dir at version into the proxy directory, as
// the release's archive has it: with scripts/modproxy, the one way.
func publish(t *testing.T, proxy, dir, version string) {
	t.Helper()
	dir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "./scripts/modproxy", "-module", sdkPath, "-dir", dir, "-version", version, "-out", proxy)
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("publish the SDK: %v\n%s", err, out)
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	write(t, to, string(b))
}

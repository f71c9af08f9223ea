package sdk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// TestTSSandboxCheck installs the TypeScript SDK (sdk/ts) from its lock
// file as CI would, type-checks it and its example strictly, builds it,
// runs its own tests (sdk/ts/test) and the example's sandbox check with
// Node against the real stack:
// the published types, the client's auth, idempotency keys and problem
// errors, and the example partners copy all work on today's API.
func TestTSSandboxCheck(t *testing.T) {
	dir := tsSDKCopy(t)
	tsRun(t, dir, nil, time.Minute, "npm", "ci", "--prefer-offline", "--no-audit", "--no-fund")
	tsRun(t, dir, nil, time.Minute, "npx", "--no-install", "tsc", "--noEmit")
	tsRun(t, dir, nil, time.Minute, "npm", "run", "build")
	for _, f := range []string{"dist/index.js", "dist/index.d.ts", "dist/schema.d.ts"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("npm run build made no %s: %v", f, err)
		}
	}
	tsRun(t, dir, nil, time.Minute, "npx", "--no-install", "tsc", "-p", "tsconfig.examples.json")
	// The client's retries, keys and problems against a loopback server.
	tsRun(t, dir, nil, time.Minute, "node", "--test", "build/test/")

	base, key := tsSandbox(t)
	tsSameVersion(t, base, dir)
	out := tsRun(t, dir, []string{"TICKETS_URL=" + base, "TICKETS_KEY=" + key}, time.Minute,
		"node", "build/examples/sandbox-check.js")
	for _, want := range []string{"paid on the test gateway", "general admission order", "scheduled order",
		"refunded order", "a second refund is refused: 409 invalid_state", "sandbox check passed"} {
		if !strings.Contains(out, want) {
			t.Errorf("the sandbox check did not say %q:\n%s", want, out)
		}
	}

	// A wrong key fails the example with the API's problem, not a pass.
	cmd := exec.Command("node", "build/examples/sandbox-check.js")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "TICKETS_URL="+base, "TICKETS_KEY=tk_sandbox_"+strings.Repeat("0", 48))
	if b, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(b), "401 api_key_unknown") {
		t.Errorf("the example with an unknown key: %v\n%s", err, b)
	}
}

// tsSameVersion checks that the package's version is the served API
// document's info.version: a partner reads one number for both.
func tsSameVersion(t *testing.T, base, dir string) {
	t.Helper()
	res, err := http.Get(base + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var doc struct {
		Info struct{ Version string } `json:"info"`
	}
	if err := json.NewDecoder(res.Body).Decode(&doc); err != nil {
		t.Fatalf("the served document: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatalf("sdk/ts/package.json: %v", err)
	}
	if doc.Info.Version == "" || pkg.Version != doc.Info.Version {
		t.Errorf("sdk/ts/package.json version %q, the API document's info.version %q: they move together", pkg.Version, doc.Info.Version)
	}
}

// tsSandbox starts the stack with its worker, the demo catalog and a
// sandbox key, as `make run` serves a partner.
func tsSandbox(t *testing.T) (url, key string) {
	t.Helper()
	s := testenv.NewStack(t)
	s.StartWorker(t)
	company := s.Company(t, "Demo")
	s.Import(t, company, catalogfile.Demo(time.Now()))
	key, _ = s.Key(t, company, apikey.Sandbox)
	return s.URL, key
}

// tsNode fails the test unless Node.js 20 or later and npm are on PATH:
// in `make test` their absence is a broken machine, never a skip.
func tsNode(t *testing.T) {
	t.Helper()
	testenv.SkipInUnit(t)
	for _, bin := range []string{"node", "npm", "npx"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s not found: the TypeScript SDK tests need Node.js 20+ with npm (`make test` installs Debian's nodejs and npm when missing)", bin)
		}
	}
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		t.Fatalf("node --version: %v", err)
	}
	major, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(strings.TrimSpace(string(out)), "v"), ".", 2)[0])
	if major < 20 {
		t.Fatalf("node %s: the TypeScript SDK needs Node.js 20 or later", strings.TrimSpace(string(out)))
	}
}

// tsSDKCopy copies sdk/ts, without what npm and tsc make, to sdk/ts of a
// fresh directory laid out as the repository, and returns the copy: the
// tests never write into the checkout.
func tsSDKCopy(t *testing.T) string {
	t.Helper()
	tsNode(t)
	src, err := filepath.Abs(filepath.Join("..", "..", "sdk", "ts"))
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "repo", "sdk", "ts")
	err = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch rel {
			case "node_modules", "dist", "build":
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatalf("copy sdk/ts: %v", err)
	}
	return dst
}

// tsRun runs a command in dir with the environment plus env, fails the
// test with its output unless it succeeds within limit, and returns its
// output. npm uses the user's cache (--prefer-offline where it installs),
// so a second run needs no network.
func tsRun(t *testing.T, dir string, env []string, limit time.Duration, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "npm_config_update_notifier=false", "NO_COLOR=1"), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v (after %s)\n%s", name, strings.Join(args, " "), err, time.Since(start).Round(time.Millisecond), out.String())
	}
	t.Logf("%s %s: %s", name, strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	return out.String()
}

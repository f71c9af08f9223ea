package sdk_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	ticketsales "github.com/ticketsales/ticketsales/sdk/go"
)

// TestReleaseArchivesInstall makes a release of this checkout with
// scripts/release.sh in its test mode (--dry-run: no tag, sdk/history left
// alone; the clients' check is make test's own step) and installs each SDK
// from its archive as a partner without the repository does: the Go SDK
// with go get through the module proxy unpacked from its tar.gz, the
// TypeScript SDK with npm install of its tarball (its dependencies from
// the registry or npm's cache, as for anyone). A program with each lists
// the sandbox's events.
func TestReleaseArchivesInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a release and runs the stack")
	}
	tsNode(t)
	version := ticketsales.Version
	dist := t.TempDir()
	tsRun(t, filepath.Join("..", ".."), nil, 3*time.Minute, "scripts/release.sh", version, "--dry-run", "--skip-clients-check", "--out", dist)
	tsRun(t, dist, nil, time.Minute, "sha256sum", "--check", "--strict", "SHA256SUMS")
	s, key := sandbox(t)
	api := []string{"TICKETS_URL=" + contractProxy(t, s.URL), "TICKETS_KEY=" + key}
	listed := regexp.MustCompile(`(?m)^listed [1-9]\d* events, the first "[^"]+"$`)

	t.Run("go", func(t *testing.T) {
		unpacked := t.TempDir()
		tsRun(t, unpacked, nil, time.Minute, "tar", "-xzf", filepath.Join(dist, "ticketsales-sdk-go-"+version+".goproxy.tar.gz"))
		partner := t.TempDir()
		write(t, filepath.Join(partner, "go.mod"), "module example.com/partner\n\ngo 1.24\n")
		write(t, filepath.Join(partner, "main.go"), goListEvents)
		env := partnerGoEnv(t, filepath.Join(unpacked, "goproxy"))
		tsRun(t, partner, env, 2*time.Minute, "go", "get", sdkPath+"@v"+version)
		out := tsRun(t, partner, append(env, api...), 2*time.Minute, "go", "run", ".")
		if !listed.MatchString(out) || !regexp.MustCompile(`SDK `+regexp.QuoteMeta(version)+`\b`).MatchString(out) {
			t.Fatalf("the Go program with the released SDK:\n%s", out)
		}
		t.Logf("%s", out)
	})

	t.Run("typescript", func(t *testing.T) {
		partner := t.TempDir()
		write(t, filepath.Join(partner, "package.json"), `{"name": "partner", "private": true, "type": "module"}`+"\n")
		write(t, filepath.Join(partner, "list-events.mjs"), tsListEvents)
		tsRun(t, partner, nil, 2*time.Minute, "npm", "install", "--prefer-offline", "--no-audit", "--no-fund",
			filepath.Join(dist, "ticketsales-sdk-"+version+".tgz"))
		if _, err := os.Stat(filepath.Join(partner, "node_modules", "@ticketsales", "sdk", "dist", "index.d.ts")); err != nil {
			t.Fatalf("the installed package has no types: %v", err)
		}
		out := tsRun(t, partner, api, time.Minute, "node", "list-events.mjs")
		if !listed.MatchString(out) {
			t.Fatalf("the Node program with the released SDK:\n%s", out)
		}
		t.Logf("%s", out)
	})
}

const goListEvents = `package main

import (
	"context"
	"fmt"
	"log"
	"os"

	ticketsales "github.com/ticketsales/ticketsales/sdk/go"
)

func main() {
	c, err := ticketsales.New(os.Getenv("TICKETS_URL"), os.Getenv("TICKETS_KEY"))
	if err != nil {
		log.Fatal(err)
	}
	res, err := ticketsales.Check(c.ListEventsWithResponse(context.Background(), nil))
	if err != nil {
		log.Fatal(err)
	}
	if len(res.JSON200.Data) == 0 {
		log.Fatal("no events")
	}
	fmt.Printf("listed %d events, the first %q\n", len(res.JSON200.Data), res.JSON200.Data[0].Title)
	fmt.Printf("SDK %s, API %s\n", ticketsales.Version, ticketsales.APIVersion)
}
`

const tsListEvents = `import { createTicketsClient, ok } from "@ticketsales/sdk";

const tickets = createTicketsClient({ baseUrl: process.env.TICKETS_URL, apiKey: process.env.TICKETS_KEY });
const { data: events } = await ok(tickets.GET("/v1/events"));
if (events.length === 0) throw new Error("no events");
console.log(` + "`listed ${events.length} events, the first ${JSON.stringify(events[0].title)}`" + `);
`

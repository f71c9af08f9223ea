package compose_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
)

// repoRoot is the repository root; `go test` runs in the package directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// loadProject loads docker-compose.yml the way `docker compose config` would:
// interpolation, schema validation, normalization and the consistency check
// all on. The process environment is deliberately not used, so the result
// depends only on the file and its ${VAR:-default} defaults.
func loadProject(t *testing.T) *types.Project {
	t.Helper()
	root := repoRoot(t)
	opts, err := cli.NewProjectOptions(
		[]string{filepath.Join(root, "docker-compose.yml")},
		cli.WithWorkingDirectory(root),
		cli.WithInterpolation(true),
		cli.WithNormalization(true),
		cli.WithConsistency(true),
		cli.WithResolvedPaths(true),
		cli.WithLoadOptions(func(o *loader.Options) {
			o.SkipValidation = false
			o.SkipInterpolation = false
			o.SkipConsistencyCheck = false
		}),
	)
	if err != nil {
		t.Fatalf("compose options: %v", err)
	}
	project, err := cli.ProjectFromOptions(context.Background(), opts)
	if err != nil {
		t.Fatalf("load docker-compose.yml: %v", err)
	}
	return project
}

func TestComposeFile(t *testing.T) {
	project := loadProject(t)
	root := repoRoot(t)

	for _, name := range []string{
		"postgres", "temporal", "temporal-search-attributes", "temporal-ui",
		"redis", "migrate", "api", "worker", "api-lb",
	} {
		if _, ok := project.Services[name]; !ok {
			t.Errorf("service %q missing; have %v", name, project.ServiceNames())
		}
	}

	t.Run("api replicas and env", func(t *testing.T) {
		api, ok := project.Services["api"]
		if !ok {
			t.Skip("no api service")
		}
		if api.Deploy == nil || api.Deploy.Replicas == nil || *api.Deploy.Replicas != 2 {
			t.Errorf("api deploy.replicas: want 2, got %+v", api.Deploy)
		}
		if api.ContainerName != "" {
			t.Errorf("api has container_name %q; replicas need generated names", api.ContainerName)
		}
		for _, p := range api.Ports {
			if p.Published != "" {
				t.Errorf("api publishes host port %q; two replicas cannot share it", p.Published)
			}
		}
		for key, want := range map[string]string{
			"REDIS_URL":        "redis://redis:6379/0",
			"HTTP_ADDR":        "0.0.0.0:8080",
			"TEMPORAL_ADDRESS": "temporal:7233",
			"CLIENT_IP_HEADER": "X-Real-IP",
		} {
			got := api.Environment[key]
			if got == nil || *got != want {
				t.Errorf("api env %s: want %q, got %v", key, want, deref(got))
			}
		}
		for _, key := range []string{"DATABASE_URL", "TEMPORAL_NAMESPACE", "PUBLIC_BASE_URL"} {
			if v := api.Environment[key]; v == nil || *v == "" {
				t.Errorf("api env %s not set", key)
			}
		}
	})

	t.Run("app services built from repo Dockerfile", func(t *testing.T) {
		for _, name := range []string{"api", "worker", "migrate"} {
			svc, ok := project.Services[name]
			if !ok {
				continue
			}
			if svc.Build == nil {
				t.Errorf("%s: no build section", name)
				continue
			}
			if filepath.Clean(svc.Build.Context) != root {
				t.Errorf("%s: build context %q, want repo root %q", name, svc.Build.Context, root)
			}
			df := svc.Build.Dockerfile
			if !filepath.IsAbs(df) {
				df = filepath.Join(svc.Build.Context, df)
			}
			if filepath.Clean(df) != filepath.Join(root, "Dockerfile") {
				t.Errorf("%s: dockerfile %q, want %q", name, df, filepath.Join(root, "Dockerfile"))
			}
		}
	})

	t.Run("depends_on targets exist", func(t *testing.T) {
		for name, svc := range project.Services {
			for dep := range svc.DependsOn {
				if _, ok := project.Services[dep]; !ok {
					t.Errorf("%s depends_on unknown service %q", name, dep)
				}
			}
		}
	})

	t.Run("load balancer proxies to api", func(t *testing.T) {
		cfg, ok := project.Configs["api-lb-nginx"]
		if !ok {
			t.Fatal("config api-lb-nginx missing")
		}
		if !strings.Contains(cfg.Content, "server api:8080") {
			t.Errorf("nginx config does not proxy to api:8080:\n%s", cfg.Content)
		}
		// The api trusts this header for the client's address: nginx must
		// set it, overwriting whatever the client sent.
		if !strings.Contains(cfg.Content, "proxy_set_header X-Real-IP $remote_addr;") {
			t.Errorf("nginx does not set X-Real-IP from the peer address:\n%s", cfg.Content)
		}
		// $$host in the compose file must come out as a literal nginx variable.
		if !strings.Contains(cfg.Content, "$host") {
			t.Errorf("nginx variables were interpolated away:\n%s", cfg.Content)
		}
	})
}

func TestDockerfileBuildsAllBinaries(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	dockerfile := string(data)
	for _, pkg := range []string{"./cmd/api", "./cmd/worker", "./cmd/ticketctl"} {
		if !strings.Contains(dockerfile, pkg) {
			t.Errorf("Dockerfile does not build %s", pkg)
		}
	}
	if !strings.Contains(dockerfile, "CGO_ENABLED=0") {
		t.Error("Dockerfile does not set CGO_ENABLED=0")
	}
}

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

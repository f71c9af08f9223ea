package config

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// The package doc sends readers to the operator's table of variables: each
// one read here must have its row there.
func TestEveryVariableIsDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/operating.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "\n## Configuration\n")
	if !ok {
		t.Fatal("docs/operating.md has no Configuration section")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	ty := reflect.TypeFor[Config]()
	for i := range ty.NumField() {
		name, _, _ := strings.Cut(ty.Field(i).Tag.Get("env"), ",")
		if name != "" && !strings.Contains(table, "`"+name+"`") {
			t.Errorf("%s (Config.%s) is not in docs/operating.md, Configuration", name, ty.Field(i).Name)
		}
	}
}

func TestLoadRefusesSettingsThatWouldStopTheService(t *testing.T) {
	for _, bad := range []struct{ name, value string }{
		{"REAP_INTERVAL", "0s"}, {"REAP_GRACE", "-1s"}, {"RESERVATION_START_WORKERS", "0"}, {"RESERVATION_START_QUEUE", "-1"},
		{"WEBHOOK_ENDPOINTS_MAX", "0"}, {"WEBHOOK_TESTS_PER_MINUTE", "-1"}, {"WEBHOOK_REDELIVERIES_PER_MINUTE", "-1"},
		{"WEBHOOK_WORKER_ACTIVITIES", "0"}, {"WEBHOOK_WORKER_WORKFLOW_TASKS", "1"}, {"WEBHOOK_WORKER_POLLERS", "1"},
		{"WEBHOOK_ATTEMPTS_PER_SECOND", "-1"},
		{"CABINET_PASSWORD_CHECKS", "-1"}, {"WORKER_NICE", "-1"}, {"WORKER_NICE", "20"}, {"ORDER_REVISION", "-1"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			t.Setenv(bad.name, bad.value)
			if _, err := Load(); err == nil {
				t.Fatalf("%s=%s accepted", bad.name, bad.value)
			}
		})
	}
	if c, err := Load(); err != nil || c.ReapInterval <= 0 || c.StartWorkers < 1 || c.WorkerNice != 0 || c.DebugPprof || c.OrderRevision != 1 {
		t.Fatalf("defaults: %+v %v", c, err)
	}
}

// Webhook deliveries have a task queue of their own beside the main one
// unless one is named, a worker with limits of its own, and caps per
// environment.
func TestWebhookSettings(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if c.WebhookTaskQueue != "ticketsales-webhooks" || c.WebhookWorkerActivities != 100 || c.WebhookWorkerWorkflowTasks != 10 ||
		c.WebhookWorkerPollers != 2 || c.WebhookAttemptsPerSecond != 0 {
		t.Fatalf("webhook worker defaults: %q %d %d %d %v", c.WebhookTaskQueue, c.WebhookWorkerActivities, c.WebhookWorkerWorkflowTasks,
			c.WebhookWorkerPollers, c.WebhookAttemptsPerSecond)
	}
	if c.WebhookEndpointsMax != 10 || c.WebhookTestsPerMinute != 10 || c.WebhookRedeliveriesPerMinute != 60 {
		t.Fatalf("webhook caps: %d %d %d", c.WebhookEndpointsMax, c.WebhookTestsPerMinute, c.WebhookRedeliveriesPerMinute)
	}
	t.Setenv("TASK_QUEUE", "sales-eu")
	if c, err := Load(); err != nil || c.WebhookTaskQueue != "sales-eu-webhooks" {
		t.Fatalf("webhook queue beside TASK_QUEUE=sales-eu: %q %v", c.WebhookTaskQueue, err)
	}
	t.Setenv("WEBHOOK_TASK_QUEUE", "hooks")
	if c, err := Load(); err != nil || c.WebhookTaskQueue != "hooks" {
		t.Fatalf("WEBHOOK_TASK_QUEUE=hooks: %q %v", c.WebhookTaskQueue, err)
	}
}

// TestSecretsOutsideDevelopment: the api and the worker refuse unset, short
// or well-known secrets unless APP_ENV=development, which fills them in.
func TestSecretsOutsideDevelopment(t *testing.T) {
	strong := strings.Repeat("9f3a", 16)
	for _, c := range []struct {
		name, token, gateway string
		ok                   bool
	}{
		{"unset", "", "", false},
		{"development defaults", "dev-order-token-secret", "dev-gateway-secret", false},
		{"short", strong, "short-secret", false},
		{"known", strong, "changeme", false},
		{"strong", strong, strong + "x", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("APP_ENV", "")
			t.Setenv("ORDER_TOKEN_SECRET", c.token)
			t.Setenv("GATEWAY_SECRET", c.gateway)
			cfg, err := Load()
			if err != nil {
				t.Fatal(err)
			}
			if err := cfg.CheckSecrets(); (err == nil) != c.ok {
				t.Fatalf("CheckSecrets: %v, want ok=%v", err, c.ok)
			}
		})
	}
	t.Setenv("APP_ENV", "development")
	t.Setenv("ORDER_TOKEN_SECRET", "")
	t.Setenv("GATEWAY_SECRET", "")
	cfg, err := Load()
	if err != nil || cfg.CheckSecrets() != nil || cfg.OrderTokenSecret == "" || cfg.GatewaySecret == "" {
		t.Fatalf("development: %v %v", err, cfg.CheckSecrets())
	}
	t.Setenv("APP_ENV", "staging")
	if _, err := Load(); err == nil {
		t.Fatal("APP_ENV=staging accepted")
	}
}

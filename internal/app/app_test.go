package app_test

import (
	"strings"
	"testing"

	"github.com/ticketsales/ticketsales/internal/app"
	"github.com/ticketsales/ticketsales/internal/config"
	"github.com/ticketsales/ticketsales/internal/holds"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// TestProcessesRefuseDevelopmentSecrets: outside development neither the
// api nor the worker (both start from app.Settings) runs without secrets of
// its own.
func TestProcessesRefuseDevelopmentSecrets(t *testing.T) {
	t.Setenv("APP_ENV", "production")
	t.Setenv("ORDER_TOKEN_SECRET", "dev-order-token-secret")
	t.Setenv("GATEWAY_SECRET", "")
	_, err := app.Settings()
	if err == nil || !strings.Contains(err.Error(), "ORDER_TOKEN_SECRET") || !strings.Contains(err.Error(), "GATEWAY_SECRET") {
		t.Fatalf("accepted, or did not say why: %v", err)
	}
	t.Setenv("APP_ENV", "development")
	if _, err := app.Settings(); err != nil {
		t.Fatalf("development: %v", err)
	}
}

// An api must not start orders at a revision its release's workers do not
// run: their workflows would be stuck at their first task.
func TestNewServicesRefusesAnUnknownOrderRevision(t *testing.T) {
	cfg := config.Defaults()
	cfg.OrderRevision = contract.OrderRevision + 1
	if _, err := app.NewServices(cfg, app.Conns{}, holds.Deps{}); err == nil || !strings.Contains(err.Error(), "ORDER_REVISION") {
		t.Fatalf("want ORDER_REVISION refused, got %v", err)
	}
}

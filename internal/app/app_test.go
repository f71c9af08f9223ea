package app_test

import (
	"strings"
	"testing"

	"github.com/ticketsales/ticketsales/internal/app"
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

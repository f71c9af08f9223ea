package main

import (
	"strings"
	"testing"
)

// TestRefusesToStartWithDevelopmentSecrets: outside development the process
// does not start without secrets of its own.
func TestRefusesToStartWithDevelopmentSecrets(t *testing.T) {
	t.Setenv("APP_ENV", "production")
	t.Setenv("ORDER_TOKEN_SECRET", "dev-order-token-secret")
	t.Setenv("GATEWAY_SECRET", "")
	err := run()
	if err == nil || !strings.Contains(err.Error(), "ORDER_TOKEN_SECRET") || !strings.Contains(err.Error(), "GATEWAY_SECRET") {
		t.Fatalf("started, or did not say why: %v", err)
	}
}

package config

import "testing"

func TestLoadRefusesSettingsThatWouldStopTheService(t *testing.T) {
	for _, bad := range []struct{ name, value string }{
		{"REAP_INTERVAL", "0s"}, {"REAP_GRACE", "-1s"}, {"RESERVATION_START_WORKERS", "0"}, {"RESERVATION_START_QUEUE", "-1"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			t.Setenv(bad.name, bad.value)
			if _, err := Load(); err == nil {
				t.Fatalf("%s=%s accepted", bad.name, bad.value)
			}
		})
	}
	if c, err := Load(); err != nil || c.ReapInterval <= 0 || c.StartWorkers < 1 {
		t.Fatalf("defaults: %+v %v", c, err)
	}
}

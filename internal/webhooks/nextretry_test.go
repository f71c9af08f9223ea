package webhooks_test

import (
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/webhooks"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// The next retry follows the delivery workflow's schedule: 15 s after the
// first failed attempt, doubling, at most an hour apart, never past the
// run's give-up time; counted per run (a redelivery starts over).
func TestNextRetryFollowsTheSchedule(t *testing.T) {
	r := contract.DefaultWebhookRetry
	t0 := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(run string, n int, when time.Time, ms int) store.WebhookAttempt {
		return store.WebhookAttempt{RunID: run, Attempt: n, AttemptedAt: when, DurationMS: ms}
	}
	if got := webhooks.NextRetry(r, nil); got != nil {
		t.Fatalf("no attempt yet: %v", got)
	}
	cases := []struct {
		name     string
		attempts []store.WebhookAttempt // newest first
		want     time.Time
	}{
		{"after the first", []store.WebhookAttempt{at("a", 1, t0, 200)}, t0.Add(15*time.Second + 200*time.Millisecond)},
		{"after the third", []store.WebhookAttempt{at("a", 3, t0.Add(time.Minute), 0), at("a", 2, t0.Add(20*time.Second), 0), at("a", 1, t0, 0)},
			t0.Add(time.Minute + 60*time.Second)},
		{"at most an hour apart", []store.WebhookAttempt{at("a", 12, t0.Add(10*time.Hour), 0), at("a", 1, t0, 0)}, t0.Add(11 * time.Hour)},
		{"never past the window", []store.WebhookAttempt{at("a", 80, t0.Add(71*time.Hour+30*time.Minute), 0), at("a", 1, t0, 0)},
			t0.Add(72 * time.Hour)},
		{"a redelivery starts over", []store.WebhookAttempt{at("b", 1, t0.Add(5*time.Hour), 0), at("a", 9, t0.Add(4*time.Hour), 0), at("a", 1, t0, 0)},
			t0.Add(5*time.Hour + 15*time.Second)},
	}
	for _, c := range cases {
		got := webhooks.NextRetry(r, c.attempts)
		if got == nil || !got.Equal(c.want) {
			t.Errorf("%s: next retry %v, want %v", c.name, got, c.want)
		}
	}
}

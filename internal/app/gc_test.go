package app_test

import (
	"os"
	"runtime/debug"
	"testing"

	"github.com/ticketsales/ticketsales/internal/app"
)

// TestTuneGC: without GOGC (or with it empty) the processes collect at
// DefaultGCPercent; an operator's GOGC wins.
func TestTuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "150") // the runtime read it at start; TuneGC must leave the target alone
	debug.SetGCPercent(150)
	app.TuneGC()
	if got := debug.SetGCPercent(100); got != 150 {
		t.Errorf("GOGC=150: the target became %d, want it left at 150", got)
	}
	for _, unset := range []bool{false, true} {
		t.Setenv("GOGC", "") // empty: as good as unset
		if unset {
			if err := os.Unsetenv("GOGC"); err != nil {
				t.Fatal(err)
			}
		}
		debug.SetGCPercent(100)
		app.TuneGC()
		if got := debug.SetGCPercent(100); got != app.DefaultGCPercent {
			t.Errorf("GOGC unset (%v) or empty: the target is %d, want %d", unset, got, app.DefaultGCPercent)
		}
	}
}

package app_test

import (
	"os"
	"runtime/debug"
	"testing"

	"github.com/ticketsales/ticketsales/internal/app"
)

// TestTuneGC: without GOGC the processes collect at DefaultGCPercent; an
// operator's GOGC wins.
func TestTuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "")
	debug.SetGCPercent(100)
	app.TuneGC()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC set (even empty): the target became %d, want it left at 100", got)
	}
	// t.Setenv restores GOGC after the test; unset it for this part.
	if err := os.Unsetenv("GOGC"); err != nil {
		t.Fatal(err)
	}
	app.TuneGC()
	if got := debug.SetGCPercent(100); got != app.DefaultGCPercent {
		t.Errorf("GOGC unset: the target is %d, want %d", got, app.DefaultGCPercent)
	}
}

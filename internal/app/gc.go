package app

import (
	"os"
	"runtime/debug"
)

// DefaultGCPercent is the garbage collector's target both processes run
// with when GOGC is not set: the heap may grow to three times what is live
// before a collection, against Go's two. Their live heaps are small (tens
// of MB: caches of seat maps and sales), and at Go's default the sell-out's
// api spent about an eighth of its CPU marking; memory for CPU is the
// better trade here (docs/performance.md has the peak RSS beside it).
const DefaultGCPercent = 200

// TuneGC sets DefaultGCPercent unless GOGC says otherwise (empty, as an
// unset variable interpolated by compose is, says nothing).
func TuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(DefaultGCPercent)
	}
}

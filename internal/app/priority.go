package app

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// LowerPriority gives this process the CPU priority nice (0–19; 0 does
// nothing), so that on a shared machine its work waits while another
// process's is runnable: the worker's saga work yields to the api's
// requests. Linux keeps a nice value per thread, so every thread the
// process has is set, and those the Go runtime starts later inherit it
// from the thread that starts them.
func LowerPriority(nice int) error {
	if nice == 0 {
		return nil
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("lower priority to nice %d: %w", nice, err)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		// A thread that ended meanwhile is not an error.
		if err := unix.Setpriority(unix.PRIO_PROCESS, tid, nice); err != nil && err != unix.ESRCH {
			return fmt.Errorf("lower priority of thread %d to nice %d: %w", tid, nice, err)
		}
	}
	return nil
}

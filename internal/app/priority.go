package app

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// LowerPriority gives this process the CPU priority nice (0–19; 0 does
// nothing), so that its work waits while another process's is runnable:
// the worker's saga work yields to the api's requests. Linux keeps a nice
// value per thread, so every thread of the process is set, until a pass
// finds none it has not set (a thread started meanwhile by one not yet set
// would keep the old value); threads started later inherit it from the
// thread that starts them. Nice orders threads within one scheduling group
// (a session under autogroup, a cgroup): across containers it is the
// cgroups' CPU weights that count (docs/operating.md).
func LowerPriority(nice int) error {
	if nice == 0 {
		return nil
	}
	set := map[int]bool{}
	var errs []error
	for {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return fmt.Errorf("lower priority to nice %d: %w", nice, err)
		}
		fresh := 0
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil || set[tid] {
				continue
			}
			set[tid] = true
			fresh++
			// A thread that ended meanwhile is not an error; one refused
			// (a process started at a lower priority) does not stop the rest.
			if err := unix.Setpriority(unix.PRIO_PROCESS, tid, nice); err != nil && !errors.Is(err, unix.ESRCH) {
				errs = append(errs, fmt.Errorf("thread %d: %w", tid, err))
			}
		}
		if fresh == 0 {
			break
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("lower priority to nice %d: %w", nice, errors.Join(errs...))
	}
	return nil
}

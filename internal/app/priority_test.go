package app_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ticketsales/ticketsales/internal/app"
)

// TestLowerPriorityReachesEveryThread runs a child process (this test
// binary) that lowers its priority to nice 7 and then starts threads of its
// own: every thread it has, those from before and after, runs at nice 7.
// (Linux keeps a nice value per thread: setting only the calling one would
// leave the Go runtime's other threads at full priority.)
func TestLowerPriorityReachesEveryThread(t *testing.T) {
	if os.Getenv("LOWER_PRIORITY_CHILD") != "" {
		lowerAndReport()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLowerPriorityReachesEveryThread$", "-test.count=1")
	cmd.Env = append(os.Environ(), "LOWER_PRIORITY_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var nices []string
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "nices: "); ok {
			nices = strings.Fields(v)
		}
	}
	if len(nices) < 4 {
		t.Fatalf("want the nice value of at least 4 threads, got %q\n%s", nices, out)
	}
	for _, n := range nices {
		if n != "7" {
			t.Fatalf("a thread runs at nice %s, want 7 for all: %v", n, nices)
		}
	}
	if err := app.LowerPriority(0); err != nil {
		t.Fatalf("nice 0 is a no-op, got %v", err)
	}
}

func lowerAndReport() {
	if err := app.LowerPriority(7); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	// Threads started after it: goroutines locked to threads of their own.
	var started, done sync.WaitGroup
	release := make(chan struct{})
	for range 4 {
		started.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			started.Done()
			<-release
		}()
	}
	started.Wait()
	tasks, _ := os.ReadDir("/proc/self/task")
	var nices []string
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/stat")
		if err != nil {
			continue
		}
		// Field 19 is nice; the command name in parentheses may hold spaces.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		n, _ := strconv.Atoi(f[16])
		nices = append(nices, strconv.Itoa(n))
	}
	close(release)
	done.Wait()
	fmt.Println("nices:", strings.Join(nices, " "))
}

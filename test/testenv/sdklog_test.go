package testenv_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/ticketsales/ticketsales/test/testenv"
)

func napWorkflow(ctx workflow.Context) error { return workflow.Sleep(ctx, time.Millisecond) }

// TestStackSDKLogsAtHarnessLevel: the test processes' Temporal SDK logs
// at the harness's level (TEST_LOG), as a deployment's does at LOG_LEVEL.
// A workflow's timer is a DEBUG line of the SDK ("NewTimer"): at info it
// is nowhere in the output, on stdout or stderr; at debug it is there.
func TestStackSDKLogsAtHarnessLevel(t *testing.T) {
	testenv.SkipInUnit(t)
	for _, tt := range []struct {
		level     string
		wantDebug bool
	}{{"info", false}, {"debug", true}} {
		t.Run(tt.level, func(t *testing.T) {
			t.Setenv("TEST_LOG", tt.level)
			output := captureOutput(t)
			s := testenv.NewStack(t)
			queue := s.TaskQueue + "-nap"
			w := worker.New(s.Temporal, queue, worker.Options{})
			w.RegisterWorkflow(napWorkflow)
			if err := w.Start(); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			run, err := s.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: queue}, napWorkflow)
			if err == nil {
				err = run.Get(ctx, nil)
			}
			w.Stop()
			if err != nil {
				t.Fatalf("workflow: %v", err)
			}
			text := output()
			if got := strings.Contains(text, "NewTimer"); got != tt.wantDebug {
				t.Errorf("TEST_LOG=%s: the SDK's DEBUG line NewTimer in the output: %v, want %v\n%s",
					tt.level, got, tt.wantDebug, lastLines(text, 20))
			}
		})
	}
}

// captureOutput points stdout and stderr at a pipe until the returned
// function is called (or the test ends), which returns what was written.
func captureOutput(t *testing.T) func() string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = w, w
	var buf bytes.Buffer
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(&buf, r); close(copied) }()
	restored := false
	restore := func() string {
		if !restored {
			restored = true
			os.Stdout, os.Stderr = stdout, stderr
			_ = w.Close()
			<-copied
			_ = r.Close()
		}
		return buf.String()
	}
	t.Cleanup(func() { restore() })
	return restore
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}

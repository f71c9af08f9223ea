package distribution_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"

	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/internal/distribution"
	"github.com/ticketsales/ticketsales/internal/window"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// SetTerms keeps one release workflow per channel and event on the dev
// server: a moved release_at replaces the run, a removed one ends it, and
// the reaper's sweep starts the run of an overdue release that has none.
// No worker runs: the runs only wait.
func TestSetTermsStartsReplacesAndEndsTheReleaseWorkflow(t *testing.T) {
	ctx := context.Background()
	s := testenv.NewStack(t)
	company := s.Company(t, "Releaser")
	s.Import(t, company, catalogfile.Demo(time.Now()))
	var event int64
	if err := s.DB.NewRaw("SELECT id FROM events WHERE slug = 'swan-lake' AND company_id = ?", company).Scan(ctx, &event); err != nil {
		t.Fatal(err)
	}
	ch, err := store.UpsertChannel(ctx, s.DB, company, "reseller", "Reseller")
	if err != nil {
		t.Fatal(err)
	}
	d := distribution.New(s.DB, nil, nil, distribution.Settings{Temporal: s.Temporal, TaskQueue: s.TaskQueue})
	wid := contract.AllocationReleaseWorkflowID(event, ch.ID)
	t.Cleanup(func() { _ = s.Temporal.TerminateWorkflow(context.Background(), wid, "", "test over") })
	describe := func(runID string) (enums.WorkflowExecutionStatus, string) {
		t.Helper()
		r, err := s.Temporal.DescribeWorkflowExecution(ctx, wid, runID)
		if err != nil {
			t.Fatal(err)
		}
		return r.WorkflowExecutionInfo.Status, r.WorkflowExecutionInfo.Execution.RunId
	}
	at := time.Now().Add(time.Hour)
	if err := d.SetTerms(ctx, company, event, ch.ID, window.Window{}, &at); err != nil {
		t.Fatal(err)
	}
	st, first := describe("")
	if st != enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Fatalf("first run: %v", st)
	}
	moved := at.Add(time.Hour)
	if err := d.SetTerms(ctx, company, event, ch.ID, window.Window{}, &moved); err != nil {
		t.Fatal(err)
	}
	st, second := describe("")
	if st != enums.WORKFLOW_EXECUTION_STATUS_RUNNING || second == first {
		t.Fatalf("after the move: %v, run %s (first %s)", st, second, first)
	}
	if st, _ := describe(first); st != enums.WORKFLOW_EXECUTION_STATUS_TERMINATED {
		t.Fatalf("the replaced run: %v", st)
	}
	if err := d.SetTerms(ctx, company, event, ch.ID, window.Window{}, nil); err != nil {
		t.Fatal(err)
	}
	if st, _ := describe(second); st != enums.WORKFLOW_EXECUTION_STATUS_TERMINATED {
		t.Fatalf("after the removal: %v", st)
	}
	// Removing it again finds no run and is fine.
	if err := d.SetTerms(ctx, company, event, ch.ID, window.Window{}, nil); err != nil {
		t.Fatal(err)
	}

	// An overdue release stored without its workflow (a crash between the
	// two): the sweep starts a run for it.
	past := time.Now().Add(-time.Hour)
	if err := store.SetChannelTerms(ctx, s.DB, company, event, ch.ID, window.Window{}, &past); err != nil {
		t.Fatal(err)
	}
	if n, err := d.SweepReleases(ctx, time.Minute); err != nil || n != 1 {
		t.Fatalf("sweep: %d %v", n, err)
	}
	if st, run := describe(""); st != enums.WORKFLOW_EXECUTION_STATUS_RUNNING || run == second {
		t.Fatalf("after the sweep: %v %s", st, run)
	}
}

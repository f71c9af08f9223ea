package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/ticketsales/ticketsales/internal/app"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/holds"
	"github.com/ticketsales/ticketsales/internal/refunds"
	"github.com/ticketsales/ticketsales/internal/states"
)

// orderCmd acts on an order as its organizer, where a partner may not.
func (c *cli) orderCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "order", Short: "Act on an order as its organizer"}
	var company, orderID int64
	var tickets []int64
	var checkedIn bool
	var reason string
	refund := &cobra.Command{
		Use: "refund --company ID --order ID [--tickets ID,...] [--checked-in] [--reason TEXT]",
		Short: "Refund all or some tickets of a paid order; --checked-in also tickets admitted at the door " +
			"(a partner's refund of those is refused)",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.open(cmd); err != nil {
				return err
			}
			rs, done, err := c.refunds()
			if err != nil {
				return err
			}
			defer done()
			// The one way refunds are made, as the API's and the cabinet's:
			// recorded, seats back, its workflow started (each run a refund
			// of its own).
			r, err := rs.Refund(cmd.Context(), refunds.Request{By: refunds.AsOrganizer(company, checkedIn), OrderID: orderID,
				TicketIDs: tickets, Reason: reason, Source: refunds.OneOff()})
			if ce := (*errs.CheckedInError)(nil); errors.As(err, &ce) {
				return fmt.Errorf("refund order %d: %w (nothing refunded; --checked-in refunds them)", orderID, err)
			}
			if errors.Is(err, errs.NotFound) {
				return fmt.Errorf("order %d of company %d: %w", orderID, company, errs.NotFound)
			}
			if err != nil {
				return fmt.Errorf("refund order %d: %w", orderID, err)
			}
			return c.print(r, func(w io.Writer) {
				fmt.Fprintf(w, "refund %s of order %d: %d (minor units), %s\n", r.ID, r.OrderID, r.Amount, r.Status)
				if r.Status != states.RefundCompleted {
					fmt.Fprintln(w, "  the worker returns the money through the gateway (its reaper starts what was not started here)")
				}
			})
		},
	}
	refund.Flags().Int64Var(&company, "company", 0, "the order's company")
	refund.Flags().Int64Var(&orderID, "order", 0, "order id")
	refund.Flags().Int64SliceVar(&tickets, "tickets", nil, "ticket ids (default: every active ticket)")
	refund.Flags().BoolVar(&checkedIn, "checked-in", false, "refund tickets admitted at the door too")
	refund.Flags().StringVar(&reason, "reason", "", "why, for the record")
	_ = refund.MarkFlagRequired("company")
	_ = refund.MarkFlagRequired("order")
	cmd.AddCommand(refund)
	return cmd
}

// refunds is the refunds service over the database c opened, built as
// internal/app builds it but for the orders' service: its order page links
// (and their secret) serve only partners' views of a refund. Its Temporal
// client is lazy: only the commands that start workflows dial it, and one
// that cannot be reached fails no refund (it is recorded; the worker's
// reaper starts its workflow). done closes the client.
func (c *cli) refunds() (rs *refunds.Service, done func(), err error) {
	log := c.cfg.Logger()
	tc, err := client.NewLazyClient(app.TemporalClientOptions(c.cfg, log, nil))
	if err != nil {
		return nil, nil, fmt.Errorf("temporal client: %w", err)
	}
	h := holds.New(holds.Deps{DB: c.db, Temporal: tc, Log: log}, holds.Settings{TaskQueue: c.cfg.TaskQueue})
	rs = refunds.New(refunds.Deps{DB: c.db, Temporal: tc, Log: log, Holds: h}, c.cfg.TaskQueue,
		refunds.Settings{RetryBudget: c.cfg.RefundRetryBudget, LeaveToReaper: !workersPoll(tc, c.cfg.TaskQueue)})
	return rs, tc.Close, nil
}

// workersPoll tells whether a worker polls taskQueue for workflows now. A
// shell whose TASK_QUEUE is not the workers' would start a refund's
// workflow where no worker runs it, and the reaper, finding it running,
// would never start another: the money would stay with the service. When
// no worker polls (or Temporal cannot be reached) the refund is only
// recorded, and the reaper starts it on the workers' queue.
func workersPoll(tc client.Client, taskQueue string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d, err := tc.DescribeTaskQueue(ctx, taskQueue, enums.TASK_QUEUE_TYPE_WORKFLOW)
	return err == nil && len(d.GetPollers()) > 0
}

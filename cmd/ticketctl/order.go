package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/refunds"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
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
			ctx := cmd.Context()
			o, err := store.GetOrderByID(ctx, c.db, orderID)
			if err != nil || o.CompanyID != company {
				return fmt.Errorf("order %d of company %d: %w", orderID, company, errs.NotFound)
			}
			// Each run is a refund of its own (a run again after success
			// finds the tickets refunded and changes nothing).
			r := &store.Refund{ID: refunds.ID(0, o.ID, "ticketctl:"+rand.Text(), tickets), OrderID: o.ID, TicketIDs: tickets,
				Reason: reason, AllowCheckedIn: checkedIn}
			if err := store.CreateRefund(ctx, c.db, r); err != nil {
				if ce := (*errs.CheckedInError)(nil); errors.As(err, &ce) {
					return fmt.Errorf("refund order %d: %w (nothing refunded; --checked-in refunds them)", o.ID, err)
				}
				return fmt.Errorf("refund order %d: %w", o.ID, err)
			}
			return c.print(r, func(w io.Writer) {
				fmt.Fprintf(w, "refund %s of order %d: %d (minor units), %s\n", r.ID, o.ID, r.Amount, r.Status)
				if r.Status != states.RefundCompleted {
					fmt.Fprintln(w, "  the worker returns the money through the gateway (its reaper takes up pending refunds)")
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

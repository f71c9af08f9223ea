// Package workflows is the service's deterministic workflow code, a file
// per workflow. Postgres decides every seat and every sum; a workflow owns
// the time and the side effects around it, through the guarded, repeatable
// activities of package activities. The worker registers each under its
// name in workflows/contract, where the api finds the names, ids, signals,
// updates and queries it starts and asks them by; every workflow answers
// contract.StatusQuery.
//
// The workflows, with their ids:
//
//   - EventHolds, "event-holds/{event_id}/{YYYYMMDDTHHMM}": the deadlines of
//     an event's holds that fall in one UTC minute, handed over in batches
//     (holds-added signal-with-start); it expires those still held when
//     their deadline passes and ends once its minute is over.
//   - Order, "order/{id}": the order saga. The payment window, the
//     partner's confirm (an update) or the gateway's payment (a signal),
//     tickets, the tickets e-mail of a production order, the cancel at the
//     deadline, and a sandbox order's deletion a day later.
//   - Refund, "refund/{id}": voids the tickets, then returns the money
//     through the gateway, retrying until it is back or the budget is spent.
//   - WebhookDelivery, "webhook/{event_id}/{endpoint_id}": one event to one
//     endpoint, retried with backoff for up to three days, on the webhook
//     task queue.
//   - ResendTickets, "resend-tickets/{order_id}/{resend_id}": the
//     organizer's resend of an order's tickets e-mail.
//   - AllocationRelease, "release/{event_id}/{channel_id}": a channel's
//     timed release on an event, a timer until release_at and then the
//     release if Postgres still finds it due; moving release_at replaces
//     the run (distribution.Service.SetTerms), removing it ends the run.
//   - Reservation, "reservation/{id}": the per-hold workflow before
//     EventHolds; deprecated, nothing starts it (reservation.go).
//
// A change to a workflow whose runs may be in flight is versioned: each
// change is an unexported string constant named for what it changes, its
// value the change's name in kebab case (localPayment =
// "local-payment-activities", refundFailedStatus = "refund-failed-status"),
// asked with workflow.GetVersion(ctx, change, workflow.DefaultVersion, 1)
// beside the change's path. The order workflow also has revisions
// (contract.OrderInput.Revision, revisionLean): an order started at a
// revision takes every change folded into it without a GetVersion marker
// (order.go, since). Histories recorded from real runs, some by earlier
// code (*-v0.json), are in testdata/ and replayed by replay_test.go, so a
// change that would break runs in flight fails the tests.
package workflows

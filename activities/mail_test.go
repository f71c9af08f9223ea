package activities_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
	"go.temporal.io/sdk/temporal"

	"github.com/ticketsales/ticketsales/internal/delivery"
	"github.com/ticketsales/ticketsales/internal/mail"
	"github.com/ticketsales/ticketsales/test/testenv/smtptest"
)

// TestTicketsEmailRefusedByTheServer: a recipient the server refuses for
// good (550) fails the activity for good, a temporary refusal (451) is
// retried, and neither failure, as Temporal records it, holds the buyer's
// address, though the server's reply echoed it.
func TestTicketsEmailRefusedByTheServer(t *testing.T) {
	ctx := context.Background()
	s, company, keyID, acts := demoStore(t)
	acts.Links = delivery.Links{BaseURL: "http://127.0.0.1", Keys: testKeys}
	for i, c := range []struct {
		code         int
		nonRetryable bool
	}{{550, true}, {451, false}} {
		t.Run(fmt.Sprint(c.code), func(t *testing.T) {
			id, _ := pendingOrder(t, s, company, keyID, fmt.Sprintf("parterre-3-%d", i+1), time.Now().Add(time.Hour))
			// A production order: only those are e-mailed.
			if _, err := s.DB.ExecContext(ctx, "UPDATE orders SET is_test = false, customer_email = 'Anna.Buyer@example.com' WHERE id = ?", id); err != nil {
				t.Fatal(err)
			}
			if res, err := acts.MarkOrderPaid(ctx, id, "ext"); err != nil || res.Status != "paid" {
				t.Fatalf("pay: %+v %v", res, err)
			}
			be := &smtptest.Backend{Rcpt: func(to string) error {
				return &smtp.SMTPError{Code: c.code, EnhancedCode: smtp.EnhancedCode{c.code / 100, 1, 1},
					Message: fmt.Sprintf("<%s>: Recipient address rejected: user anna.buyer unknown", to)}
			}}
			mailer, err := mail.New("smtp://"+smtptest.Start(t, be)+"?tls=none", "", "tickets@ticketsales.test")
			if err != nil {
				t.Fatal(err)
			}
			acts.Mailer = mailer

			err = acts.SendTicketsEmail(ctx, id)
			if err == nil {
				t.Fatal("the refused e-mail counts as sent")
			}
			var appErr *temporal.ApplicationError
			if got := errors.As(err, &appErr) && appErr.NonRetryable(); got != c.nonRetryable {
				t.Fatalf("non-retryable %v, want %v: %v", got, c.nonRetryable, err)
			}
			failure := temporal.GetDefaultFailureConverter().ErrorToFailure(err)
			if failure.GetApplicationFailureInfo().GetNonRetryable() != c.nonRetryable {
				t.Fatalf("recorded failure: non-retryable %v, want %v", failure.GetApplicationFailureInfo().GetNonRetryable(), c.nonRetryable)
			}
			recorded := failure.String() // message, type and every cause, as history keeps them
			if strings.Contains(strings.ToLower(recorded), "anna") {
				t.Fatalf("the failure names the buyer: %s", recorded)
			}
			if !strings.Contains(recorded, fmt.Sprint(id)) || !strings.Contains(recorded, fmt.Sprint(c.code)) {
				t.Fatalf("the failure lacks the order id or the reply code: %s", recorded)
			}
			var emailed bool
			_ = s.DB.NewRaw("SELECT emailed_at IS NOT NULL FROM orders WHERE id = ?", id).Scan(ctx, &emailed)
			if emailed {
				t.Fatal("a refused e-mail was marked sent")
			}
		})
	}
}

// TestResendSendsNothingForAVoidOrder: a resend asked while the order was
// paid, run after it was refunded in full, e-mails nothing (its tickets
// are void); the same resend of a paid order e-mails them.
func TestResendSendsNothingForAVoidOrder(t *testing.T) {
	ctx := context.Background()
	s, company, keyID, acts := demoStore(t)
	acts.Links = delivery.Links{BaseURL: "http://127.0.0.1", Keys: testKeys}
	be := &smtptest.Backend{}
	mailer, err := mail.New("smtp://"+smtptest.Start(t, be)+"?tls=none", "", "tickets@ticketsales.test")
	if err != nil {
		t.Fatal(err)
	}
	acts.Mailer = mailer
	for i, refunded := range []bool{true, false} {
		id, _ := pendingOrder(t, s, company, keyID, fmt.Sprintf("parterre-3-%d", i+5), time.Now().Add(time.Hour))
		if _, err := s.DB.ExecContext(ctx, "UPDATE orders SET is_test = false, customer_email = 'anna@example.com' WHERE id = ?", id); err != nil {
			t.Fatal(err)
		}
		if res, err := acts.MarkOrderPaid(ctx, id, "ext"); err != nil || res.Status != "paid" {
			t.Fatalf("pay: %+v %v", res, err)
		}
		if refunded {
			if _, err := s.DB.ExecContext(ctx, "UPDATE orders SET status = 'refunded' WHERE id = ?", id); err != nil {
				t.Fatal(err)
			}
		}
		before := len(be.All())
		if err := acts.ResendTicketsEmail(ctx, id, fmt.Sprintf("resend-%d", i)); err != nil {
			t.Fatalf("resend (refunded %v): %v", refunded, err)
		}
		if sent := len(be.All()) - before; sent != map[bool]int{true: 0, false: 1}[refunded] {
			t.Fatalf("resend of an order refunded=%v sent %d e-mails", refunded, sent)
		}
	}
}

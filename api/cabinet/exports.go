package cabinet

// Exports: the orders list's orders and their tickets (attendees), the
// check-in page's scans and the sales report, each as XLSX, as CSV for
// Excel (BOM, semicolons, decimal commas) and as plain CSV, written as
// they are read (internal/export; the rows through organizer and checkin).

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ticketsales/ticketsales/internal/checkin"
	"github.com/ticketsales/ticketsales/internal/export"
	"github.com/ticketsales/ticketsales/internal/organizer"
	"github.com/ticketsales/ticketsales/internal/report"
	"github.com/ticketsales/ticketsales/internal/states"
)

// downloadLink is one link to an export in one format.
type downloadLink struct {
	Label, URL string
	Format     export.Format
}

// downloadLine is a page's line of links to one export, one per format
// (template "downloads"): ID names the line, What says what it exports.
type downloadLine struct {
	ID, What string
	Links    []downloadLink
}

// downloads is the line of links to base's export in every format, with
// the page's filters (q).
func downloads(id, what, base string, q url.Values) downloadLine {
	var out []downloadLink
	for _, f := range export.Formats {
		u := base + f.Suffix()
		if len(q) > 0 {
			u += "?" + q.Encode()
		}
		out = append(out, downloadLink{Label: f.Label(), URL: u, Format: f})
	}
	return downloadLine{ID: id, What: what, Links: out}
}

// startFile sets the headers of a download named name (without its
// ending) in format f. They go out with the file's first byte (download):
// a table failing before it gets an error page instead.
func startFile(w http.ResponseWriter, f export.Format, name string) *download {
	w.Header().Set("Content-Type", f.ContentType())
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+f.Suffix()+`"`)
	return &download{ResponseWriter: w}
}

// download is a file's response: whether any of it was sent.
type download struct {
	http.ResponseWriter
	started bool
}

func (d *download) Write(p []byte) (int, error) {
	d.started = true
	return d.ResponseWriter.Write(p)
}

// companyZone is the company's time zone (report.Zone): the zone of the
// exports' times that are not an event's.
func (c *cabinet) companyZone(r *http.Request) (*time.Location, error) {
	return report.Zone(r.Context(), c.DB, user(r).CompanyID)
}

// endExport finishes an export whose rows ended with err (nil: all
// written): it closes the table, or gives it up (export.Writer.Abort). A
// failure before the file's first byte (an XLSX workbook is written at its
// Close only; CSV after a buffer of rows) is an error page, 500, and no
// file. After it, the response is aborted (http.ErrAbortHandler): the
// connection is cut mid-file, so the browser marks the download failed
// rather than keeping a file that looks complete.
func (c *cabinet) endExport(w *download, r *http.Request, what string, out export.Writer, err error) {
	if err == nil {
		if err = out.Close(); err == nil {
			return
		}
	} else {
		out.Abort()
	}
	c.failExport(w, r, what, err)
}

// failExport answers an export that failed (endExport).
func (c *cabinet) failExport(w *download, r *http.Request, what string, err error) {
	err = fmt.Errorf("export %s: %w", what, err)
	if !w.started {
		w.Header().Del("Content-Disposition")
		c.fail(w.ResponseWriter, r, err)
		return
	}
	c.Log.WarnContext(r.Context(), "cabinet export cut short", "export", what, "err", err)
	panic(http.ErrAbortHandler)
}

// exportOrders writes the orders the order list's search and filters
// select (every page of them), newest first. Support and finance read
// these buyers on the list already (PermOrders).
func (c *cabinet) exportOrders(f export.Format) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		view, filter, problems, ok := c.ordersQuery(w, r)
		if !ok {
			return
		}
		if len(problems) > 0 {
			c.orders(w, r) // the list says what is wrong, 422
			return
		}
		loc, err := c.companyZone(r)
		if err != nil {
			c.fail(w, r, err)
			return
		}
		tz := loc.String()
		cols := []export.Column{
			{Key: "order_id", Title: "Order", Kind: export.Int},
			{Key: "created_at", Title: "Created (" + tz + ")", Kind: export.Time},
			{Key: "paid_at", Title: "Paid (" + tz + ")", Kind: export.Time},
			{Key: "status", Title: "Status", Kind: export.Text, Width: 18},
			{Key: "event_id", Title: "Event id", Kind: export.Int},
			{Key: "event", Title: "Event", Kind: export.Text, Width: 40},
			{Key: "session", Title: "Session (event's time)", Kind: export.Text, Width: 28},
			{Key: "buyer", Title: "Buyer", Kind: export.Text, Width: 28},
			{Key: "email", Title: "E-mail", Kind: export.Text, Width: 30},
			{Key: "phone", Title: "Phone", Kind: export.Text, Width: 18},
			{Key: "channel", Title: "Sold through", Kind: export.Text, Width: 28},
			{Key: "payment", Title: "Payment", Kind: export.Text, Width: 10},
			{Key: "payment_id", Title: "Payment id", Kind: export.Text, Width: 24},
			{Key: "tickets", Title: "Tickets", Kind: export.Int},
			{Key: "tickets_refunded", Title: "Tickets refunded", Kind: export.Int},
			{Key: "currency", Title: "Currency", Kind: export.Text, Width: 9},
			{Key: "face_value", Title: "Face value", Kind: export.Money},
			{Key: "service_fee", Title: "Service fee", Kind: export.Money},
			{Key: "amount", Title: "Amount", Kind: export.Money},
			{Key: "refunded", Title: "Refunded", Kind: export.Money},
			{Key: "refund_pending", Title: "Refund pending", Kind: export.Money},
		}
		name := "orders-" + c.Now().In(loc).Format(time.DateOnly)
		if view.Form.Sandbox {
			name = "sandbox-" + name
		}
		dl := startFile(w, f, name)
		out, err := export.New(dl, f, "Orders", cols)
		if err != nil {
			c.failExport(dl, r, "orders", err)
			return
		}
		err = organizer.EachExportOrder(r.Context(), c.DB, filter, func(o organizer.ExportOrderRow) error {
			return out.Row(o.ID, o.CreatedAt.In(loc), timeIn(o.PaidAt, loc), statusWord(o.Status), o.EventID, o.EventTitle,
				session(o.SessionRef, o.SessionStartsAt, o.TimeZone), buyerName(o.CustomerFirstName, o.CustomerLastName),
				o.CustomerEmail, o.CustomerPhone, organizer.ChannelLabel(o.Channel, o.KeyPrefix, o.KeyName), string(o.Payment),
				deref(o.PaymentID), o.Tickets, o.TicketsRefunded, o.Currency, o.Total, o.ServiceFee, o.Amount, o.Refunded, o.RefundPending)
		})
		c.endExport(dl, r, "orders", out, err)
	}
}

// exportAttendees writes the tickets of the orders the order list
// selects: one row per ticket (a position not issued yet too), with its
// holder (the buyer), seat, state and admission. Barcodes stay out: a
// file of them is a file of tickets anyone could copy to the door.
func (c *cabinet) exportAttendees(f export.Format) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		view, filter, problems, ok := c.ordersQuery(w, r)
		if !ok {
			return
		}
		if len(problems) > 0 {
			c.orders(w, r)
			return
		}
		loc, err := c.companyZone(r)
		if err != nil {
			c.fail(w, r, err)
			return
		}
		cols := []export.Column{
			{Key: "ticket_number", Title: "Ticket", Kind: export.Text, Width: 14},
			{Key: "order_id", Title: "Order", Kind: export.Int},
			{Key: "position", Title: "Position", Kind: export.Int},
			{Key: "ticket_status", Title: "Ticket status", Kind: export.Text, Width: 14},
			{Key: "order_status", Title: "Order status", Kind: export.Text, Width: 18},
			{Key: "buyer", Title: "Holder (buyer)", Kind: export.Text, Width: 28},
			{Key: "email", Title: "E-mail", Kind: export.Text, Width: 30},
			{Key: "event_id", Title: "Event id", Kind: export.Int},
			{Key: "event", Title: "Event", Kind: export.Text, Width: 40},
			{Key: "session", Title: "Session (event's time)", Kind: export.Text, Width: 28},
			{Key: "category", Title: "Category", Kind: export.Text, Width: 24},
			{Key: "seat", Title: "Seat", Kind: export.Text, Width: 16},
			{Key: "currency", Title: "Currency", Kind: export.Text, Width: 9},
			{Key: "price", Title: "Price", Kind: export.Money},
			{Key: "admitted_at", Title: "Admitted at (event's time zone)", Kind: export.Time},
			{Key: "gate", Title: "Gate", Kind: export.Text, Width: 16},
			{Key: "time_zone", Title: "Event's time zone", Kind: export.Text, Width: 16},
		}
		name := "attendees-" + c.Now().In(loc).Format(time.DateOnly)
		if view.Form.Sandbox {
			name = "sandbox-" + name
		}
		dl := startFile(w, f, name)
		out, err := export.New(dl, f, "Attendees", cols)
		if err != nil {
			c.failExport(dl, r, "attendees", err)
			return
		}
		err = organizer.EachExportTicket(r.Context(), c.DB, filter, func(o organizer.ExportOrderRow, t organizer.ExportTicketRow) error {
			evLoc := location(o.TimeZone)
			return out.Row(deref(t.Number), o.ID, t.Position, ticketState(t), statusWord(o.Status),
				buyerName(o.CustomerFirstName, o.CustomerLastName), o.CustomerEmail, o.EventID, o.EventTitle,
				session(o.SessionRef, o.SessionStartsAt, o.TimeZone), t.Category, seat(t.SeatLabel, t.SeatID), o.Currency, t.Price,
				timeIn(t.CheckedInAt, evLoc), deref(t.CheckedInGate), evLoc.String())
		})
		c.endExport(dl, r, "attendees", out, err)
	}
}

// exportCheckIns writes every scan at the doors of the check-in page's
// event and environment, as recorded, in the venue's time zone, with the
// door desk's admissions by hand and undos (who, why; an admission
// undone is marked). Only a
// role that reads orders gets the buyer's name and e-mail: a door keeper
// reads no buyer's data.
func (c *cabinet) exportCheckIns(f export.Format) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		u := user(r)
		events, id, sandbox, ok := c.checkinQuery(w, r)
		if !ok {
			return
		}
		tz, title := "UTC", ""
		for _, e := range events {
			if e.ID == id {
				tz, title = e.Timezone, e.Title
			}
		}
		loc := location(tz)
		withBuyer := u.Can(organizer.PermOrders)
		cols := []export.Column{
			{Key: "scanned_at", Title: "Scanned (" + loc.String() + ", the device's clock)", Kind: export.Time},
			{Key: "received_at", Title: "Received (" + loc.String() + ")", Kind: export.Time},
			{Key: "gate", Title: "Gate", Kind: export.Text, Width: 18},
			{Key: "device", Title: "Device", Kind: export.Text, Width: 16},
			{Key: "direction", Title: "Direction", Kind: export.Text, Width: 9},
			{Key: "outcome", Title: "Outcome", Kind: export.Text, Width: 18},
			{Key: "outcome_words", Title: "Outcome in words", Kind: export.Text, Width: 30},
			{Key: "undone", Title: "Admission undone", Kind: export.Bool},
			{Key: "desk_user", Title: "Door desk user", Kind: export.Text, Width: 24},
			{Key: "reason", Title: "Door desk reason", Kind: export.Text, Width: 30},
			{Key: "offline", Title: "Offline", Kind: export.Bool},
			{Key: "conflict", Title: "Conflict", Kind: export.Text, Width: 18},
			{Key: "ticket_number", Title: "Ticket", Kind: export.Text, Width: 14},
			{Key: "category", Title: "Category", Kind: export.Text, Width: 24},
			{Key: "seat", Title: "Seat", Kind: export.Text, Width: 16},
		}
		if withBuyer {
			cols = append(cols, export.Column{Key: "order_id", Title: "Order", Kind: export.Int},
				export.Column{Key: "buyer", Title: "Buyer", Kind: export.Text, Width: 28},
				export.Column{Key: "email", Title: "E-mail", Kind: export.Text, Width: 30})
		}
		name := "checkins-" + strconv.FormatInt(id, 10) + "-" + c.Now().In(loc).Format(time.DateOnly)
		if sandbox {
			name = "sandbox-" + name
		}
		dl := startFile(w, f, name)
		out, err := export.New(dl, f, "Check-ins "+title, cols)
		if err != nil {
			c.failExport(dl, r, "checkins", err)
			return
		}
		if id != 0 { // a company without events: the header alone
			err = checkin.EachExportCheckIn(r.Context(), c.DB, checkin.CheckInExportFilter{CompanyID: u.CompanyID, EventID: id,
				IsTest: sandbox, WithBuyer: withBuyer}, func(s checkin.ExportCheckInRow) error {
				// An undo is no pass through the door: no direction. Only
				// an admission can be undone.
				direction, undone := string(s.Direction), any(nil)
				switch s.Outcome {
				case states.ScanUndone:
					direction = ""
				case states.ScanAdmitted:
					undone = s.UndoneBy != nil
				}
				row := []any{s.ScannedAt.In(loc), s.ReceivedAt.In(loc), s.Gate, s.DeviceID, direction, string(s.Outcome),
					organizer.OutcomeText(s.Outcome), undone, deref(s.UserEmail), deref(s.Reason), s.Offline, deref(s.Conflict),
					deref(s.Number), deref(s.Category), seat(s.SeatLabel, s.SeatID)}
				if withBuyer {
					var order any
					if s.OrderID != nil {
						order = *s.OrderID
					}
					row = append(row, order, buyerName(deref(s.BuyerFirstName), deref(s.BuyerLastName)), deref(s.BuyerEmail))
				}
				return out.Row(row...)
			})
		}
		c.endExport(dl, r, "checkins", out, err)
	}
}

// exportReport writes the sales report of the page's filter (the rows of
// report.csv) in format f.
func (c *cabinet) exportReport(f export.Format) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		filter, _, _, ok := c.reportQuery(w, r)
		if !ok {
			return
		}
		rep, err := report.Sales(r.Context(), c.DB, filter)
		var mixed *report.MixedCurrenciesError
		if errors.As(err, &mixed) {
			c.reportPage(w, r, http.StatusUnprocessableEntity, "", "") // the page says why
			return
		}
		if err != nil {
			c.fail(w, r, err)
			return
		}
		dl := startFile(w, f, report.BaseName(filter))
		if err := report.Write(dl, f, rep); err != nil {
			c.failExport(dl, r, "report", err)
		}
	}
}

// ticketState is a ticket's state as the order page words it.
func ticketState(t organizer.ExportTicketRow) string {
	switch {
	case t.Status == nil:
		return "not issued"
	case *t.Status == states.TicketRefunded:
		return "refunded"
	case t.CheckedInAt != nil:
		return "checked in"
	}
	return "active"
}

func seat(label, id *string) string {
	if label != nil {
		return *label
	}
	return deref(id)
}

func buyerName(first, last string) string { return strings.TrimSpace(first + " " + last) }

// session is an order's session as its page shows it: the ref and the
// start in the event's time zone ("" none).
func session(ref *string, starts *time.Time, tz string) string {
	if starts == nil {
		return ""
	}
	s := organizer.At(*starts, location(tz)).String()
	if ref != nil {
		s = *ref + ", " + s
	}
	return s
}

func timeIn(t *time.Time, loc *time.Location) any {
	if t == nil {
		return nil
	}
	return t.In(loc)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

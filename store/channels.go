package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/internal/window"
)

// Channel is a named group of a company's applications that sells what is
// allocated to it (docs/decisions.md, "Channels and allocations").
type Channel struct {
	bun.BaseModel `bun:"table:channels,alias:ch"`
	ID            int64     `bun:"id,pk,autoincrement"`
	CompanyID     int64     `bun:"company_id"`
	Ref           string    `bun:"ref"`
	Name          string    `bun:"name"`
	CreatedAt     time.Time `bun:"created_at,nullzero,default:now()"`
}

// ChannelMember is an application of a channel.
type ChannelMember struct {
	ApplicationID int64  `bun:"application_id"`
	ChannelID     int64  `bun:"channel_id"`
	Name          string `bun:"name"`
	Environment   string `bun:"environment"`
}

// UpsertChannel creates the company's channel of ref, or renames it.
func UpsertChannel(ctx context.Context, db bun.IDB, companyID int64, ref, name string) (c *Channel, err error) {
	err = audited(ctx, db, func(tx bun.IDB) (AuditEntry, error) {
		if c, err = upsertChannel(ctx, tx, companyID, ref, name); err != nil {
			return AuditEntry{}, err
		}
		return AuditEntry{CompanyID: companyID, Action: AuditChannelSave, Subject: "channel " + ref,
			Detail: map[string]any{"channel_id": c.ID, "name": name}}, nil
	})
	return c, err
}

func upsertChannel(ctx context.Context, db bun.IDB, companyID int64, ref, name string) (*Channel, error) {
	c := &Channel{CompanyID: companyID, Ref: ref, Name: name}
	_, err := db.NewInsert().Model(c).On("CONFLICT (company_id, ref) DO UPDATE").Set("name = EXCLUDED.name").
		Returning("*").Exec(ctx)
	if err != nil {
		return nil, fmt.Errorf("save channel %q of company %d: %w", ref, companyID, err)
	}
	return c, nil
}

// ListChannels lists the company's channels by ref, and their applications.
func ListChannels(ctx context.Context, db bun.IDB, companyID int64) ([]Channel, []ChannelMember, error) {
	var chs []Channel
	if err := db.NewSelect().Model(&chs).Where("company_id = ?", companyID).Order("ref").Scan(ctx); err != nil {
		return nil, nil, fmt.Errorf("channels of company %d: %w", companyID, err)
	}
	var members []ChannelMember
	err := db.NewRaw(`SELECT ca.application_id, ca.channel_id, a.name, a.environment
		FROM channel_applications ca JOIN applications a ON a.id = ca.application_id
		JOIN channels ch ON ch.id = ca.channel_id WHERE ch.company_id = ? ORDER BY a.environment, a.name`, companyID).Scan(ctx, &members)
	if err != nil {
		return nil, nil, fmt.Errorf("channel applications of company %d: %w", companyID, err)
	}
	return chs, members, nil
}

// GetChannelByRef finds the company's channel of ref.
func GetChannelByRef(ctx context.Context, db bun.IDB, companyID int64, ref string) (*Channel, error) {
	c := new(Channel)
	if err := db.NewSelect().Model(c).Where("company_id = ? AND ref = ?", companyID, ref).Scan(ctx); err != nil {
		return nil, notFound(err, "channel "+ref)
	}
	return c, nil
}

// GetChannel finds the company's channel by id.
func GetChannel(ctx context.Context, db bun.IDB, companyID, id int64) (*Channel, error) {
	c := new(Channel)
	if err := db.NewSelect().Model(c).Where("company_id = ? AND id = ?", companyID, id).Scan(ctx); err != nil {
		return nil, notFound(err, fmt.Sprintf("channel %d", id))
	}
	return c, nil
}

// SetApplicationChannel puts the company's application (by name and
// environment) in the channel, or in none (channelID 0): it then sells in
// general sale only. Keys are answered from the api's cache for up to its
// TTL, so a change reaches every instance within it.
func SetApplicationChannel(ctx context.Context, db bun.IDB, companyID int64, environment, application string, channelID int64) (applicationID int64, err error) {
	err = audited(ctx, db, func(tx bun.IDB) (AuditEntry, error) {
		if applicationID, err = setApplicationChannel(ctx, tx, companyID, environment, application, channelID); err != nil {
			return AuditEntry{}, err
		}
		return AuditEntry{CompanyID: companyID, Action: AuditChannelApp, Subject: auditSubject(environment, "application", application),
			Detail: map[string]any{"application_id": applicationID, "channel_id": channelID}}, nil
	})
	return applicationID, err
}

func setApplicationChannel(ctx context.Context, db bun.IDB, companyID int64, environment, application string, channelID int64) (applicationID int64, err error) {
	err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := tx.NewRaw(`SELECT id FROM applications WHERE company_id = ? AND environment = ? AND name = ?`,
			companyID, environment, application).Scan(ctx, &applicationID); err != nil {
			return notFound(err, fmt.Sprintf("%s application %q", environment, application))
		}
		if channelID == 0 {
			_, err := tx.NewRaw("DELETE FROM channel_applications WHERE application_id = ?", applicationID).Exec(ctx)
			return err
		}
		res, err := tx.NewRaw(`INSERT INTO channel_applications (application_id, channel_id)
			SELECT ?, id FROM channels WHERE id = ? AND company_id = ?
			ON CONFLICT (application_id) DO UPDATE SET channel_id = EXCLUDED.channel_id, added_at = now()`,
			applicationID, channelID, companyID).Exec(ctx)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("channel %d: %w", channelID, errs.NotFound)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("put application %q in channel %d: %w", application, channelID, err)
	}
	return applicationID, nil
}

// ChannelTerms are a channel's terms for one event.
type ChannelTerms struct {
	bun.BaseModel `bun:"table:channel_events,alias:ce"`
	EventID       int64      `bun:"event_id,pk"`
	ChannelID     int64      `bun:"channel_id,pk"`
	SalesStart    *time.Time `bun:"sales_start"`
	SalesEnd      *time.Time `bun:"sales_end"`
	ReleaseAt     *time.Time `bun:"release_at"`
	ReleasedAt    *time.Time `bun:"released_at"`
	ReleasedSeats int        `bun:"released_seats"`
	UpdatedAt     time.Time  `bun:"updated_at,nullzero,default:now()"`
}

// Window is the channel's own window for the event (nil bounds: general
// sale's).
func (t ChannelTerms) Window() window.Window {
	return window.Window{Start: t.SalesStart, End: t.SalesEnd}
}

// ErrEventNotCompany: the event is not the company's.
var ErrEventNotCompany = errors.New("event is not the company's")

// SetChannelTerms sets a channel's window and timed release for the
// company's event (nil: none), keeping what it has allocated. When the
// window or the release time changed, the channel's applications are told
// (allocation.changed) in the same transaction.
func SetChannelTerms(ctx context.Context, db bun.IDB, companyID, eventID, channelID int64, w window.Window, releaseAt *time.Time) error {
	return audited(ctx, db, func(tx bun.IDB) (AuditEntry, error) {
		if err := setChannelTerms(ctx, tx, companyID, eventID, channelID, w, releaseAt); err != nil {
			return AuditEntry{}, err
		}
		return AuditEntry{CompanyID: companyID, Action: AuditChannelTerms, Subject: fmt.Sprintf("event %d, channel %d", eventID, channelID),
			Detail: map[string]any{"event_id": eventID, "channel_id": channelID, "window": w, "release_at": releaseAt}}, nil
	})
}

func setChannelTerms(ctx context.Context, db bun.IDB, companyID, eventID, channelID int64, w window.Window, releaseAt *time.Time) error {
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		// The row as it was, locked until the change commits, so the
		// comparison below is with what this change replaced.
		var before []ChannelTerms
		if err := tx.NewSelect().Model(&before).Where("event_id = ? AND channel_id = ?", eventID, channelID).
			For("UPDATE").Scan(ctx); err != nil {
			return err
		}
		var after []ChannelTerms
		if err := tx.NewRaw(`INSERT INTO channel_events (event_id, channel_id, sales_start, sales_end, release_at)
			SELECT e.id, ch.id, ?, ?, ? FROM events e JOIN channels ch ON ch.company_id = e.company_id
			WHERE e.id = ? AND ch.id = ? AND e.company_id = ?
			ON CONFLICT (event_id, channel_id) DO UPDATE SET sales_start = EXCLUDED.sales_start,
				sales_end = EXCLUDED.sales_end, release_at = EXCLUDED.release_at, updated_at = now()
			RETURNING *`,
			w.Start, w.End, releaseAt, eventID, channelID, companyID).Scan(ctx, &after); err != nil {
			return err
		}
		if len(after) == 0 {
			return errs.NotFound
		}
		was := ChannelTerms{}
		if len(before) > 0 {
			was = before[0]
		}
		// Both read back from Postgres: the same precision.
		if sameTime(was.SalesStart, after[0].SalesStart) && sameTime(was.SalesEnd, after[0].SalesEnd) &&
			sameTime(was.ReleaseAt, after[0].ReleaseAt) {
			return nil
		}
		return allocationEvent(ctx, tx, eventID, channelID, states.AllocationTerms)
	})
	if err != nil {
		return fmt.Errorf("set terms of channel %d for event %d: %w", channelID, eventID, err)
	}
	return nil
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// SetGeneralSale sets the window of general sale of the company's event.
func SetGeneralSale(ctx context.Context, db bun.IDB, companyID, eventID int64, w window.Window) error {
	return audited(ctx, db, func(tx bun.IDB) (AuditEntry, error) {
		if err := setGeneralSale(ctx, tx, companyID, eventID, w); err != nil {
			return AuditEntry{}, err
		}
		return AuditEntry{CompanyID: companyID, Action: AuditChannelSale, Subject: fmt.Sprintf("event %d", eventID),
			Detail: map[string]any{"event_id": eventID, "window": w}}, nil
	})
}

func setGeneralSale(ctx context.Context, db bun.IDB, companyID, eventID int64, w window.Window) error {
	res, err := db.NewRaw("UPDATE events SET sales_start = ?, sales_end = ? WHERE id = ? AND company_id = ?",
		w.Start, w.End, eventID, companyID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("set general sale of event %d: %w", eventID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("event %d: %w", eventID, errs.NotFound)
	}
	return nil
}

// ListChannelTerms lists the channels' terms for an event.
func ListChannelTerms(ctx context.Context, db bun.IDB, eventID int64) ([]ChannelTerms, error) {
	var out []ChannelTerms
	if err := scanPrepared(ctx, db, &out, listChannelTermsSQL(), eventID); err != nil {
		return nil, fmt.Errorf("channel terms of event %d: %w", eventID, err)
	}
	return out, nil
}

// listChannelTermsSQL is ListChannelTerms' read, prepared: every hold and
// order reads the event's terms.
var listChannelTermsSQL = preparedSelect(func(db *bun.DB) *bun.SelectQuery {
	return db.NewSelect().Model((*ChannelTerms)(nil)).Where("ce.event_id = $1::bigint").Order("channel_id")
})

// GetChannelTerms reads a channel's terms for an event (nil: none).
func GetChannelTerms(ctx context.Context, db bun.IDB, eventID, channelID int64) (*ChannelTerms, error) {
	var out []ChannelTerms
	if err := db.NewSelect().Model(&out).Where("event_id = ? AND channel_id = ?", eventID, channelID).Scan(ctx); err != nil {
		return nil, fmt.Errorf("terms of channel %d for event %d: %w", channelID, eventID, err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return &out[0], nil
}

// openTerms makes the channel's terms row for the event, and reopens an
// allocation released as a whole (reopened): the channel's seats freed
// since (they were general sale's by the rule) go to general sale for good
// first (moved), so reopening takes back nothing general sale was selling.
func openTerms(ctx context.Context, tx bun.Tx, eventID, channelID int64) (reopened bool, moved int, err error) {
	var ids []int64
	err = tx.NewRaw(`WITH ins AS (
			INSERT INTO channel_events (event_id, channel_id) VALUES (?, ?) ON CONFLICT DO NOTHING RETURNING 1
		)
		UPDATE channel_events SET released_at = NULL, updated_at = now()
		WHERE event_id = ? AND channel_id = ? AND released_at IS NOT NULL RETURNING channel_id`,
		eventID, channelID, eventID, channelID).Scan(ctx, &ids)
	if err != nil {
		return false, 0, fmt.Errorf("open allocation of channel %d on event %d: %w", channelID, eventID, err)
	}
	if len(ids) == 0 {
		return false, 0, nil
	}
	// Quotas under their categories' locks, taken in id order first: the
	// order of every change of them (terms, categories, quotas, seats).
	if _, err := tx.NewRaw(`SELECT 1 FROM ticket_categories c WHERE c.id IN (
			SELECT category_id FROM channel_quotas WHERE event_id = ? AND channel_id = ?)
		ORDER BY c.id FOR NO KEY UPDATE`, eventID, channelID).Exec(ctx); err != nil {
		return true, 0, err
	}
	if _, err := tx.NewRaw("UPDATE channel_quotas SET closed = false WHERE event_id = ? AND channel_id = ?", eventID, channelID).Exec(ctx); err != nil {
		return true, 0, err
	}
	var seats []string
	err = tx.NewRaw(`WITH lk AS (
			SELECT s.event_id, s.seat_id FROM event_seats s
			WHERE s.event_id = ? AND s.channel_id = ? AND s.state <> 'sold' ORDER BY s.seat_id FOR UPDATE
		)
		UPDATE event_seats s SET channel_id = NULL, `+newSeatVersion+`
		FROM lk WHERE s.event_id = lk.event_id AND s.seat_id = lk.seat_id RETURNING s.seat_id`, eventID, channelID).Scan(ctx, &seats)
	return true, len(seats), err
}

// SeatMove is what an allocation or a release of seats did: the seats it
// moved, and those it left where they were (held or sold, or in another
// channel).
type SeatMove struct {
	Moved, Left []string
}

// AllocateSeats allocates the given seats of the company's event to the
// channel, in one transaction: only seats that are free and in general
// sale move, locked in seat order, each checked again under its lock, so
// a seat a hold takes meanwhile stays the hold's and no seat is ever held
// or sold outside the channel it belongs to at that moment.
func AllocateSeats(ctx context.Context, db bun.IDB, companyID, eventID, channelID int64, seatIDs []string) (m SeatMove, err error) {
	err = audited(ctx, db, func(tx bun.IDB) (AuditEntry, error) {
		if m, err = allocateSeats(ctx, tx, companyID, eventID, channelID, seatIDs); err != nil {
			return AuditEntry{}, err
		}
		return AuditEntry{CompanyID: companyID, Action: AuditChannelAllocate, Subject: fmt.Sprintf("event %d, channel %d", eventID, channelID),
			Detail: map[string]any{"event_id": eventID, "channel_id": channelID, "asked": len(seatIDs), "moved": len(m.Moved), "left": len(m.Left)}}, nil
	})
	return m, err
}

func allocateSeats(ctx context.Context, db bun.IDB, companyID, eventID, channelID int64, seatIDs []string) (SeatMove, error) {
	var out SeatMove
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := checkCompanyEvent(ctx, tx, companyID, eventID, channelID); err != nil {
			return err
		}
		reopened, strays, err := openTerms(ctx, tx, eventID, channelID)
		if err != nil {
			return err
		}
		if err := tx.NewRaw(`WITH lk AS (
				SELECT s.event_id, s.seat_id FROM event_seats s
				WHERE s.event_id = ? AND s.seat_id = ANY(?::text[]) AND s.channel_id IS NULL AND `+seatIsFree+`
				ORDER BY s.seat_id FOR UPDATE
			)
			UPDATE event_seats s SET channel_id = ?, `+newSeatVersion+`
			FROM lk WHERE s.event_id = lk.event_id AND s.seat_id = lk.seat_id RETURNING s.seat_id`,
			eventID, pgdialect.Array(seatIDs), channelID).Scan(ctx, &out.Moved); err != nil {
			return err
		}
		if len(out.Moved) > 0 || reopened {
			if err := allocationEvent(ctx, tx, eventID, channelID, states.AllocationAllocated); err != nil {
				return err
			}
		}
		return bumpLayout(ctx, tx, eventID, len(out.Moved)+strays)
	})
	if err != nil {
		return SeatMove{}, fmt.Errorf("allocate %d seats of event %d to channel %d: %w", len(seatIDs), eventID, channelID, err)
	}
	out.Left = without(seatIDs, out.Moved)
	return out, nil
}

// checkCompanyEvent checks the event and channel are the company's. It
// takes no lock on the event: orders by items lock their categories and
// then move the event's version, and an allocation change that locked the
// event first would deadlock with them; the seats' and categories' own
// locks order every change.
func checkCompanyEvent(ctx context.Context, tx bun.Tx, companyID, eventID, channelID int64) error {
	var ok bool
	err := tx.NewRaw(`SELECT EXISTS (SELECT 1 FROM channels WHERE id = ? AND company_id = ?)
		AND EXISTS (SELECT 1 FROM events WHERE id = ? AND company_id = ?)`,
		channelID, companyID, eventID, companyID).Scan(ctx, &ok)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("channel %d, event %d: %w", channelID, eventID, errs.NotFound)
	}
	return nil
}

// bumpLayout moves the event's own seat version when seats changed
// channel: availability keeps each seat's channel with its place, read
// again when that version moves.
func bumpLayout(ctx context.Context, tx bun.Tx, eventID int64, moved int) error {
	if moved == 0 {
		return nil
	}
	_, err := tx.NewRaw(bumpEventVersion, eventID).Exec(ctx)
	return err
}

func without(all, moved []string) []string {
	in := make(map[string]bool, len(moved))
	for _, m := range moved {
		in[m] = true
	}
	var left []string
	for _, s := range all {
		if !in[s] {
			left = append(left, s)
		}
	}
	return left
}

// Quota is a quantity of a general-admission category (and schedule slot)
// allocated to a channel.
type Quota struct {
	bun.BaseModel `bun:"table:channel_quotas,alias:q"`
	ID            int64  `bun:"id,pk,autoincrement"`
	EventID       int64  `bun:"event_id"`
	ChannelID     int64  `bun:"channel_id"`
	CategoryID    int64  `bun:"category_id"`
	SessionID     *int64 `bun:"session_id"`
	Allocated     int    `bun:"allocated"`
	Taken         int    `bun:"taken"`
	Released      int    `bun:"released"`
	Closed        bool   `bun:"closed"`
	// Held: positions of its pending orders (scanned by ListQuotas).
	Held int `bun:"held,scanonly"`
}

// Left is what the channel has left to sell of the quota.
func (q Quota) Left() int { return q.Allocated - q.Taken }

// ErrShort: general sale has less left than an allocation asks for.
type ErrShort struct{ Left int }

func (e *ErrShort) Error() string { return fmt.Sprintf("only %d left in general sale", e.Left) }

// generalLeftSQL is what general sale has left of a category (aliased c):
// its capacity less what is sold and what channels have left of their
// quotas (NULL: no capacity, unbounded).
const generalLeftSQL = `c.capacity - c.sold - (SELECT coalesce(sum(q.allocated - q.taken), 0) FROM channel_quotas q WHERE q.category_id = c.id)`

// slotLeftSQL is the same for a schedule slot (aliased sl).
const slotLeftSQL = `sl.capacity - sl.sold - (SELECT coalesce(sum(q.allocated - q.taken), 0) FROM channel_quotas q WHERE q.session_id = sl.id)`

// SetQuota sets the channel's quota of a general-admission category (and
// slot, for a scheduled event) of the company's event to allocated, in one
// transaction under the category's (and slot's) row lock, which every
// order of it takes: it grows only by what general sale has left, and
// shrinks only by what the channel has not sold (the rest returns to
// general sale).
func SetQuota(ctx context.Context, db bun.IDB, companyID, eventID, channelID, categoryID int64, sessionID *int64, allocated int) (q *Quota, err error) {
	err = audited(ctx, db, func(tx bun.IDB) (AuditEntry, error) {
		if q, err = setQuota(ctx, tx, companyID, eventID, channelID, categoryID, sessionID, allocated); err != nil {
			return AuditEntry{}, err
		}
		return AuditEntry{CompanyID: companyID, Action: AuditChannelQuota, Subject: fmt.Sprintf("event %d, channel %d", eventID, channelID),
			Detail: map[string]any{"event_id": eventID, "channel_id": channelID, "category_id": categoryID, "session_id": sessionID, "allocated": allocated}}, nil
	})
	return q, err
}

func setQuota(ctx context.Context, db bun.IDB, companyID, eventID, channelID, categoryID int64, sessionID *int64, allocated int) (*Quota, error) {
	q := new(Quota)
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := checkCompanyEvent(ctx, tx, companyID, eventID, channelID); err != nil {
			return err
		}
		// The channel's terms row first, as every allocation change takes
		// them (terms, categories, quotas, seats): no two wait on each
		// other in a circle.
		reopened, _, err := openTerms(ctx, tx, eventID, channelID)
		if err != nil {
			return err
		}
		// The lock first, the sums in a statement of their own: its
		// snapshot sees every change committed under the lock (a statement
		// that waits for a lock re-reads only the locked row).
		if _, err := tx.NewRaw(`SELECT 1 FROM ticket_categories WHERE id = ? AND event_id = ? FOR NO KEY UPDATE`,
			categoryID, eventID).Exec(ctx); err != nil {
			return err
		}
		var cat []struct {
			Capacity    *int
			GeneralLeft *int
		}
		if err := tx.NewRaw(`SELECT c.capacity, `+generalLeftSQL+` AS general_left FROM ticket_categories c
			WHERE c.id = ? AND c.event_id = ?`, categoryID, eventID).Scan(ctx, &cat); err != nil {
			return err
		}
		if len(cat) == 0 {
			return errs.Invalid("ticket_category_id", "the event has no such category", categoryID)
		}
		var slotLeft *int
		if sessionID != nil {
			if _, err := tx.NewRaw(`SELECT 1 FROM sessions WHERE id = ? AND event_id = ? FOR NO KEY UPDATE`,
				*sessionID, eventID).Exec(ctx); err != nil {
				return err
			}
			var sl []int
			if err := tx.NewRaw(`SELECT `+slotLeftSQL+` FROM sessions sl WHERE sl.id = ? AND sl.event_id = ?`,
				*sessionID, eventID).Scan(ctx, &sl); err != nil {
				return err
			}
			if len(sl) == 0 {
				return errs.Invalid("session_id", "the event has no such session", *sessionID)
			}
			slotLeft = &sl[0]
		} else if cat[0].Capacity == nil {
			return errs.Invalid("ticket_category_id", "a quantity is allocated of a general-admission category (or of a session)", categoryID)
		}
		var cur []Quota
		if err := tx.NewSelect().Model(&cur).Where("channel_id = ? AND category_id = ? AND session_id IS NOT DISTINCT FROM ?",
			channelID, categoryID, sessionID).For("UPDATE").Scan(ctx); err != nil {
			return err
		}
		if len(cur) == 0 {
			cur = append(cur, Quota{EventID: eventID, ChannelID: channelID, CategoryID: categoryID, SessionID: sessionID})
		}
		*q = cur[0]
		if allocated < q.Taken {
			return errs.Invalid("quantity", fmt.Sprintf("the channel has taken %d already", q.Taken), allocated)
		}
		grow := allocated - q.Allocated
		for _, left := range []*int{cat[0].GeneralLeft, slotLeft} {
			if left != nil && grow > 0 && grow > *left {
				return &ErrShort{Left: q.Allocated - q.Taken + *left}
			}
		}
		if grow < 0 {
			q.Released -= grow // what goes back to general sale
		}
		q.Allocated = allocated
		if _, err := tx.NewInsert().Model(q).On("CONFLICT (id) DO UPDATE").
			Set("allocated = EXCLUDED.allocated, released = EXCLUDED.released").Returning("*").Exec(ctx); err != nil {
			return err
		}
		if grow != 0 || reopened {
			if err := allocationEvent(ctx, tx, eventID, channelID, states.AllocationQuota); err != nil {
				return err
			}
		}
		_, err = tx.NewRaw(bumpEventVersion, eventID).Exec(ctx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("allocate category %d of event %d to channel %d: %w", categoryID, eventID, channelID, err)
	}
	return q, nil
}

// ListQuotaLeft lists a channel's quotas of an event (their counts only,
// without the pending positions ListQuotas counts).
func ListQuotaLeft(ctx context.Context, db bun.IDB, eventID, channelID int64) ([]Quota, error) {
	var out []Quota
	if err := db.NewSelect().Model(&out).Where("event_id = ? AND channel_id = ?", eventID, channelID).Scan(ctx); err != nil {
		return nil, fmt.Errorf("quotas of channel %d on event %d: %w", channelID, eventID, err)
	}
	return out, nil
}

// ListQuotas lists an event's quotas (of one channel, or all: 0) with the
// positions of their pending orders.
func ListQuotas(ctx context.Context, db bun.IDB, eventID, channelID int64) ([]Quota, error) {
	var out []Quota
	q := db.NewSelect().Model(&out).ColumnExpr("q.*").
		ColumnExpr(`(SELECT count(*) FROM order_items i JOIN orders o ON o.id = i.order_id
			WHERE i.quota_id = q.id AND o.status = 'pending_payment') AS held`).
		Where("q.event_id = ?", eventID).Order("q.channel_id", "q.category_id", "q.session_id")
	if channelID != 0 {
		q = q.Where("q.channel_id = ?", channelID)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("quotas of event %d: %w", eventID, err)
	}
	return out, nil
}

// Release says what of a channel's allocation on an event returns to
// general sale: all of it (Whole; the allocation is then closed, and a
// seat or ticket given back later goes to general sale too), or the given
// seats and quantities (Quantities by quota id). Sold seats stay the
// channel's; held ones move, their holds standing: the hold's buyer may
// still order them.
type Release struct {
	EventID, ChannelID int64
	Whole              bool
	SeatIDs            []string
	Quantities         map[int64]int
	// Due: only if the channel's timed release is due by Postgres's clock
	// (the release workflow's call; a release moved later does nothing).
	Due bool
}

// Released is what a release moved.
type Released struct {
	Seats      []string
	Quantities map[int64]int // by quota id
	// Done: nothing was due (a timed release moved or already done).
	NotDue bool
}

// ReleaseAllocation returns allocation to general sale in one transaction
// that takes the locks an allocation and an order take, in their order
// (event, categories, quotas, seats): a hold or order in flight on the
// same seats or quotas either commits first, and keeps what it took, or
// finds them released.
func ReleaseAllocation(ctx context.Context, db bun.IDB, companyID int64, r Release) (out Released, err error) {
	err = audited(ctx, db, func(tx bun.IDB) (AuditEntry, error) {
		if out, err = releaseAllocation(ctx, tx, companyID, r); err != nil || out.NotDue {
			return AuditEntry{}, err
		}
		return AuditEntry{CompanyID: companyID, Action: AuditChannelRelease, Subject: fmt.Sprintf("event %d, channel %d", r.EventID, r.ChannelID),
			Detail: map[string]any{"event_id": r.EventID, "channel_id": r.ChannelID, "whole": r.Whole, "due": r.Due,
				"seats": len(out.Seats), "quantities": out.Quantities, "not_due": out.NotDue}}, nil
	})
	return out, err
}

func releaseAllocation(ctx context.Context, db bun.IDB, companyID int64, r Release) (Released, error) {
	out := Released{Quantities: map[int64]int{}}
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := checkCompanyEvent(ctx, tx, companyID, r.EventID, r.ChannelID); err != nil {
			return err
		}
		// The terms row first (the lock order of every allocation change:
		// terms, categories, quotas, seats), then the due check on it.
		var terms []struct{ Due bool }
		if err := tx.NewRaw(`SELECT release_at <= now() AND released_at IS NULL AS due FROM channel_events
			WHERE event_id = ? AND channel_id = ? FOR NO KEY UPDATE`, r.EventID, r.ChannelID).Scan(ctx, &terms); err != nil {
			return err
		}
		if r.Due {
			if len(terms) == 0 || !terms[0].Due {
				out.NotDue = true
				return nil
			}
		}
		// Quantities: under each category's lock, in category order.
		if _, err := tx.NewRaw(`SELECT 1 FROM ticket_categories c WHERE c.id IN (
				SELECT category_id FROM channel_quotas WHERE event_id = ? AND channel_id = ?)
			ORDER BY c.id FOR NO KEY UPDATE`, r.EventID, r.ChannelID).Exec(ctx); err != nil {
			return err
		}
		// Read after the locks, in a statement of its own: every change of
		// a quota is made under its category's lock.
		var quotas []Quota
		if err := tx.NewSelect().Model(&quotas).Where("event_id = ? AND channel_id = ?", r.EventID, r.ChannelID).
			Order("category_id", "id").Scan(ctx); err != nil {
			return err
		}
		for _, q := range quotas {
			k, ok := r.Quantities[q.ID]
			if r.Whole {
				k, ok = -1, true
			}
			if !ok {
				continue
			}
			n := k
			if k < 0 {
				n = q.Left() // read under the category's lock, which every change of it takes
			}
			var moved []int
			err := tx.NewRaw(`UPDATE channel_quotas SET allocated = allocated - ?, released = released + ?
				WHERE id = ? AND allocated - taken >= ? RETURNING 1`, n, n, q.ID, n).Scan(ctx, &moved)
			if err != nil {
				return err
			}
			if len(moved) == 0 {
				return errs.Invalid("quantity", fmt.Sprintf("the channel has %d left of this quota", q.Left()), k)
			}
			if n > 0 {
				out.Quantities[q.ID] = n
			}
		}
		seatFilter, args := "", []any{r.EventID, r.ChannelID}
		if !r.Whole {
			seatFilter = " AND s.seat_id = ANY(?::text[])"
			args = append(args, pgdialect.Array(r.SeatIDs))
		}
		if r.Whole || len(r.SeatIDs) > 0 {
			if err := tx.NewRaw(`WITH lk AS (
					SELECT s.event_id, s.seat_id FROM event_seats s
					WHERE s.event_id = ? AND s.channel_id = ? AND s.state <> 'sold'`+seatFilter+`
					ORDER BY s.seat_id FOR UPDATE
				)
				UPDATE event_seats s SET channel_id = NULL, `+newSeatVersion+`
				FROM lk WHERE s.event_id = lk.event_id AND s.seat_id = lk.seat_id RETURNING s.seat_id`, args...).Scan(ctx, &out.Seats); err != nil {
				return err
			}
		}
		if r.Whole {
			if _, err := tx.NewRaw("UPDATE channel_quotas SET closed = true WHERE event_id = ? AND channel_id = ?",
				r.EventID, r.ChannelID).Exec(ctx); err != nil {
				return err
			}
		}
		if _, err := tx.NewRaw(`UPDATE channel_events SET released_seats = released_seats + ?,
				released_at = CASE WHEN ? THEN now() ELSE released_at END, updated_at = now()
			WHERE event_id = ? AND channel_id = ?`, len(out.Seats), r.Whole, r.EventID, r.ChannelID).Exec(ctx); err != nil {
			return err
		}
		if len(out.Seats) > 0 || len(out.Quantities) > 0 || r.Whole {
			if err := allocationEvent(ctx, tx, r.EventID, r.ChannelID, states.AllocationReleased); err != nil {
				return err
			}
			_, err := tx.NewRaw(bumpEventVersion, r.EventID).Exec(ctx)
			return err
		}
		return nil
	})
	if err != nil {
		return Released{}, fmt.Errorf("release allocation of channel %d on event %d: %w", r.ChannelID, r.EventID, err)
	}
	return out, nil
}

// SeatCounts are seats of an allocation (or of general sale) by state.
type SeatCounts struct {
	Allocated int `json:"allocated" doc:"Seats allocated (general sale: seats no channel holds), sold ones included."`
	Sold      int `json:"sold"`
	Held      int `json:"held" doc:"Held by a reservation or an unpaid order."`
	Left      int `json:"left" doc:"Free: what may still be held."`
}

// ChannelSeats are the seats of one allocation by state; Released: its
// channel released it as a whole (its unsold seats are general sale's).
type ChannelSeats struct {
	SeatCounts
	Released bool
}

// CountSeats counts an event's seats per allocation: by channel id, with
// the seats of no channel under 0.
func CountSeats(ctx context.Context, db bun.IDB, eventID int64) (map[int64]ChannelSeats, error) {
	var rows []struct {
		ChannelID int64
		Released  bool
		SeatCounts
	}
	err := db.NewRaw(`SELECT coalesce(s.channel_id, 0) AS channel_id, coalesce(bool_or(ce.released_at IS NOT NULL), false) AS released,
			count(*) AS allocated, count(*) FILTER (WHERE s.state = 'sold') AS sold,
			count(*) FILTER (WHERE s.state = 'held' AND NOT `+seatIsFree+`) AS held,
			count(*) FILTER (WHERE `+seatIsFree+`) AS left
		FROM event_seats s LEFT JOIN channel_events ce ON ce.event_id = s.event_id AND ce.channel_id = s.channel_id
		WHERE s.event_id = ? GROUP BY 1`, eventID).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("count seats of event %d by channel: %w", eventID, err)
	}
	out := map[int64]ChannelSeats{}
	for _, r := range rows {
		out[r.ChannelID] = ChannelSeats{SeatCounts: r.SeatCounts, Released: r.Released}
	}
	return out, nil
}

// GeneralLeft is what general sale has left of each general-admission
// category of an event (categories without a capacity are absent).
func GeneralLeft(ctx context.Context, db bun.IDB, eventID int64) (map[int64]int, error) {
	var rows []struct {
		ID   int64
		Left int
	}
	if err := db.NewRaw(`SELECT c.id, greatest(`+generalLeftSQL+`, 0) AS left FROM ticket_categories c
		WHERE c.event_id = ? AND c.capacity IS NOT NULL`, eventID).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("general sale left of event %d: %w", eventID, err)
	}
	out := make(map[int64]int, len(rows))
	for _, r := range rows {
		out[r.ID] = r.Left
	}
	return out, nil
}

// ChannelsWithSeats lists the channels of an event that have seats
// allocated and not released as a whole: the views its availability has.
func ChannelsWithSeats(ctx context.Context, db bun.IDB, eventID int64) ([]int64, error) {
	var ids []int64
	err := db.NewRaw(`SELECT ce.channel_id FROM channel_events ce WHERE ce.event_id = ? AND ce.released_at IS NULL
		AND EXISTS (SELECT 1 FROM event_seats s WHERE s.event_id = ce.event_id AND s.channel_id = ce.channel_id)
		ORDER BY 1`, eventID).Scan(ctx, &ids)
	return ids, err
}

// DueReleases lists timed releases not done yet (for the worker to start
// the workflows of any a crash left unstarted).
func DueReleases(ctx context.Context, db bun.IDB, limit int) ([]ChannelTerms, error) {
	var out []ChannelTerms
	err := db.NewSelect().Model(&out).Where("release_at IS NOT NULL AND released_at IS NULL").
		Order("release_at").Limit(int64(limit)).Scan(ctx)
	return out, err
}

// EventCompany is the company whose event it is.
func EventCompany(ctx context.Context, db bun.IDB, eventID int64) (int64, error) {
	var id int64
	if err := db.NewRaw("SELECT company_id FROM events WHERE id = ?", eventID).Scan(ctx, &id); err != nil {
		return 0, notFound(err, fmt.Sprintf("event %d", eventID))
	}
	return id, nil
}

// WithheldCategories lists the categories of the events that are wholly
// not for sale to a caller of the channel (0: general sale): every seat of
// a seated one is allocated to other channels, or other channels' quotas
// take a general-admission one's whole capacity. price_from leaves them
// out. Only events with allocations cost more than an index probe.
func WithheldCategories(ctx context.Context, db bun.IDB, eventIDs []int64, channelID int64) (map[int64]bool, error) {
	var ids []int64
	err := db.NewRaw(`SELECT c.id FROM ticket_categories c
		WHERE c.event_id = ANY(?1::bigint[])
			AND EXISTS (SELECT 1 FROM channel_events ce WHERE ce.event_id = c.event_id AND ce.channel_id <> ?0 AND ce.released_at IS NULL)
			AND CASE WHEN c.capacity IS NULL THEN
				EXISTS (SELECT 1 FROM event_seats s WHERE s.event_id = c.event_id AND s.category_id = c.id)
				AND NOT EXISTS (SELECT 1 FROM event_seats s WHERE s.event_id = c.event_id AND s.category_id = c.id
					AND (s.channel_id IS NULL OR s.channel_id = ?0 OR s.channel_id IN (SELECT ce.channel_id FROM channel_events ce
						WHERE ce.event_id = s.event_id AND ce.released_at IS NOT NULL)))
			ELSE c.capacity <= (SELECT coalesce(sum(q.allocated), 0) FROM channel_quotas q JOIN channel_events ce
				ON ce.event_id = q.event_id AND ce.channel_id = q.channel_id
				WHERE q.category_id = c.id AND q.channel_id <> ?0 AND ce.released_at IS NULL)
			END`, channelID, pgdialect.Array(eventIDs)).Scan(ctx, &ids)
	if err != nil {
		return nil, fmt.Errorf("categories withheld from channel %d: %w", channelID, err)
	}
	out := make(map[int64]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}

// allocationEventSQL writes the allocation.changed events of a channel's
// allocation on an event, inside the transaction of the change: one per
// environment in which the channel's applications have an endpoint (none
// when they have none), each going only to the endpoints of the channel's
// applications (webhook_events.channel_id, inChannel). Its snapshot is the
// webhook's data, the allocation as the change left it, read in the
// change's transaction and sent as it is: seats by state (after a release
// as a whole, what the channel sold: its unsold seats are general sale's),
// the quantities, the window a key of the channel sells in (as
// GET /v1/events/{id}/allocation shows it) and the timed release.
// Arguments: type, change, channel id (twice), event id.
var allocationEventSQL = `INSERT INTO webhook_events (id, type, company_id, is_test, channel_id, catalog_event_id, snapshot)
	SELECT ` + newEventID + `, ?, ch.company_id, env.is_test, ch.id, e.id, jsonb_build_object(
		'event_id', e.id,
		'channel', jsonb_build_object('id', ch.id, 'ref', ch.ref),
		'change', ?::text,
		'seats', (SELECT CASE WHEN ce.released_at IS NULL THEN jsonb_build_object('allocated', count(*),
				'sold', count(*) FILTER (WHERE s.state = 'sold'),
				'held', count(*) FILTER (WHERE s.state = 'held' AND NOT ` + seatIsFree + `),
				'left', count(*) FILTER (WHERE ` + seatIsFree + `))
			ELSE jsonb_build_object('allocated', count(*) FILTER (WHERE s.state = 'sold'),
				'sold', count(*) FILTER (WHERE s.state = 'sold'), 'held', 0, 'left', 0) END
			FROM event_seats s WHERE s.event_id = e.id AND s.channel_id = ch.id),
		'categories', coalesce((SELECT jsonb_agg(jsonb_strip_nulls(jsonb_build_object('ticket_category_id', q.category_id,
				'schedule_slot_id', q.session_id, 'allocated', q.allocated, 'left', q.allocated - q.taken))
				ORDER BY q.category_id, q.session_id NULLS FIRST)
			FROM channel_quotas q WHERE q.event_id = e.id AND q.channel_id = ch.id), '[]'::jsonb),
		'window', jsonb_build_object('starts_at', ` + utcTime("coalesce(ce.sales_start, e.sales_start)") + `,
			'ends_at', ` + utcTime("least(coalesce(ce.sales_end, e.sales_end, e.starts_at), e.starts_at)") + `),
		'release_at', ` + utcTime("ce.release_at") + `,
		'released_at', ` + utcTime("ce.released_at") + `)
	FROM channels ch JOIN events e ON e.company_id = ch.company_id
	LEFT JOIN channel_events ce ON ce.event_id = e.id AND ce.channel_id = ch.id
	CROSS JOIN (SELECT DISTINCT ep.is_test FROM webhook_endpoints ep
		JOIN channel_applications ca ON ca.application_id = ep.application_id
		WHERE ca.channel_id = ? AND ep.deleted_at IS NULL) env
	WHERE ch.id = ? AND e.id = ?`

// utcTime is the SQL of a timestamptz as the API writes times, RFC 3339 in
// UTC, whatever the session's time zone (NULL stays NULL).
func utcTime(expr string) string {
	return `to_char((` + expr + `) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`
}

// allocationEvent writes the allocation.changed events of a change of the
// channel's allocation on the event (allocationEventSQL), in its
// transaction.
func allocationEvent(ctx context.Context, tx bun.Tx, eventID, channelID int64, change states.AllocationChange) error {
	if _, err := tx.NewRaw(allocationEventSQL, states.EventAllocationChanged, string(change), channelID, channelID, eventID).Exec(ctx); err != nil {
		return fmt.Errorf("write %s event of channel %d on event %d: %w", states.EventAllocationChanged, channelID, eventID, err)
	}
	return nil
}

// EventsWithChannels lists the company's events (one, when eventID is not
// 0) that have terms or an allocation of any channel, soonest first.
func EventsWithChannels(ctx context.Context, db bun.IDB, companyID, eventID int64) ([]int64, error) {
	var ids []int64
	err := db.NewRaw(`SELECT e.id FROM events e WHERE e.company_id = ? AND (? = 0 OR e.id = ?)
		AND EXISTS (SELECT 1 FROM channel_events ce WHERE ce.event_id = e.id)
		ORDER BY e.starts_at, e.id`, companyID, eventID, eventID).Scan(ctx, &ids)
	if err != nil {
		return nil, fmt.Errorf("events with channels of company %d: %w", companyID, err)
	}
	return ids, nil
}

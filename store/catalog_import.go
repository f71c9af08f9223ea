package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/ticketsales/ticketsales/internal/window"
)

// ImportAction says what an import did to one record.
type ImportAction string

const (
	Created   ImportAction = "created"
	Updated   ImportAction = "updated"
	Unchanged ImportAction = "unchanged"
)

// ImportedRecord is one upserted record of a catalog import.
type ImportedRecord struct {
	Kind   string       `json:"kind"`
	Ref    string       `json:"ref"`
	ID     int64        `json:"id"`
	Action ImportAction `json:"action"`
}

// ImportResult lists every record of the file with what happened to it.
type ImportResult struct {
	Records []ImportedRecord `json:"records"`
	// SeatsChanged counts inventory rows added, rebound or removed.
	SeatsChanged int64 `json:"seats_changed"`
	// SeatsAllocated counts seats the file's allocations moved from
	// general sale to a channel.
	SeatsAllocated int64 `json:"seats_allocated"`
	// Releases are the channels' timed releases the file set, whose
	// workflows the caller starts once the import committed
	// (distribution.Service.ScheduleReleases).
	Releases []ChannelTerms `json:"-"`
}

// Count returns how many records had the given action.
func (r ImportResult) Count(a ImportAction) int {
	n := 0
	for _, rec := range r.Records {
		if rec.Action == a {
			n++
		}
	}
	return n
}

// LoadKnownCatalog loads the refs a company's catalog file may refer to.
func LoadKnownCatalog(ctx context.Context, db bun.IDB, companyID int64) (KnownCatalog, error) {
	known := KnownCatalog{Cities: map[string]bool{}, Venues: map[string]map[string][]PlanSeat{}, Channels: map[string]bool{}}
	var channels []string
	if err := db.NewRaw("SELECT ref FROM channels WHERE company_id = ?", companyID).Scan(ctx, &channels); err != nil {
		return known, fmt.Errorf("load channels of company %d: %w", companyID, err)
	}
	for _, c := range channels {
		known.Channels[c] = true
	}
	var cities []string
	if err := db.NewRaw("SELECT ref FROM cities WHERE company_id = ?", companyID).Scan(ctx, &cities); err != nil {
		return known, fmt.Errorf("load cities of company %d: %w", companyID, err)
	}
	for _, c := range cities {
		known.Cities[c] = true
	}
	var seats []struct {
		VenueRef  string
		SchemeRef string
		PlanSeat
	}
	err := db.NewRaw(`
		SELECT v.ref AS venue_ref, s.ref AS scheme_ref, ss.seat_id, ss.zone_id, ss.row, ss.number, ss.label, ss.pos, ss.rank
		FROM venues v
		LEFT JOIN schemes s ON s.venue_id = v.id
		LEFT JOIN scheme_seats ss ON ss.scheme_id = s.id
		WHERE v.company_id = ?
		ORDER BY v.ref, s.ref, ss.zone_id, ss.row, ss.number`, companyID).Scan(ctx, &seats)
	if err != nil {
		return known, fmt.Errorf("load venues of company %d: %w", companyID, err)
	}
	for _, s := range seats {
		if known.Venues[s.VenueRef] == nil {
			known.Venues[s.VenueRef] = map[string][]PlanSeat{}
		}
		if s.SchemeRef != "" {
			known.Venues[s.VenueRef][s.SchemeRef] = append(known.Venues[s.VenueRef][s.SchemeRef], s.PlanSeat)
		}
	}
	return known, nil
}

// importer upserts one plan inside one transaction.
type importer struct {
	tx      bun.Tx
	company int64
	result  ImportResult
}

// upsert runs an INSERT … ON CONFLICT DO UPDATE … WHERE changed RETURNING id,
// (xmax = 0); when the row was unchanged nothing returns and lookup finds it.
func (im *importer) upsert(ctx context.Context, kind, ref, insert, lookup string, args ...any) (int64, error) {
	var rows []struct {
		ID      int64
		Created bool
	}
	if err := im.tx.NewRaw(insert+" RETURNING id, (xmax = 0) AS created", args...).Scan(ctx, &rows); err != nil {
		return 0, fmt.Errorf("upsert %s %q: %w", kind, ref, err)
	}
	rec := ImportedRecord{Kind: kind, Ref: ref, Action: Unchanged}
	if len(rows) == 1 {
		rec.ID = rows[0].ID
		rec.Action = Updated
		if rows[0].Created {
			rec.Action = Created
		}
	} else if err := im.tx.NewRaw(lookup, args[:2]...).Scan(ctx, &rec.ID); err != nil {
		return 0, fmt.Errorf("find %s %q: %w", kind, ref, err)
	}
	im.result.Records = append(im.result.Records, rec)
	return rec.ID, nil
}

// ImportCatalog upserts the whole plan by ref in one transaction: either all
// of it lands or none. Importing the same plan twice changes nothing.
func ImportCatalog(ctx context.Context, db *bun.DB, companyID int64, plan *CatalogPlan) (ImportResult, error) {
	im := &importer{company: companyID}
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		im.tx = tx
		im.result = ImportResult{}
		if err := im.run(ctx, plan); err != nil {
			return err
		}
		counts := map[string]int{}
		for _, r := range im.result.Records {
			if r.Action != Unchanged {
				counts[r.Kind+"_"+string(r.Action)]++
			}
		}
		return Audit(ctx, tx, AuditEntry{CompanyID: companyID, Action: AuditCatalogUpload, Subject: "catalog",
			Detail: map[string]any{"changed": counts, "records": len(im.result.Records), "seats_changed": im.result.SeatsChanged}})
	})
	if err != nil {
		return ImportResult{}, fmt.Errorf("import catalog for company %d: %w", companyID, err)
	}
	if im.result.SeatsChanged > 0 {
		analyzeSeats(ctx, db)
	}
	return im.result, nil
}

// analyzeSeats refreshes the planner's statistics of event_seats after an
// import changed seats. New seats are free while most rows of a table
// that has sold for a while are sold: until the statistics count them, the
// hold statement can take a plan made for rare free seats (the bench's holds
// ran 3 times slower after its door events' sold seats), and autovacuum's
// threshold (10% of the table) may never come for one event among many.
// ANALYZE reads a sample (300 × the statistics target rows), blocks no
// hold, and is bounded here: it waits at most 500 ms for its lock (held by a
// running VACUUM or ANALYZE of the table, which it would otherwise cancel
// or wait for), and gives up after 30 s, whatever the request does. A
// refusal or failure leaves the statistics to autovacuum; the import has
// committed either way.
func analyzeSeats(ctx context.Context, db *bun.DB) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	_ = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "SET LOCAL lock_timeout = '500ms'"); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "ANALYZE event_seats")
		return err
	})
}

func (im *importer) run(ctx context.Context, plan *CatalogPlan) error {
	cityIDs := map[string]int64{}
	for _, c := range plan.Cities {
		id, err := im.upsert(ctx, "city", c.Ref, `
			INSERT INTO cities (company_id, ref, name) VALUES (?, ?, ?)
			ON CONFLICT (company_id, ref) DO UPDATE SET name = EXCLUDED.name
			WHERE cities.name IS DISTINCT FROM EXCLUDED.name`,
			"SELECT id FROM cities WHERE company_id = ? AND ref = ?", im.company, c.Ref, c.Name)
		if err != nil {
			return err
		}
		cityIDs[c.Ref] = id
	}
	for _, v := range plan.Venues {
		cityID, err := im.idOf(ctx, "cities", cityIDs, v.CityRef)
		if err != nil {
			return err
		}
		venueID, err := im.upsert(ctx, "venue", v.Ref, `
			INSERT INTO venues (company_id, ref, name, city_id, timezone) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (company_id, ref) DO UPDATE SET name = EXCLUDED.name, city_id = EXCLUDED.city_id, timezone = EXCLUDED.timezone
			WHERE (venues.name, venues.city_id, venues.timezone) IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.city_id, EXCLUDED.timezone)`,
			"SELECT id FROM venues WHERE company_id = ? AND ref = ?", im.company, v.Ref, v.Name, cityID, v.Timezone)
		if err != nil {
			return err
		}
		for _, s := range v.Schemes {
			if err := im.scheme(ctx, venueID, s); err != nil {
				return err
			}
		}
	}
	channelIDs := map[string]int64{}
	for _, c := range plan.Channels {
		id, err := im.channel(ctx, c)
		if err != nil {
			return err
		}
		channelIDs[c.Ref] = id
	}
	if err := im.lockTerms(ctx, plan, channelIDs); err != nil {
		return err
	}
	for _, e := range plan.Events {
		if err := im.event(ctx, e, channelIDs); err != nil {
			return err
		}
	}
	return nil
}

// lockTerms makes and locks, before any event's row, categories or seats
// are touched, the terms rows of the channels the file allocates to on
// events that exist already: every allocation change takes the terms
// first (docs/decisions.md), and an import that took them after its
// seats would deadlock with a release of the same channel. New events are
// the import's own until it commits.
func (im *importer) lockTerms(ctx context.Context, plan *CatalogPlan, channelIDs map[string]int64) error {
	type pair struct {
		event   string
		channel int64
	}
	var pairs []pair
	for _, e := range plan.Events {
		for _, a := range e.Allocations {
			id, err := im.idOf(ctx, "channels", channelIDs, a.ChannelRef)
			if err != nil {
				return err
			}
			pairs = append(pairs, pair{e.Ref, id})
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	refs, chans := make([]string, len(pairs)), make([]int64, len(pairs))
	for i, p := range pairs {
		refs[i], chans[i] = p.event, p.channel
	}
	_, err := im.tx.NewRaw(`WITH want AS (
			SELECT e.id AS event_id, u.channel_id FROM unnest(?::text[], ?::bigint[]) AS u(ref, channel_id)
			JOIN events e ON e.company_id = ? AND e.ref = u.ref
		), ins AS (
			INSERT INTO channel_events (event_id, channel_id) SELECT event_id, channel_id FROM want
			ON CONFLICT DO NOTHING
		)
		SELECT 1 FROM channel_events ce JOIN want w USING (event_id, channel_id)
		ORDER BY ce.event_id, ce.channel_id FOR NO KEY UPDATE OF ce`,
		pgdialect.Array(refs), pgdialect.Array(chans), im.company).Exec(ctx)
	if err != nil {
		return fmt.Errorf("lock the channels' terms: %w", err)
	}
	return nil
}

// channel upserts a channel and puts the file's applications in it (each
// made when missing, and taken out of any other channel).
func (im *importer) channel(ctx context.Context, c PlanChannel) (int64, error) {
	id, err := im.upsert(ctx, "channel", c.Ref, `
		INSERT INTO channels (company_id, ref, name) VALUES (?, ?, ?)
		ON CONFLICT (company_id, ref) DO UPDATE SET name = EXCLUDED.name
		WHERE channels.name IS DISTINCT FROM EXCLUDED.name`,
		"SELECT id FROM channels WHERE company_id = ? AND ref = ?", im.company, c.Ref, c.Name)
	if err != nil {
		return 0, err
	}
	for _, a := range c.Applications {
		if _, err := im.tx.NewRaw(`INSERT INTO applications (company_id, name, environment) VALUES (?, ?, ?)
			ON CONFLICT (company_id, environment, name) DO NOTHING`, im.company, a.Name, a.Environment).Exec(ctx); err != nil {
			return 0, fmt.Errorf("make %s application %q of channel %q: %w", a.Environment, a.Name, c.Ref, err)
		}
		var same bool
		if err := im.tx.NewRaw(`SELECT EXISTS (SELECT 1 FROM channel_applications ca JOIN applications a ON a.id = ca.application_id
			WHERE a.company_id = ? AND a.environment = ? AND a.name = ? AND ca.channel_id = ?)`,
			im.company, a.Environment, a.Name, id).Scan(ctx, &same); err != nil {
			return 0, err
		}
		if same {
			continue // re-imported: nothing to move
		}
		if _, err := SetApplicationChannel(ctx, im.tx, im.company, a.Environment, a.Name, id); err != nil {
			return 0, err
		}
	}
	return id, nil
}

// allocations applies an event's allocations in the import's transaction
// (the store's allocation functions nest in it as savepoints). Seats move
// as AllocateSeats moves them: only free ones of general sale, so a
// re-import moves nothing new; a quota already at its quantity is left
// alone.
func (im *importer) allocations(ctx context.Context, eventID int64, e PlanEvent, catIDs, sessionIDs, channelIDs map[string]int64) error {
	for _, a := range e.Allocations {
		channelID, err := im.idOf(ctx, "channels", channelIDs, a.ChannelRef)
		if err != nil {
			return err
		}
		terms, err := GetChannelTerms(ctx, im.tx, eventID, channelID)
		if err != nil {
			return err
		}
		// A channel that released its allocation as a whole stays
		// released: importing the same file again (to fix a price, say)
		// must not take back what general sale now sells. Allocating
		// again is the organizer's act, in the cabinet or ticketctl.
		released := terms != nil && terms.ReleasedAt != nil
		if len(a.SeatIDs) > 0 && !released {
			mv, err := AllocateSeats(ctx, im.tx, im.company, eventID, channelID, a.SeatIDs)
			if err != nil {
				return fmt.Errorf("event %q: %w", e.Ref, err)
			}
			im.result.SeatsAllocated += int64(len(mv.Moved))
		}
		for _, q := range a.Quantities {
			if released {
				break
			}
			var session *int64
			if q.SessionRef != "" {
				id := sessionIDs[q.SessionRef]
				session = &id
			}
			var cur []int
			if err := im.tx.NewRaw(`SELECT allocated FROM channel_quotas WHERE channel_id = ? AND category_id = ?
				AND session_id IS NOT DISTINCT FROM ?`, channelID, catIDs[q.CategoryRef], session).Scan(ctx, &cur); err != nil {
				return err
			}
			if len(cur) == 1 && cur[0] == q.Quantity {
				continue
			}
			if _, err := SetQuota(ctx, im.tx, im.company, eventID, channelID, catIDs[q.CategoryRef], session, q.Quantity); err != nil {
				return fmt.Errorf("event %q, channel %q, category %q: %w", e.Ref, a.ChannelRef, q.CategoryRef, err)
			}
		}
		w := window.Window{Start: a.SalesStart, End: a.SalesEnd}
		releaseAt := a.ReleaseAt
		if releaseAt != nil {
			// Postgres keeps microseconds: the workflow waits for the very
			// instant the row says.
			at := releaseAt.UTC().Truncate(time.Microsecond)
			releaseAt = &at
		}
		if err := SetChannelTerms(ctx, im.tx, im.company, eventID, channelID, w, releaseAt); err != nil {
			return fmt.Errorf("event %q, channel %q: %w", e.Ref, a.ChannelRef, err)
		}
		if !released && (terms == nil || !sameTime(terms.ReleaseAt, releaseAt)) {
			im.result.Releases = append(im.result.Releases, ChannelTerms{EventID: eventID, ChannelID: channelID, ReleaseAt: releaseAt})
		}
	}
	return nil
}

// idOf resolves a ref upserted earlier in this import, or one already stored.
func (im *importer) idOf(ctx context.Context, table string, ids map[string]int64, ref string) (int64, error) {
	if id, ok := ids[ref]; ok {
		return id, nil
	}
	var id int64
	err := im.tx.NewRaw("SELECT id FROM ? WHERE company_id = ? AND ref = ?", bun.Ident(table), im.company, ref).Scan(ctx, &id)
	if err != nil {
		return 0, notFound(err, fmt.Sprintf("%s ref %q", table, ref))
	}
	ids[ref] = id
	return id, nil
}

func (im *importer) scheme(ctx context.Context, venueID int64, s PlanScheme) error {
	// The venue-scoped key is "venue ref/scheme ref" in the result.
	schemeID, err := im.upsert(ctx, "scheme", s.Ref, `
		INSERT INTO schemes (venue_id, ref, name, geometry, etag) VALUES (?, ?, ?, ?::jsonb, ?)
		ON CONFLICT (venue_id, ref) DO UPDATE SET name = EXCLUDED.name, geometry = EXCLUDED.geometry, etag = EXCLUDED.etag
		WHERE (schemes.name, schemes.etag) IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.etag)`,
		"SELECT id FROM schemes WHERE venue_id = ? AND ref = ?", venueID, s.Ref, s.Name, string(s.Geometry), s.ETag)
	if err != nil {
		return err
	}
	if im.result.Records[len(im.result.Records)-1].Action == Unchanged {
		return nil
	}
	cols := seatColumns(s.Seats)
	if _, err := im.tx.NewRaw(`
		INSERT INTO scheme_seats (scheme_id, seat_id, zone_id, row, number, label, pos, rank)
		SELECT ?, * FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::int[], ?::int[])
		ON CONFLICT (scheme_id, seat_id) DO UPDATE SET label = EXCLUDED.label, pos = EXCLUDED.pos, rank = EXCLUDED.rank
		WHERE (scheme_seats.label, scheme_seats.pos, scheme_seats.rank) IS DISTINCT FROM (EXCLUDED.label, EXCLUDED.pos, EXCLUDED.rank)`,
		schemeID, cols.ids, cols.zones, cols.rows, cols.numbers, cols.labels, cols.pos, cols.ranks).Exec(ctx); err != nil {
		return fmt.Errorf("store seats of scheme %q: %w", s.Ref, err)
	}
	if _, err := im.tx.NewRaw("DELETE FROM scheme_seats WHERE scheme_id = ? AND seat_id <> ALL(?::text[])",
		schemeID, cols.ids).Exec(ctx); err != nil {
		return fmt.Errorf("drop removed seats of scheme %q: %w", s.Ref, err)
	}
	return nil
}

type seatCols struct {
	ids, zones, rows, numbers, labels, pos, ranks any
}

func seatColumns(seats []PlanSeat) seatCols {
	ids, zones, rows, numbers, labels := make([]string, len(seats)), make([]string, len(seats)),
		make([]string, len(seats)), make([]string, len(seats)), make([]string, len(seats))
	pos, ranks := make([]int64, len(seats)), make([]int64, len(seats))
	for i, s := range seats {
		ids[i], zones[i], rows[i], numbers[i], labels[i] = s.SeatID, s.ZoneID, s.Row, s.Number, s.Label
		pos[i], ranks[i] = int64(s.Pos), int64(s.Rank)
	}
	return seatCols{pgdialect.Array(ids), pgdialect.Array(zones), pgdialect.Array(rows), pgdialect.Array(numbers), pgdialect.Array(labels),
		pgdialect.Array(pos), pgdialect.Array(ranks)}
}

func (im *importer) event(ctx context.Context, e PlanEvent, channelIDs map[string]int64) error {
	var venue struct{ ID int64 }
	if err := im.tx.NewRaw("SELECT id FROM venues WHERE company_id = ? AND ref = ?", im.company, e.VenueRef).Scan(ctx, &venue.ID); err != nil {
		return notFound(err, fmt.Sprintf("venue %q of event %q", e.VenueRef, e.Ref))
	}
	var schemeID *int64
	if e.SchemeRef != "" {
		var id int64
		if err := im.tx.NewRaw("SELECT id FROM schemes WHERE venue_id = ? AND ref = ?", venue.ID, e.SchemeRef).Scan(ctx, &id); err != nil {
			return notFound(err, fmt.Sprintf("scheme %q of event %q", e.SchemeRef, e.Ref))
		}
		schemeID = &id
	}
	eventID, err := im.upsert(ctx, "event", e.Ref, `
		INSERT INTO events (company_id, ref, title, slug, status, starts_at, venue_id, scheme_id, fee_mode, fee_rate_bp, min_fee,
			allow_reentry, sales_start, sales_end)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (company_id, ref) DO UPDATE SET title = EXCLUDED.title, slug = EXCLUDED.slug, status = EXCLUDED.status,
			starts_at = EXCLUDED.starts_at, venue_id = EXCLUDED.venue_id, scheme_id = EXCLUDED.scheme_id,
			fee_mode = EXCLUDED.fee_mode, fee_rate_bp = EXCLUDED.fee_rate_bp, min_fee = EXCLUDED.min_fee,
			allow_reentry = EXCLUDED.allow_reentry, sales_start = coalesce(EXCLUDED.sales_start, events.sales_start),
			sales_end = coalesce(EXCLUDED.sales_end, events.sales_end)
		WHERE (events.title, events.slug, events.status, events.starts_at, events.venue_id, events.scheme_id,
			events.fee_mode, events.fee_rate_bp, events.min_fee, events.allow_reentry, events.sales_start, events.sales_end) IS DISTINCT FROM
			(EXCLUDED.title, EXCLUDED.slug, EXCLUDED.status, EXCLUDED.starts_at, EXCLUDED.venue_id, EXCLUDED.scheme_id,
			EXCLUDED.fee_mode, EXCLUDED.fee_rate_bp, EXCLUDED.min_fee, EXCLUDED.allow_reentry,
				coalesce(EXCLUDED.sales_start, events.sales_start), coalesce(EXCLUDED.sales_end, events.sales_end))`,
		"SELECT id FROM events WHERE company_id = ? AND ref = ?",
		im.company, e.Ref, e.Title, e.Slug, e.Status, e.StartsAt, venue.ID, schemeID, string(e.Fee.Mode), e.Fee.RateBP, e.Fee.MinFee,
		e.AllowReentry, e.SalesStart, e.SalesEnd)
	if err != nil {
		return err
	}
	catIDs := map[string]int64{}
	for pos, c := range e.Categories {
		changes, _ := json.Marshal(c.PriceChanges)
		rows, _ := json.Marshal(c.Rows)
		zones := c.Zones
		if zones == nil {
			zones = []string{}
		}
		id, err := im.upsert(ctx, "category", c.Ref, `
			INSERT INTO ticket_categories (event_id, ref, name, position, base_price, capacity, zones, rows, price_changes)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?::jsonb)
			ON CONFLICT (event_id, ref) DO UPDATE SET name = EXCLUDED.name, position = EXCLUDED.position,
				base_price = EXCLUDED.base_price, capacity = EXCLUDED.capacity, zones = EXCLUDED.zones,
				rows = EXCLUDED.rows, price_changes = EXCLUDED.price_changes
			WHERE (ticket_categories.name, ticket_categories.position, ticket_categories.base_price, ticket_categories.capacity,
				ticket_categories.zones, ticket_categories.rows, ticket_categories.price_changes) IS DISTINCT FROM
				(EXCLUDED.name, EXCLUDED.position, EXCLUDED.base_price, EXCLUDED.capacity,
				EXCLUDED.zones, EXCLUDED.rows, EXCLUDED.price_changes)`,
			"SELECT id FROM ticket_categories WHERE event_id = ? AND ref = ?",
			eventID, c.Ref, c.Name, pos, c.BasePrice, c.Capacity, pgdialect.Array(zones), string(rows), string(changes))
		if err != nil {
			return err
		}
		catIDs[c.Ref] = id
	}
	sessionIDs := map[string]int64{}
	for _, s := range e.Sessions {
		id, err := im.upsert(ctx, "session", s.Ref, `
			INSERT INTO sessions (event_id, ref, starts_at, capacity) VALUES (?, ?, ?, ?)
			ON CONFLICT (event_id, ref) DO UPDATE SET starts_at = EXCLUDED.starts_at, capacity = EXCLUDED.capacity
			WHERE (sessions.starts_at, sessions.capacity) IS DISTINCT FROM (EXCLUDED.starts_at, EXCLUDED.capacity)`,
			"SELECT id FROM sessions WHERE event_id = ? AND ref = ?", eventID, s.Ref, s.StartsAt, s.Capacity)
		if err != nil {
			return err
		}
		sessionIDs[s.Ref] = id
	}
	if err := im.eventSeats(ctx, eventID, e, catIDs); err != nil {
		return err
	}
	return im.allocations(ctx, eventID, e, catIDs, sessionIDs, channelIDs)
}

// eventSeats brings the event's seat inventory in line with its scheme and
// category bindings. Only free seats are rebound or removed: a held or sold
// seat keeps the category its price was fixed from.
func (im *importer) eventSeats(ctx context.Context, eventID int64, e PlanEvent, catIDs map[string]int64) error {
	plain := make([]PlanSeat, len(e.Seats))
	cats := make([]int64, len(e.Seats))
	for i, s := range e.Seats {
		plain[i], cats[i] = s.PlanSeat, catIDs[s.CategoryRef]
	}
	cols := seatColumns(plain)
	res, err := im.tx.NewRaw(`
		INSERT INTO event_seats (event_id, seat_id, zone_id, row, number, label, pos, rank, category_id)
		SELECT ?, * FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::int[], ?::int[], ?::bigint[])
		ON CONFLICT (event_id, seat_id) DO UPDATE SET label = EXCLUDED.label, pos = EXCLUDED.pos, rank = EXCLUDED.rank,
			category_id = EXCLUDED.category_id
		WHERE event_seats.state = 'free'
			AND (event_seats.label, event_seats.pos, event_seats.rank, event_seats.category_id)
				IS DISTINCT FROM (EXCLUDED.label, EXCLUDED.pos, EXCLUDED.rank, EXCLUDED.category_id)`,
		eventID, cols.ids, cols.zones, cols.rows, cols.numbers, cols.labels, cols.pos, cols.ranks, pgdialect.Array(cats)).Exec(ctx)
	if err != nil {
		return fmt.Errorf("store seats of event %q: %w", e.Ref, err)
	}
	changed, _ := res.RowsAffected()
	res, err = im.tx.NewRaw("DELETE FROM event_seats WHERE event_id = ? AND state = 'free' AND seat_id <> ALL(?::text[])",
		eventID, cols.ids).Exec(ctx)
	if err != nil {
		return fmt.Errorf("drop unsold seats of event %q: %w", e.Ref, err)
	}
	removed, _ := res.RowsAffected()
	if changed+removed > 0 {
		if _, err := im.tx.NewRaw(bumpEventVersion, eventID).Exec(ctx); err != nil {
			return fmt.Errorf("bump seat version of event %q: %w", e.Ref, err)
		}
	}
	im.result.SeatsChanged += changed + removed
	return nil
}

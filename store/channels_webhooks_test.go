package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/internal/window"
	"github.com/ticketsales/ticketsales/store"
)

// allocationRow is an allocation.changed event of the outbox.
type allocationRow struct {
	ID        string
	IsTest    bool
	ChannelID *int64
	Snapshot  json.RawMessage
}

// allocationEvents lists the allocation.changed events not dispatched yet,
// oldest first (sandbox's after production's).
func (d *demo) allocationEvents(t *testing.T) []allocationRow {
	t.Helper()
	var rows []allocationRow
	if err := d.DB.NewRaw(`SELECT id, is_test, channel_id, snapshot FROM webhook_events WHERE type = ? AND dispatched_at IS NULL
		ORDER BY created_at, is_test`, states.EventAllocationChanged).Scan(context.Background(), &rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

// application is the id of the company's application of that name in env,
// made with a key if new.
func (d *demo) application(t *testing.T, env, name string) int64 {
	t.Helper()
	d.KeyIn(t, d.company, env, name)
	var id int64
	if err := d.DB.NewRaw("SELECT id FROM applications WHERE company_id = ? AND environment = ? AND name = ?",
		d.company, env, name).Scan(context.Background(), &id); err != nil {
		t.Fatal(err)
	}
	return id
}

func (d *demo) endpointOf(t *testing.T, app int64, isTest bool) int64 {
	t.Helper()
	e := &store.WebhookEndpoint{ApplicationID: app, CompanyID: d.company, IsTest: isTest, URL: "https://127.0.0.1:1/hook",
		Enabled: true, Secret: "whsec_AAAA"}
	if err := store.CreateWebhookEndpoint(context.Background(), d.DB, e, 10); err != nil {
		t.Fatal(err)
	}
	return e.ID
}

// dispatch sends the events waiting and returns the endpoints each went
// to.
func (d *demo) dispatch(t *testing.T) map[string][]int64 {
	t.Helper()
	made, err := store.DispatchEvents(context.Background(), d.DB, 100, func(_ context.Context, ev *store.WebhookEvent) ([]byte, error) {
		return ev.Snapshot, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]int64{}
	for _, m := range made {
		out[m.EventID] = append(out[m.EventID], m.EndpointID)
	}
	return out
}

// An allocation change writes one allocation.changed event per environment
// in which the channel's applications have an endpoint, in the change's
// transaction, and none when they have none; the event goes only to the
// endpoints of the channel's applications, never to general sale's or
// another channel's.
func TestAllocationChangeWritesAnEventPerEnvironmentOfTheChannel(t *testing.T) {
	d := newDemo(t)
	ctx := context.Background()
	swan, standup := d.eventID(t, "swan-lake"), d.eventID(t, "standup")
	shop, shopLive := d.application(t, apikey.Sandbox, "shop"), d.application(t, apikey.Production, "shop")
	aggApp := d.application(t, apikey.Sandbox, "aggregator")
	var reseller, agg int64
	for _, ch := range []struct {
		ref  string
		id   *int64
		apps [][2]string
	}{
		{"reseller", &reseller, [][2]string{{apikey.Sandbox, "shop"}, {apikey.Production, "shop"}}},
		{"agg", &agg, [][2]string{{apikey.Sandbox, "aggregator"}}},
	} {
		c, err := store.UpsertChannel(ctx, d.DB, d.company, ch.ref, ch.ref)
		if err != nil {
			t.Fatal(err)
		}
		*ch.id = c.ID
		for _, a := range ch.apps {
			if _, err := store.SetApplicationChannel(ctx, d.DB, d.company, a[0], a[1], c.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	allocate := func(seats ...string) {
		t.Helper()
		mv, err := store.AllocateSeats(ctx, d.DB, d.company, swan, reseller, seats)
		if err != nil || len(mv.Moved) != len(seats) {
			t.Fatalf("allocate %v: %+v %v", seats, mv, err)
		}
	}

	// No endpoint at all; then endpoints of general sale (the sandbox's
	// default application) and of the other channel: none of them is the
	// reseller's, so no event is written.
	allocate("parterre-1-1")
	general := d.endpointOf(t, d.application(t, apikey.Sandbox, apikey.Sandbox), true)
	other := d.endpointOf(t, aggApp, true)
	allocate("parterre-1-2")
	if evs := d.allocationEvents(t); len(evs) != 0 {
		t.Fatalf("events with no endpoint of the channel: %+v", evs)
	}

	// The reseller's sandbox endpoint: one sandbox event, delivered to it
	// alone.
	sandboxEP := d.endpointOf(t, shop, true)
	allocate("parterre-1-3")
	evs := d.allocationEvents(t)
	if len(evs) != 1 || !evs[0].IsTest || evs[0].ChannelID == nil || *evs[0].ChannelID != reseller {
		t.Fatalf("after an allocation: %+v", evs)
	}
	var data struct {
		EventID int64 `json:"event_id"`
		Channel struct {
			ID  int64
			Ref string
		}
		Change string
		Seats  store.SeatCounts
		Window struct {
			StartsAt *time.Time `json:"starts_at"`
			EndsAt   *time.Time `json:"ends_at"`
		}
		Categories []struct {
			TicketCategoryID int64  `json:"ticket_category_id"`
			SlotID           *int64 `json:"schedule_slot_id"`
			Allocated, Left  int
		}
		ReleaseAt  *time.Time `json:"release_at"`
		ReleasedAt *time.Time `json:"released_at"`
	}
	if err := json.Unmarshal(evs[0].Snapshot, &data); err != nil {
		t.Fatal(err)
	}
	if data.EventID != swan || data.Channel.ID != reseller || data.Channel.Ref != "reseller" || data.Change != "allocated" ||
		data.Seats != (store.SeatCounts{Allocated: 3, Left: 3}) || data.Window.EndsAt == nil || len(data.Categories) != 0 ||
		data.ReleaseAt != nil || data.ReleasedAt != nil {
		t.Fatalf("allocation.changed data: %s", evs[0].Snapshot)
	}
	sent := d.dispatch(t)
	if got := sent[evs[0].ID]; len(got) != 1 || got[0] != sandboxEP {
		t.Fatalf("the sandbox event went to %v, want only the reseller's endpoint %d (not %d, %d)", got, sandboxEP, general, other)
	}

	// A production endpoint of the channel too: a quota change writes one
	// event per environment, each delivered to its own environment's
	// endpoint.
	productionEP := d.endpointOf(t, shopLive, false)
	var cat int64
	if err := d.DB.NewRaw("SELECT id FROM ticket_categories WHERE event_id = ?", standup).Scan(ctx, &cat); err != nil {
		t.Fatal(err)
	}
	if _, err := store.SetQuota(ctx, d.DB, d.company, standup, reseller, cat, nil, 5); err != nil {
		t.Fatal(err)
	}
	evs = d.allocationEvents(t)
	if len(evs) != 2 || evs[0].IsTest == evs[1].IsTest {
		t.Fatalf("after a quota: %+v", evs)
	}
	_ = json.Unmarshal(evs[0].Snapshot, &data)
	if data.EventID != standup || data.Change != "quota" || len(data.Categories) != 1 || data.Categories[0].TicketCategoryID != cat ||
		data.Categories[0].Allocated != 5 || data.Categories[0].Left != 5 || data.Categories[0].SlotID != nil {
		t.Fatalf("quota data: %s", evs[0].Snapshot)
	}
	sent = d.dispatch(t)
	for _, ev := range evs {
		want := sandboxEP
		if !ev.IsTest {
			want = productionEP
		}
		if got := sent[ev.ID]; len(got) != 1 || got[0] != want {
			t.Fatalf("event (is_test %v) went to %v, want %d", ev.IsTest, got, want)
		}
	}
	// The same quota again changes nothing, and says nothing.
	if _, err := store.SetQuota(ctx, d.DB, d.company, standup, reseller, cat, nil, 5); err != nil {
		t.Fatal(err)
	}
	if evs := d.allocationEvents(t); len(evs) != 0 {
		t.Fatalf("an unchanged quota wrote %+v", evs)
	}

	// Terms: a new window writes events; the same terms again do not.
	start := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	w := window.Window{Start: &start}
	for range 2 {
		if err := store.SetChannelTerms(ctx, d.DB, d.company, swan, reseller, w, nil); err != nil {
			t.Fatal(err)
		}
	}
	evs = d.allocationEvents(t)
	if len(evs) != 2 {
		t.Fatalf("after terms set twice: %+v", evs)
	}
	_ = json.Unmarshal(evs[0].Snapshot, &data)
	if data.Change != "terms" || data.Window.StartsAt == nil || !data.Window.StartsAt.Equal(start) {
		t.Fatalf("terms data: %s", evs[0].Snapshot)
	}
	d.dispatch(t)

	// A release as a whole: its data says released, with what is left.
	if _, err := store.ReleaseAllocation(ctx, d.DB, d.company, store.Release{EventID: swan, ChannelID: reseller, Whole: true}); err != nil {
		t.Fatal(err)
	}
	evs = d.allocationEvents(t)
	if len(evs) != 2 {
		t.Fatalf("after a release: %+v", evs)
	}
	_ = json.Unmarshal(evs[0].Snapshot, &data)
	if data.Change != "released" || data.ReleasedAt == nil || data.Seats != (store.SeatCounts{}) {
		t.Fatalf("release data: %s", evs[0].Snapshot)
	}
	d.dispatch(t)

	// A change of the other channel goes to its endpoint only.
	if _, err := store.AllocateSeats(ctx, d.DB, d.company, swan, agg, []string{"parterre-2-1"}); err != nil {
		t.Fatal(err)
	}
	evs = d.allocationEvents(t)
	if len(evs) != 1 || !evs[0].IsTest || *evs[0].ChannelID != agg {
		t.Fatalf("after the other channel's allocation: %+v", evs)
	}
	if got := d.dispatch(t)[evs[0].ID]; len(got) != 1 || got[0] != other {
		t.Fatalf("the other channel's event went to %v, want %d", got, other)
	}

	// A redelivery keeps to the channel too.
	ev, err := store.GetWebhookEvent(ctx, d.DB, d.company, true, evs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := store.Redeliver(ctx, d.DB, ev, nil)
	if err != nil || len(ds) != 1 || ds[0].EndpointID != other {
		t.Fatalf("redelivered to %+v (%v), want %d only", ds, err, other)
	}
}

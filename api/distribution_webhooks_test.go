package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/ticketsales/ticketsales/internal/distribution"
	"github.com/ticketsales/ticketsales/store"
)

// The reseller's endpoint (made with its key, so of its application
// "shop") receives a signed allocation.changed when seats are allocated to
// its channel and when some are released; general sale's endpoint (the
// fixture's key, application "sandbox") in the same environment receives
// none of it.
func TestAllocationChangesReachOnlyTheChannelsEndpoints(t *testing.T) {
	t.Parallel()
	c := newChannels(t)
	c.StartWorker(t)
	shop, general := newReceiver(t), newReceiver(t)
	c.subscribe(t, c.resellerKey, shop)
	generalEP := c.subscribe(t, c.generalKey, general)
	ctx := context.Background()

	type allocationData struct {
		EventID int64 `json:"event_id"`
		Channel struct {
			ID  int64  `json:"id"`
			Ref string `json:"ref"`
		} `json:"channel"`
		Change     string           `json:"change"`
		Seats      store.SeatCounts `json:"seats"`
		Categories []any            `json:"categories"`
	}
	changed := func(change string) allocationData {
		t.Helper()
		ev := shop.await("allocation.changed", func(d map[string]any) bool { return d["change"] == change })
		var data allocationData
		if err := json.Unmarshal(ev.Data, &data); err != nil {
			t.Fatal(err)
		}
		return data
	}

	c.allocate(t, c.reseller, distribution.Selector{SeatIDs: []string{"parterre-1-1", "parterre-1-2"}})
	got := changed("allocated")
	if got.EventID != c.swan || got.Channel.ID != c.reseller || got.Channel.Ref != "reseller" ||
		got.Seats != (store.SeatCounts{Allocated: 2, Left: 2}) || got.Categories == nil {
		t.Fatalf("allocated: %+v", got)
	}

	if _, err := c.dist.Release(ctx, c.companyA, store.Release{EventID: c.swan, ChannelID: c.reseller,
		SeatIDs: []string{"parterre-1-1"}}); err != nil {
		t.Fatal(err)
	}
	got = changed("released")
	if got.EventID != c.swan || got.Seats != (store.SeatCounts{Allocated: 1, Left: 1}) {
		t.Fatalf("released: %+v", got)
	}
	if shop.bad != 0 {
		t.Fatalf("%d deliveries failed verification", shop.bad)
	}

	// Both events are dispatched by now, and a dispatch makes every
	// delivery of an event at once: general sale's endpoint has none.
	var l listBody[struct {
		EventType string `json:"event_type"`
	}]
	c.Get(t, fmt.Sprintf("/v1/webhook-endpoints/%d/deliveries", generalEP), c.generalKey).Decode(t, &l)
	for _, d := range l.Data {
		if d.EventType == "allocation.changed" {
			t.Fatalf("general sale's endpoint has a delivery of allocation.changed: %+v", l.Data)
		}
	}
	for _, typ := range general.types() {
		if typ == "allocation.changed" {
			t.Fatal("general sale's endpoint received allocation.changed")
		}
	}
}

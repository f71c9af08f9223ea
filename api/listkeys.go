package api

import (
	"github.com/ticketsales/ticketsales/internal/catalog"
	"github.com/ticketsales/ticketsales/internal/orders"
	"github.com/ticketsales/ticketsales/internal/webhooks"
	"github.com/ticketsales/ticketsales/store"
)

// Each list's position of an item: the columns it is ordered by, as the
// store's keyset condition of that list reads them.

func orderSeek(o *orders.Order) store.Seek { return store.Seek{Time: o.CreatedAt, ID: o.ID} }

func eventSeek(e catalog.Event) store.Seek { return store.Seek{Time: e.StartsAt, ID: e.ID} }

func sessionSeek(s catalog.Session) store.Seek { return store.Seek{Time: s.StartsAt, ID: s.ID} }

func venueSeek(v catalog.VenueItem) store.Seek { return store.Seek{Text: v.Name, ID: v.ID} }

func citySeek(c catalog.City) store.Seek { return store.Seek{Text: c.Name, ID: c.ID} }

func endpointSeek(e *webhooks.Endpoint) store.Seek { return store.Seek{ID: e.ID} }

func deliverySeek(d *webhooks.Delivery) store.Seek {
	return store.Seek{Time: d.CreatedAt, Text: d.EventID}
}

func conflictSeek(c store.OfflineConflict) store.Seek {
	return store.Seek{Time: c.ScannedAt, ID: c.CheckInID}
}

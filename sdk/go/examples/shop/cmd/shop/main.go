// Command shop runs the example shop (package shop) for one seated event:
//
//	TICKETS_URL=http://127.0.0.1:8080 TICKETS_KEY=tk_sandbox_… \
//	  go run github.com/ticketsales/ticketsales/sdk/go/examples/shop/cmd/shop
//
// and open http://127.0.0.1:8090. EVENT_ID picks the event (default: the
// first on sale with a seat map), LISTEN the address (default
// 127.0.0.1:8090); SHOP_HTTPS=1 when buyers reach the shop over https.
package main

import (
	"context"
	"errors"
	"log"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"time"
	// Venues' time zones, also where the system has no zone database.
	_ "time/tzdata"

	ticketsales "github.com/ticketsales/ticketsales/sdk/go"
	"github.com/ticketsales/ticketsales/sdk/go/examples/shop"
)

func main() {
	base, key := os.Getenv("TICKETS_URL"), os.Getenv("TICKETS_KEY")
	if base == "" || key == "" {
		log.Fatal("set TICKETS_URL (the service) and TICKETS_KEY (a partner's key, tk_sandbox_… to try it)")
	}
	c, err := ticketsales.New(base, key)
	if err != nil {
		log.Fatal(err)
	}
	event, err := eventID(context.Background(), c)
	if err != nil {
		log.Fatal(err)
	}
	addr := os.Getenv("LISTEN")
	if addr == "" {
		addr = "127.0.0.1:8090"
	}
	s := &shop.Shop{Tickets: c, ServiceURL: base, EventID: event, HTTPS: os.Getenv("SHOP_HTTPS") == "1", Log: slog.Default()}
	srv := &http.Server{Addr: addr, Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	slog.Info("the example shop is open", "url", "http://"+addr, "event", event)
	log.Fatal(srv.ListenAndServe())
}

// eventID is EVENT_ID, or the first event on sale with a seat map.
func eventID(ctx context.Context, c *ticketsales.ClientWithResponses) (int64, error) {
	if v := os.Getenv("EVENT_ID"); v != "" {
		return strconv.ParseInt(v, 10, 64)
	}
	withScheme := ticketsales.ListEventsParamsFilterHasScheme("1")
	for e, err := range c.Events(ctx, &ticketsales.ListEventsParams{FilterHasScheme: &withScheme}) {
		if err != nil {
			return 0, err
		}
		return e.Id, nil
	}
	return 0, errors.New("no event with a seat map on sale: set EVENT_ID")
}

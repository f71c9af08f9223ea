// Command door runs the example door (package door) on barcodes read from
// standard input, one a line, printing each scan's outcome.
//
//	TICKETS_URL=http://127.0.0.1:8080 TICKETS_KEY=tk_sandbox_… EVENT_ID=7 GATE=North \
//	  go run github.com/ticketsales/ticketsales/sdk/go/examples/door/cmd/door < scanned.txt
package main

import (
	"bufio"
	"context"
	"fmt"
	"log"
	"net/http"
	"os"
	"strconv"

	"github.com/ticketsales/ticketsales/sdk/go/examples/door"
)

func main() {
	event, _ := strconv.ParseInt(os.Getenv("EVENT_ID"), 10, 64)
	d := &door.Door{URL: os.Getenv("TICKETS_URL"), Key: os.Getenv("TICKETS_KEY"), EventID: event,
		Gate: os.Getenv("GATE"), Device: "doorexample", HTTP: http.DefaultClient}
	if d.URL == "" || d.Key == "" || event == 0 {
		log.Fatal("set TICKETS_URL, TICKETS_KEY (a door key), EVENT_ID and GATE")
	}
	ctx := context.Background()
	if err := d.Prepare(ctx); err != nil {
		log.Fatal(err)
	}
	lines := bufio.NewScanner(os.Stdin)
	for lines.Scan() {
		s, err := d.Scan(ctx, lines.Text())
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s\t%s\toffline=%v\n", lines.Text(), s.Outcome, s.Offline)
	}
	if n, err := d.Upload(ctx); err != nil {
		log.Printf("%d offline scans not uploaded yet: %v", n, err)
	}
}

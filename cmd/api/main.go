// Command api serves the partner HTTP API (/v1 and /aggregator/v1), the
// OpenAPI document and docs, the organizer's cabinet, the buyers' order
// pages and the test gateway; api.NewProcess assembles it.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	_ "time/tzdata" // venue time zones on minimal images

	"github.com/ticketsales/ticketsales/api"
	"github.com/ticketsales/ticketsales/internal/app"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "api:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg, err := app.Settings()
	if err != nil {
		return err
	}
	// The binary's runtime, not the process's: tests build processes
	// inside their own.
	app.TuneGC()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A deployment runs several instances: each announces its own seat
	// changes and listens for the others'.
	a, err := api.NewProcess(ctx, cfg, api.ProcessOptions{Announce: true})
	if err != nil {
		return err
	}
	return a.Run(ctx)
}

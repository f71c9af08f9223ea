// Command worker runs the Temporal workflows and activities of the
// service, the reaper and the webhook relay; worker.NewProcess assembles
// it.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/ticketsales/ticketsales/internal/app"
	"github.com/ticketsales/ticketsales/worker"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg, err := app.Settings()
	if err != nil {
		return err
	}
	logger := cfg.Logger()
	// The binary's runtime, not the process's: tests build processes
	// inside their own. The priority before the work starts: threads
	// started later inherit it.
	app.TuneGC()
	if err := app.LowerPriority(cfg.WorkerNice); err != nil {
		logger.Warn("worker priority", "nice", cfg.WorkerNice, "err", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	p, err := worker.NewProcess(ctx, cfg, worker.ProcessOptions{Conns: app.Conns{Log: logger}})
	if err != nil {
		return err
	}
	return p.Run(ctx)
}

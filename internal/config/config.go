// Package config reads the service's settings from environment variables.
// Every variable, its default and meaning is listed in docs/operating.md,
// "Configuration" (TestEveryVariableIsDocumented keeps it so).
package config

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/caarlos0/env/v11"
)

// DefaultDatabaseURL is the local Postgres the scripts look for first.
const DefaultDatabaseURL = "postgres://postgres@127.0.0.1:5432/ticketsales?sslmode=disable"

// Config holds every setting of the api, worker and ticketctl.
type Config struct {
	DatabaseURL       string `env:"DATABASE_URL"`
	TemporalAddress   string `env:"TEMPORAL_ADDRESS" envDefault:"127.0.0.1:7233"`
	TemporalNamespace string `env:"TEMPORAL_NAMESPACE" envDefault:"default"`
	TaskQueue         string `env:"TASK_QUEUE" envDefault:"ticketsales"`
	// TemporalCompression is how the api and the worker compress their
	// gRPC calls to Temporal: "none" (the default) or "gzip" (the SDK's own
	// default, and the server answers in kind). An order's calls carry ids
	// and statuses, small enough that gzip is CPU on both ends for little:
	// it was a tenth of the worker's CPU in the sell-out
	// (docs/performance.md). gzip pays where the link is slow or metered.
	TemporalCompression string `env:"TEMPORAL_GRPC_COMPRESSION" envDefault:"none"`
	// TemporalUIURL is where operators open the Temporal UI: the cabinet's
	// order page links each order's workflow there ("": no link).
	TemporalUIURL       string        `env:"TEMPORAL_UI_URL" envDefault:"http://127.0.0.1:8233"`
	HTTPAddr            string        `env:"HTTP_ADDR" envDefault:"127.0.0.1:8080"`
	PublicBaseURL       string        `env:"PUBLIC_BASE_URL" envDefault:"http://127.0.0.1:8080"`
	AuthCacheTTL        time.Duration `env:"AUTH_CACHE_TTL" envDefault:"10s"`
	RequestLogFlush     time.Duration `env:"REQUEST_LOG_FLUSH" envDefault:"500ms"`
	RequestLogRetention time.Duration `env:"REQUEST_LOG_RETENTION" envDefault:"720h"`
	PaymentWindow       time.Duration `env:"PAYMENT_WINDOW" envDefault:"15m"`
	// ConfirmWait is how long a confirm waits for the order workflow to
	// apply its accepted payment before answering 202.
	ConfirmWait     time.Duration `env:"CONFIRM_WAIT" envDefault:"20s"`
	SandboxLifetime time.Duration `env:"SANDBOX_ORDER_LIFETIME" envDefault:"24h"`
	// AppEnv is "production" (the default) or "development": only
	// development runs with the built-in secrets and lets production keys
	// pay on the test gateway.
	AppEnv string `env:"APP_ENV" envDefault:"production"`
	// OrderTokenSecret seals order page tokens; the previous secrets still
	// open tokens sealed before a rotation. GatewaySecret signs gateway
	// callbacks. Both are required outside development (CheckSecrets).
	OrderTokenSecret         string   `env:"ORDER_TOKEN_SECRET"`
	OrderTokenPreviousSecret []string `env:"ORDER_TOKEN_PREVIOUS_SECRETS"`
	GatewaySecret            string   `env:"GATEWAY_SECRET"`
	// GatewayURL is the hosted-payment-page provider that takes production
	// payments (unset: production keys get 422 gateway_unavailable for
	// payment=gateway, outside development); GatewayAPIKey authenticates us.
	GatewayURL    string `env:"GATEWAY_URL"`
	GatewayAPIKey string `env:"GATEWAY_API_KEY"`
	// SandboxEnabled serves sandbox keys and mounts the test gateway.
	SandboxEnabled bool `env:"SANDBOX_ENABLED" envDefault:"true"`
	// RefundRetryBudget is how long a refund retries the gateway before it
	// is marked failed; RefundResumeAfter is when the reaper tries a failed
	// one again.
	RefundRetryBudget time.Duration `env:"REFUND_RETRY_BUDGET" envDefault:"24h"`
	RefundResumeAfter time.Duration `env:"REFUND_RESUME_AFTER" envDefault:"1h"`
	SMTPURL           string        `env:"SMTP_URL"`
	RedisURL          string        `env:"REDIS_URL"`
	WorkerMetricsAddr string        `env:"WORKER_METRICS_ADDR" envDefault:"127.0.0.1:9091"`
	// The api's /metrics has a listener of its own, never the public port.
	MetricsAddr    string  `env:"METRICS_ADDR" envDefault:"127.0.0.1:9090"`
	RateLimitRPS   float64 `env:"RATE_LIMIT_RPS" envDefault:"20"`
	RateLimitBurst int     `env:"RATE_LIMIT_BURST" envDefault:"40"`
	// The seat map's public reads per client address and token (0 rps: no
	// limit): a buyer's page polls availability every few seconds.
	SeatMapRateRPS   float64 `env:"SEAT_MAP_RATE_RPS" envDefault:"2"`
	SeatMapRateBurst int     `env:"SEAT_MAP_RATE_BURST" envDefault:"30"`
	// Failed authentications per client address (0 rps: no limit), and the
	// header a trusted proxy puts the client's address in ("": TCP peer).
	AuthFailureRPS   float64 `env:"AUTH_FAILURE_RPS" envDefault:"10"`
	AuthFailureBurst int     `env:"AUTH_FAILURE_BURST" envDefault:"20"`
	ClientIPHeader   string  `env:"CLIENT_IP_HEADER"`
	// CabinetPasswordChecks bounds the cabinet's password checks running at
	// once in one api process (0: a quarter of its CPUs, at least one).
	CabinetPasswordChecks int `env:"CABINET_PASSWORD_CHECKS" envDefault:"0"`
	// Holds are handed to their events' workflows off the request path, in
	// batches, by this many goroutines, with at most StartQueue holds
	// waiting (then a hold is handed over before answering).
	StartWorkers int `env:"RESERVATION_START_WORKERS" envDefault:"8"`
	StartQueue   int `env:"RESERVATION_START_QUEUE" envDefault:"20000"`
	// Holds read an event and its prices from memory for this long (0: never).
	SaleCacheTTL time.Duration `env:"SALE_CACHE_TTL" envDefault:"1s"`
	// The worker's reaper: how often it runs, and how old an unstarted or
	// lapsed hold must be before it steps in.
	ReapInterval time.Duration `env:"REAP_INTERVAL" envDefault:"1m"`
	ReapGrace    time.Duration `env:"REAP_GRACE" envDefault:"1m"`
	// Partner webhooks: the first retry, the longest wait between
	// attempts, how long a delivery is tried (an endpoint failing every
	// delivery that long is disabled), and how often the worker moves new
	// events to Temporal and sweeps deliveries never started.
	WebhookRetryInitial  time.Duration `env:"WEBHOOK_RETRY_INITIAL" envDefault:"15s"`
	WebhookRetryMax      time.Duration `env:"WEBHOOK_RETRY_MAX" envDefault:"1h"`
	WebhookGiveUpAfter   time.Duration `env:"WEBHOOK_GIVE_UP_AFTER" envDefault:"72h"`
	WebhookRelayInterval time.Duration `env:"WEBHOOK_RELAY_INTERVAL" envDefault:"500ms"`
	// WebhookRetention is how long sent events, their deliveries and
	// attempts are kept (redelivery works within it).
	WebhookRetention time.Duration `env:"WEBHOOK_RETENTION" envDefault:"720h"`
	// WebhookAnyAddress lifts the https and public-address rule for every
	// endpoint, production ones included: test harnesses in development
	// only (refused elsewhere).
	WebhookAnyAddress bool `env:"WEBHOOK_ANY_ADDRESS"`
	// Caps per company and environment: endpoints, and test pings and
	// redeliveries per minute (0: no cap on those two).
	WebhookEndpointsMax          int `env:"WEBHOOK_ENDPOINTS_MAX" envDefault:"10"`
	WebhookTestsPerMinute        int `env:"WEBHOOK_TESTS_PER_MINUTE" envDefault:"10"`
	WebhookRedeliveriesPerMinute int `env:"WEBHOOK_REDELIVERIES_PER_MINUTE" envDefault:"60"`
	// Deliveries run on a task queue of their own (unset: TASK_QUEUE with
	// "-webhooks"; the api starts redeliveries there, so both processes
	// must agree), polled by a worker with limits of its own: concurrent
	// delivery attempts, concurrent workflow tasks, pollers of each kind,
	// and attempts started per second over the whole queue (0: no limit).
	WebhookTaskQueue           string     `env:"WEBHOOK_TASK_QUEUE"`
	WebhookWorkerActivities    int        `env:"WEBHOOK_WORKER_ACTIVITIES" envDefault:"100"`
	WebhookWorkerWorkflowTasks int        `env:"WEBHOOK_WORKER_WORKFLOW_TASKS" envDefault:"10"`
	WebhookWorkerPollers       int        `env:"WEBHOOK_WORKER_POLLERS" envDefault:"2"`
	WebhookAttemptsPerSecond   float64    `env:"WEBHOOK_ATTEMPTS_PER_SECOND" envDefault:"0"`
	MailOutbox                 string     `env:"MAIL_OUTBOX" envDefault:".data/outbox"`
	MailFrom                   string     `env:"MAIL_FROM" envDefault:"tickets@ticketsales.local"`
	LogLevel                   slog.Level `env:"LOG_LEVEL" envDefault:"info"`
	LogFormat                  string     `env:"LOG_FORMAT" envDefault:"text"`
	// OrderRevision is the order workflow revision the api starts new
	// orders with (0 up to the newest this release's workers run). When upgrading from a
	// release before revisions, set 0 until every worker runs this one.
	OrderRevision int `env:"ORDER_REVISION" envDefault:"1"`
	// WorkerNice is the CPU priority (Linux nice, 0–19) the worker gives
	// itself, so that on a machine and scheduling group it shares with the
	// api, saga work waits while a buyer's request needs the CPU. 0 (the
	// default) leaves it as started: the sell-out measured no gain from 10
	// once the tickets PDF left the saga (docs/performance.md).
	WorkerNice int `env:"WORKER_NICE" envDefault:"0"`
	// DebugPprof serves net/http/pprof on the metrics listeners (METRICS_ADDR,
	// WORKER_METRICS_ADDR), never on the public port.
	DebugPprof bool `env:"DEBUG_PPROF"`
}

// Load reads the environment.
func Load() (Config, error) {
	var c Config
	if err := env.Parse(&c); err != nil {
		return c, fmt.Errorf("read configuration: %w", err)
	}
	return c.check()
}

// Defaults are the settings of an empty environment in development: the
// test stack starts from them.
func Defaults() Config {
	var c Config
	_ = env.ParseWithOptions(&c, env.Options{Environment: map[string]string{"APP_ENV": "development"}})
	c, _ = c.check()
	return c
}

func (c Config) check() (Config, error) {
	if c.DatabaseURL == "" {
		c.DatabaseURL = DefaultDatabaseURL
	}
	if c.ReapInterval <= 0 || c.ReapGrace < 0 {
		return c, fmt.Errorf("read configuration: REAP_INTERVAL must be positive and REAP_GRACE not negative")
	}
	if c.AuthFailureRPS < 0 || (c.AuthFailureRPS > 0 && c.AuthFailureBurst < 1) {
		return c, fmt.Errorf("read configuration: AUTH_FAILURE_RPS must not be negative, and AUTH_FAILURE_BURST at least 1 when it is set")
	}
	if c.CabinetPasswordChecks < 0 {
		return c, fmt.Errorf("read configuration: CABINET_PASSWORD_CHECKS must not be negative")
	}
	if c.StartWorkers < 1 || c.StartQueue < 0 {
		return c, fmt.Errorf("read configuration: RESERVATION_START_WORKERS must be at least 1 and RESERVATION_START_QUEUE not negative")
	}
	if c.WebhookRetryInitial <= 0 || c.WebhookRetryMax < c.WebhookRetryInitial || c.WebhookGiveUpAfter <= 0 || c.WebhookRelayInterval <= 0 {
		return c, fmt.Errorf("read configuration: WEBHOOK_RETRY_INITIAL, WEBHOOK_GIVE_UP_AFTER and WEBHOOK_RELAY_INTERVAL must be positive, WEBHOOK_RETRY_MAX at least WEBHOOK_RETRY_INITIAL")
	}
	if c.WebhookEndpointsMax < 1 || c.WebhookTestsPerMinute < 0 || c.WebhookRedeliveriesPerMinute < 0 {
		return c, fmt.Errorf("read configuration: WEBHOOK_ENDPOINTS_MAX must be at least 1, WEBHOOK_TESTS_PER_MINUTE and WEBHOOK_REDELIVERIES_PER_MINUTE not negative")
	}
	// The SDK refuses a single workflow task poller or slot: with one, a
	// worker would poll only its sticky queue.
	if c.WebhookWorkerActivities < 1 || c.WebhookWorkerWorkflowTasks < 2 || c.WebhookWorkerPollers < 2 || c.WebhookAttemptsPerSecond < 0 {
		return c, fmt.Errorf("read configuration: WEBHOOK_WORKER_ACTIVITIES must be at least 1, WEBHOOK_WORKER_WORKFLOW_TASKS and WEBHOOK_WORKER_POLLERS at least 2, WEBHOOK_ATTEMPTS_PER_SECOND not negative")
	}
	// Its upper bound is the workers' newest revision, checked where the
	// orders are wired (internal/app): the configuration knows no workflow.
	if c.OrderRevision < 0 {
		return c, fmt.Errorf("read configuration: ORDER_REVISION must not be negative, not %d", c.OrderRevision)
	}
	if c.TemporalCompression != "none" && c.TemporalCompression != "gzip" {
		return c, fmt.Errorf("read configuration: TEMPORAL_GRPC_COMPRESSION must be none or gzip, not %q", c.TemporalCompression)
	}
	if c.WorkerNice < 0 || c.WorkerNice > 19 {
		return c, fmt.Errorf("read configuration: WORKER_NICE must be from 0 to 19, not %d", c.WorkerNice)
	}
	// Deliveries have a queue of their own beside the main one.
	c.WebhookTaskQueue = cmp.Or(c.WebhookTaskQueue, c.TaskQueue+"-webhooks")
	if c.WebhookAnyAddress && c.AppEnv != AppEnvDevelopment {
		return c, fmt.Errorf("read configuration: WEBHOOK_ANY_ADDRESS is for development only")
	}
	if c.AppEnv != AppEnvProduction && c.AppEnv != AppEnvDevelopment {
		return c, fmt.Errorf("read configuration: APP_ENV must be production or development, not %q", c.AppEnv)
	}
	if c.RefundRetryBudget <= 0 || c.RefundResumeAfter <= 0 {
		return c, fmt.Errorf("read configuration: REFUND_RETRY_BUDGET and REFUND_RESUME_AFTER must be positive")
	}
	if c.Development() {
		// A laptop runs without secrets of its own.
		c.OrderTokenSecret = cmp.Or(c.OrderTokenSecret, devOrderTokenSecret)
		c.GatewaySecret = cmp.Or(c.GatewaySecret, devGatewaySecret)
	}
	return c, nil
}

// Development tells whether APP_ENV=development.
func (c Config) Development() bool { return c.AppEnv == AppEnvDevelopment }

// The deployments APP_ENV names.
const (
	AppEnvProduction  = "production"
	AppEnvDevelopment = "development"
)

// The development secrets, and others known from docs and examples: never
// good enough for production.
const (
	devOrderTokenSecret = DevelopmentOrderTokenSecret
	devGatewaySecret    = "dev-gateway-secret"
)

// DevelopmentOrderTokenSecret is the public order token secret of
// development, the default of every environment before secrets were
// required: order page links derived from it are forgeable.
const DevelopmentOrderTokenSecret = "dev-order-token-secret"

var knownSecrets = map[string]bool{devOrderTokenSecret: true, devGatewaySecret: true,
	"changeme": true, "change-me": true, "secret": true, "test-token-secret": true, "test-gateway-secret": true}

// MinSecretLength is the shortest secret accepted outside development.
const MinSecretLength = 32

// CheckSecrets refuses, outside development, secrets that are unset, short
// or known (the development defaults): the api and the worker do not start
// with them, since they would let anyone forge gateway callbacks.
func (c Config) CheckSecrets() error {
	if c.Development() {
		return nil
	}
	var errs []error
	for _, s := range []struct{ name, value string }{
		{"ORDER_TOKEN_SECRET", c.OrderTokenSecret}, {"GATEWAY_SECRET", c.GatewaySecret},
	} {
		switch {
		case s.value == "":
			errs = append(errs, fmt.Errorf("%s is not set", s.name))
		case knownSecrets[s.value] || len(s.value) < MinSecretLength:
			errs = append(errs, fmt.Errorf("%s is a development value or shorter than %d characters", s.name, MinSecretLength))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: set random secrets (e.g. `openssl rand -hex 32`), or APP_ENV=development on a laptop",
			errors.Join(errs...))
	}
	return nil
}

// Logger builds the structured logger the settings ask for.
func (c Config) Logger() *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.LogLevel}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}

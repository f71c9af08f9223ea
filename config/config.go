// Package config reads the service's settings from environment variables.
// Every variable, its default and meaning is listed in the README.
package config

import (
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
	DatabaseURL         string        `env:"DATABASE_URL"`
	TemporalAddress     string        `env:"TEMPORAL_ADDRESS" envDefault:"127.0.0.1:7233"`
	TemporalNamespace   string        `env:"TEMPORAL_NAMESPACE" envDefault:"default"`
	TaskQueue           string        `env:"TASK_QUEUE" envDefault:"ticketsales"`
	HTTPAddr            string        `env:"HTTP_ADDR" envDefault:"127.0.0.1:8080"`
	PublicBaseURL       string        `env:"PUBLIC_BASE_URL" envDefault:"http://127.0.0.1:8080"`
	AuthCacheTTL        time.Duration `env:"AUTH_CACHE_TTL" envDefault:"10s"`
	RequestLogFlush     time.Duration `env:"REQUEST_LOG_FLUSH" envDefault:"500ms"`
	RequestLogRetention time.Duration `env:"REQUEST_LOG_RETENTION" envDefault:"720h"`
	PaymentWindow       time.Duration `env:"PAYMENT_WINDOW" envDefault:"15m"`
	SandboxLifetime     time.Duration `env:"SANDBOX_ORDER_LIFETIME" envDefault:"24h"`
	// Secrets: set real ones in production; the defaults suit a laptop.
	OrderTokenSecret  string  `env:"ORDER_TOKEN_SECRET" envDefault:"dev-order-token-secret"`
	GatewaySecret     string  `env:"GATEWAY_SECRET" envDefault:"dev-gateway-secret"`
	SMTPURL           string  `env:"SMTP_URL"`
	RedisURL          string  `env:"REDIS_URL"`
	WorkerMetricsAddr string  `env:"WORKER_METRICS_ADDR" envDefault:"127.0.0.1:9091"`
	RateLimitRPS      float64 `env:"RATE_LIMIT_RPS" envDefault:"20"`
	RateLimitBurst    int     `env:"RATE_LIMIT_BURST" envDefault:"40"`
	// Reservation workflows are started off the request path by this many
	// goroutines, with at most StartQueue holds waiting (then holds start
	// their workflow before answering).
	StartWorkers int `env:"RESERVATION_START_WORKERS" envDefault:"8"`
	StartQueue   int `env:"RESERVATION_START_QUEUE" envDefault:"20000"`
	// Holds read an event and its prices from memory for this long (0: never).
	SaleCacheTTL time.Duration `env:"SALE_CACHE_TTL" envDefault:"1s"`
	// The worker's reaper: how often it runs, and how old an unstarted or
	// lapsed hold must be before it steps in.
	ReapInterval time.Duration `env:"REAP_INTERVAL" envDefault:"1m"`
	ReapGrace    time.Duration `env:"REAP_GRACE" envDefault:"1m"`
	MailOutbox   string        `env:"MAIL_OUTBOX" envDefault:".data/outbox"`
	MailFrom     string        `env:"MAIL_FROM" envDefault:"tickets@ticketsales.local"`
	LogLevel     slog.Level    `env:"LOG_LEVEL" envDefault:"info"`
	LogFormat    string        `env:"LOG_FORMAT" envDefault:"text"`
}

// Load reads the environment.
func Load() (Config, error) {
	var c Config
	if err := env.Parse(&c); err != nil {
		return c, fmt.Errorf("read configuration: %w", err)
	}
	if c.DatabaseURL == "" {
		c.DatabaseURL = DefaultDatabaseURL
	}
	if c.ReapInterval <= 0 || c.ReapGrace < 0 {
		return c, fmt.Errorf("read configuration: REAP_INTERVAL must be positive and REAP_GRACE not negative")
	}
	if c.StartWorkers < 1 || c.StartQueue < 0 {
		return c, fmt.Errorf("read configuration: RESERVATION_START_WORKERS must be at least 1 and RESERVATION_START_QUEUE not negative")
	}
	return c, nil
}

// Logger builds the structured logger the settings ask for.
func (c Config) Logger() *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.LogLevel}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}

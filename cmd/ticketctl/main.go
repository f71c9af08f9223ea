// Command ticketctl is the organizer's admin CLI: migrations, companies, API
// keys, catalog import, the request log and the demo seed.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	_ "time/tzdata" // venue time zones are validated on import

	"github.com/spf13/cobra"
	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/api"
	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/internal/config"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/report"
	"github.com/ticketsales/ticketsales/internal/requestlog"
	"github.com/ticketsales/ticketsales/store"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := newRoot(os.Stdout).ExecuteContext(ctx); err != nil {
		var ce catalogfile.Errors
		if errors.As(err, &ce) && jsonOut {
			_ = json.NewEncoder(os.Stdout).Encode(map[string]any{"errors": ce})
		} else {
			fmt.Fprintln(os.Stderr, "ticketctl:", err)
		}
		os.Exit(1)
	}
}

var jsonOut bool

// cli carries what every command needs.
type cli struct {
	out io.Writer
	cfg config.Config
	db  *bun.DB
	// publicBaseURL is where the api is reached: sign-in links point there.
	publicBaseURL string
}

func (c *cli) open(cmd *cobra.Command) error {
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	db, err := store.Open(cmd.Context(), cfg.DatabaseURL)
	if err != nil {
		return err
	}
	c.cfg, c.db, c.publicBaseURL = cfg, db, strings.TrimSuffix(cfg.PublicBaseURL, "/")
	return nil
}

// print writes v as JSON with --json, else as the text text() returns.
func (c *cli) print(v any, text func(w io.Writer)) error {
	if jsonOut {
		enc := json.NewEncoder(c.out)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	text(c.out)
	return nil
}

func newRoot(out io.Writer) *cobra.Command {
	c := &cli{out: out}
	root := &cobra.Command{
		Use:           "ticketctl",
		Short:         "Administer the ticket sales service: companies, API keys, catalog, request log",
		SilenceUsage:  true,
		SilenceErrors: true,
		// What the operator changes is ticketctl's in the companies'
		// audit logs.
		PersistentPreRun: func(cmd *cobra.Command, _ []string) {
			cmd.SetContext(store.WithActor(cmd.Context(), store.Actor{Kind: store.ActorTicketctl, Label: "ticketctl"}))
		},
		PersistentPostRun: func(*cobra.Command, []string) {
			if c.db != nil {
				_ = c.db.Close()
			}
		},
	}
	root.PersistentFlags().BoolVar(&jsonOut, "json", false, "machine-readable JSON output")
	root.AddCommand(c.migrateCmd(), c.companyCmd(), c.keyCmd(), c.catalogCmd(), c.requestsCmd(), c.seedDemoCmd(), c.openapiCmd(), c.userCmd(), c.reportCmd(), c.orderCmd(),
		c.channelCmd(), c.allocateCmd(), c.windowCmd(), c.releaseCmd())
	return root
}

func (c *cli) migrateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Create the database if needed and apply pending migrations",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.Load()
			if err != nil {
				return err
			}
			if err := store.EnsureDatabase(cmd.Context(), cfg.DatabaseURL); err != nil {
				return err
			}
			if err := c.open(cmd); err != nil {
				return err
			}
			applied, err := store.Migrate(cmd.Context(), c.db)
			if err != nil {
				return err
			}
			if applied == nil {
				applied = []string{}
			}
			return c.print(map[string]any{"applied": applied}, func(w io.Writer) {
				if len(applied) == 0 {
					fmt.Fprintln(w, "database is up to date")
				}
				for _, m := range applied {
					fmt.Fprintln(w, "applied", m)
				}
			})
		},
	}
}

func (c *cli) companyCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "company", Short: "Manage companies (organizers)"}
	var name, tz string
	create := &cobra.Command{
		Use:   "create --name NAME [--timezone ZONE]",
		Short: "Create a company and print its id",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if strings.TrimSpace(name) == "" {
				return errors.New("--name is required")
			}
			if _, err := report.LoadZone(tz); err != nil {
				return fmt.Errorf("--timezone: %w", err)
			}
			if err := c.open(cmd); err != nil {
				return err
			}
			co, err := store.InsertCompany(cmd.Context(), c.db, &store.Company{Name: name, Timezone: tz})
			if err != nil {
				return err
			}
			return c.print(co, func(w io.Writer) { fmt.Fprintln(w, co.ID) })
		},
	}
	create.Flags().StringVar(&name, "name", "", "company name")
	create.Flags().StringVar(&tz, "timezone", "UTC", "IANA time zone of the company's report days, e.g. Europe/Moscow")
	cmd.AddCommand(create)
	return cmd
}

type createdKey struct {
	ID             int64    `json:"id"`
	Key            string   `json:"key"`
	CompanyID      int64    `json:"company_id"`
	Environment    string   `json:"environment"`
	Scopes         []string `json:"scopes"`
	Name           string   `json:"name"`
	Application    string   `json:"application"`
	CheckinEventID *int64   `json:"checkin_event_id,omitempty"`
	CheckinGate    *string  `json:"checkin_gate,omitempty"`
}

func (c *cli) createKey(cmd *cobra.Command, companyID int64, env, application, name string, scopes []string, door apikey.DoorLimits) (*createdKey, error) {
	if env != apikey.Sandbox && env != apikey.Production {
		return nil, fmt.Errorf("--env must be sandbox or production, not %q", env)
	}
	// The operator's tool: no cabinet role bounds the scopes it gives.
	key, k, err := (&apikey.Keys{DB: c.db}).CreateIn(cmd.Context(), apikey.Operator, companyID, env, application, name, scopes, door, "")
	if err != nil {
		return nil, err
	}
	if application == "" {
		application = env // the environment's default application
	}
	return &createdKey{ID: k.ID, Key: key, CompanyID: companyID, Environment: env, Scopes: k.Scopes, Name: name, Application: application,
		CheckinEventID: k.CheckinEventID, CheckinGate: k.CheckinGate}, nil
}

// doorOf describes a key's door limits for a listing: "-" for a partner's
// key, else the event and the gate (any when not limited).
func doorOf(k *apikey.CompanyKey) string {
	if !k.IsDoorKey() {
		return "-"
	}
	event, gate := "any event", "any gate"
	if k.CheckinEventID != nil {
		event = "event " + strconv.FormatInt(*k.CheckinEventID, 10)
		if k.CheckinEventTitle != nil {
			event += " (" + *k.CheckinEventTitle + ")"
		}
	}
	if k.CheckinGate != nil {
		gate = "gate " + *k.CheckinGate
	}
	return event + ", " + gate
}

func (c *cli) keyCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "key", Short: "Manage API keys"}
	var companyID int64
	var env, name, application string
	var scopes []string
	var door apikey.DoorLimits
	create := &cobra.Command{
		Use:     "create --company ID --env sandbox|production [--application NAME] [--scopes S,...] [--event ID] [--gate NAME] [--name N]",
		Example: "  ticketctl key create --company 1 --env production --scopes checkin --event 7 --gate North --name \"north door\"",
		Short:   "Create an API key; the key is printed once and stored only as a hash",
		Long: "Create an API key; the key is printed once and stored only as a hash.\n\n" +
			"Without --scopes a key gets a partner's scopes (" + strings.Join(apikey.PartnerScopes, ",") + "): it does not admit tickets.\n" +
			"A door key has --scopes checkin and nothing else; --event (one of the company's) and --gate limit it to one event and gate.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.open(cmd); err != nil {
				return err
			}
			k, err := c.createKey(cmd, companyID, env, application, name, scopes, door)
			if err != nil {
				return err
			}
			return c.print(k, func(w io.Writer) {
				limits := ""
				if k.CheckinEventID != nil {
					limits += fmt.Sprintf(", event %d", *k.CheckinEventID)
				}
				if k.CheckinGate != nil {
					limits += ", gate " + *k.CheckinGate
				}
				if k.Application != k.Environment {
					limits += ", application " + k.Application
				}
				fmt.Fprintf(w, "key id %d (%s, %s%s)\n%s\n", k.ID, k.Environment, strings.Join(k.Scopes, ","), limits, k.Key)
			})
		},
	}
	create.Flags().Int64Var(&companyID, "company", 0, "company id")
	create.Flags().StringVar(&env, "env", "", "sandbox or production")
	create.Flags().StringSliceVar(&scopes, "scopes", apikey.PartnerScopes, "comma-separated scopes (known: "+strings.Join(apikey.AllScopes, ",")+")")
	create.Flags().StringVar(&name, "name", "", "a name for the key")
	create.Flags().StringVar(&application, "application", "", "the application the key belongs to, made on first use (a partner's own, for a sales channel); default: the environment's, named after it")
	create.Flags().Int64Var(&door.EventID, "event", 0, "a door key's event (scope checkin only)")
	create.Flags().StringVar(&door.Gate, "gate", "", "a door key's gate (scope checkin only)")
	_ = create.MarkFlagRequired("company")
	_ = create.MarkFlagRequired("env")

	var listCompany int64
	list := &cobra.Command{
		Use:   "list --company ID",
		Short: "List the company's keys (never the keys themselves), with door keys' event and gate",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.open(cmd); err != nil {
				return err
			}
			keys, err := (&apikey.Keys{DB: c.db}).List(cmd.Context(), listCompany)
			if err != nil {
				return err
			}
			if keys == nil {
				keys = []apikey.CompanyKey{}
			}
			return c.print(keys, func(w io.Writer) {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tENV\tNAME\tPREFIX\tSCOPES\tDOOR\tCREATED\tREVOKED")
				for i := range keys {
					k := &keys[i]
					revoked := "-"
					if k.RevokedAt != nil {
						revoked = k.RevokedAt.UTC().Format(time.RFC3339)
					}
					fmt.Fprintf(tw, "%d\t%s\t%s\t%s…\t%s\t%s\t%s\t%s\n", k.ID, k.Environment, k.Name, k.KeyPrefix,
						strings.Join(k.Scopes, ","), doorOf(k), k.CreatedAt.UTC().Format(time.RFC3339), revoked)
				}
				_ = tw.Flush()
			})
		},
	}
	list.Flags().Int64Var(&listCompany, "company", 0, "company id")
	_ = list.MarkFlagRequired("company")

	revoke := &cobra.Command{
		Use:   "revoke KEY_ID",
		Short: "Revoke an API key (it stops working within the auth cache TTL)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil {
				return fmt.Errorf("KEY_ID must be a number: %w", err)
			}
			if err := c.open(cmd); err != nil {
				return err
			}
			k, err := (&apikey.Keys{DB: c.db}).RevokeAny(cmd.Context(), id)
			if err != nil {
				return err
			}
			return c.print(k, func(w io.Writer) { fmt.Fprintf(w, "key %d revoked at %s\n", k.ID, k.RevokedAt.Format(time.RFC3339)) })
		},
	}
	cmd.AddCommand(create, list, revoke)
	return cmd
}

func (c *cli) catalogCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "catalog", Short: "Manage the catalog"}
	var companyID int64
	imp := &cobra.Command{
		Use:   "import --company ID FILE.json",
		Short: "Upsert a catalog file by ref; a file with any error is refused whole",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			if err := c.open(cmd); err != nil {
				return err
			}
			return c.importCatalog(cmd, companyID, data)
		},
	}
	imp.Flags().Int64Var(&companyID, "company", 0, "company id")
	_ = imp.MarkFlagRequired("company")
	cmd.AddCommand(imp)
	return cmd
}

func (c *cli) importCatalog(cmd *cobra.Command, companyID int64, data []byte) error {
	res, err := catalogfile.Import(cmd.Context(), c.db, companyID, data)
	if err != nil {
		return err
	}
	if len(res.Releases) > 0 {
		// The file's timed releases wait in workflows of their own.
		if err := c.distribution().ScheduleReleases(cmd.Context(), companyID, res.Releases); err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "imported; a release workflow was not started (the worker starts it once the release is due): %v\n", err)
		}
	}
	return c.print(res, func(w io.Writer) {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "KIND\tREF\tID\tACTION")
		for _, r := range res.Records {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", r.Kind, r.Ref, r.ID, r.Action)
		}
		_ = tw.Flush()
		fmt.Fprintf(w, "%d created, %d updated, %d unchanged; %d seats changed\n",
			res.Count(catalogfile.Created), res.Count(catalogfile.Updated), res.Count(catalogfile.Unchanged), res.SeatsChanged)
	})
}

func (c *cli) requestsCmd() *cobra.Command {
	var f requestlog.Filter
	var since string
	cmd := &cobra.Command{
		Use:   "requests --company ID [--since T] [--status N] [--key ID] [--limit N]",
		Short: "List the request log, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if since != "" {
				t, err := parseSince(since, time.Now())
				if err != nil {
					return err
				}
				f.Since = t
			}
			if err := c.open(cmd); err != nil {
				return err
			}
			entries, err := requestlog.List(cmd.Context(), c.db, f)
			if err != nil {
				return err
			}
			return c.print(entries, func(w io.Writer) {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "TIME\tREQUEST ID\tKEY\tMETHOD\tPATH\tSTATUS\tDURATION")
				for _, e := range entries {
					key := "-"
					if e.APIKeyID != nil {
						key = strconv.FormatInt(*e.APIKeyID, 10)
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", e.CreatedAt.Format(time.RFC3339), e.RequestID, key,
						e.Method, e.Path, e.Status, time.Duration(e.DurationUS)*time.Microsecond)
				}
				_ = tw.Flush()
			})
		},
	}
	cmd.Flags().Int64Var(&f.CompanyID, "company", 0, "company id")
	cmd.Flags().Int64Var(&f.APIKeyID, "key", 0, "API key id")
	cmd.Flags().IntVar(&f.Status, "status", 0, "HTTP status")
	cmd.Flags().StringVar(&since, "since", "", "an ISO 8601 time or a duration back from now (e.g. 1h)")
	cmd.Flags().IntVar(&f.Limit, "limit", 100, "at most this many entries")
	_ = cmd.MarkFlagRequired("company")
	return cmd
}

func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--since must be an ISO 8601 time or a duration like 1h: %q", s)
	}
	return t, nil
}

const demoCompany = "Demo Organizer"

func (c *cli) seedDemoCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "seed-demo",
		Short: "Create (or reuse) the demo company, load the demo catalog and print a new sandbox key",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.open(cmd); err != nil {
				return err
			}
			ctx := cmd.Context()
			co, err := store.GetCompanyByName(ctx, c.db, demoCompany)
			if errors.Is(err, errs.NotFound) {
				co, err = store.CreateCompany(ctx, c.db, demoCompany)
			}
			if err != nil {
				return err
			}
			companyID := co.ID
			res, err := catalogfile.Import(ctx, c.db, companyID, catalogfile.Demo(time.Now()))
			if err != nil {
				return err
			}
			k, err := c.createKey(cmd, companyID, apikey.Sandbox, "", "demo", apikey.PartnerScopes, apikey.DoorLimits{})
			if err != nil {
				return err
			}
			link, err := c.demoOrganizerLink(cmd, companyID)
			if err != nil {
				return err
			}
			out := map[string]any{"company_id": companyID, "key": k, "catalog": res,
				"organizer": map[string]string{"email": demoOrganizerEmail, "signin_url": link}}
			return c.print(out, func(w io.Writer) {
				fmt.Fprintf(w, "demo company %d: catalog %d created, %d updated, %d unchanged\n", companyID,
					res.Count(catalogfile.Created), res.Count(catalogfile.Updated), res.Count(catalogfile.Unchanged))
				fmt.Fprintf(w, "demo sandbox key: %s\n", k.Key)
				fmt.Fprintf(w, "demo organizer %s, one-time sign-in link: %s\n", demoOrganizerEmail, link)
			})
		},
	}
}

func (c *cli) openapiCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "openapi",
		Short: "Print the API's OpenAPI 3.1 document as JSON (needs no database)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			// Registration only describes the operations: no handler runs,
			// so the API is built without a database or clients.
			srv := api.New(api.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
			doc, err := json.MarshalIndent(srv.API.OpenAPI(), "", "  ")
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(c.out, "%s\n", doc)
			return err
		},
	}
}

package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/app"
	"github.com/ticketsales/ticketsales/internal/distribution"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/window"
	"github.com/ticketsales/ticketsales/store"
)

// channelRef is what the channels table accepts as a ref.
var channelRef = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// distribution is the service every distribution command goes through;
// the api learns of its changes from the database's triggers. Its Temporal
// client is lazy: only a timed release dials it (to start, move or end
// its AllocationRelease workflow).
func (c *cli) distribution() *distribution.Service {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	tc, err := client.NewLazyClient(app.TemporalClientOptions(c.cfg, log, nil))
	if err != nil {
		// Options that cannot make a client start no workflow; the worker's
		// sweep starts an overdue release's.
		return distribution.New(c.db, log, nil, distribution.Settings{})
	}
	return distribution.New(c.db, log, nil, distribution.Settings{Temporal: tc, TaskQueue: c.cfg.TaskQueue})
}

// explain spells out every field of a validation error (its Error names
// the first only).
func explain(err error) error {
	var verr *errs.ValidationError
	if !errors.As(err, &verr) || len(verr.Fields) < 2 {
		return err
	}
	lines := make([]string, len(verr.Fields))
	for i, f := range verr.Fields {
		lines[i] = fmt.Sprintf("%s: %s (%v)", f.Location, f.Message, f.Value)
	}
	return fmt.Errorf("%w:\n  %s", err, strings.Join(lines, "\n  "))
}

// channelOf finds the company's channel by ref, saying which is missing.
func (c *cli) channelOf(cmd *cobra.Command, companyID int64, ref string) (*store.Channel, error) {
	ch, err := store.GetChannelByRef(cmd.Context(), c.db, companyID, ref)
	if errors.Is(err, errs.NotFound) {
		return nil, fmt.Errorf("company %d has no channel %q (ticketctl channel list --company %d)", companyID, ref, companyID)
	}
	return ch, err
}

type channelView struct {
	ID           int64            `json:"id"`
	Ref          string           `json:"ref"`
	Name         string           `json:"name"`
	Applications []applicationRef `json:"applications"`
}

type applicationRef struct {
	ID          int64  `json:"id"`
	Environment string `json:"environment"`
	Name        string `json:"name"`
}

func (c *cli) channelCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "channel", Short: "Manage sales channels: groups of applications that sell what is allocated to them"}
	var companyID int64
	var ref, name string
	create := &cobra.Command{
		Use:     "create --company ID --ref REF --name NAME",
		Example: "  ticketctl channel create --company 1 --ref kassir --name \"Кассир.ру\"",
		Short:   "Create a channel, or rename the channel of that ref",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !channelRef.MatchString(ref) {
				return fmt.Errorf("--ref %q: 1-64 lowercase letters, digits, '_' or '-', starting with a letter or digit", ref)
			}
			if n := utf8.RuneCountInString(name); strings.TrimSpace(name) == "" || n > 200 {
				return fmt.Errorf("--name: 1 to 200 characters, not blank")
			}
			if err := c.open(cmd); err != nil {
				return err
			}
			if _, err := store.GetCompanyTimezone(cmd.Context(), c.db, companyID); err != nil {
				return err // the company does not exist
			}
			ch, err := store.UpsertChannel(cmd.Context(), c.db, companyID, ref, name)
			if err != nil {
				return err
			}
			return c.print(ch, func(w io.Writer) { fmt.Fprintf(w, "channel %d %s (%s)\n", ch.ID, ch.Ref, ch.Name) })
		},
	}
	create.Flags().Int64Var(&companyID, "company", 0, "company id")
	create.Flags().StringVar(&ref, "ref", "", "the channel's ref: lowercase letters, digits, '_' or '-'")
	create.Flags().StringVar(&name, "name", "", "the channel's name")
	for _, f := range []string{"company", "ref", "name"} {
		_ = create.MarkFlagRequired(f)
	}

	var listCompany int64
	list := &cobra.Command{
		Use:   "list --company ID",
		Short: "List the company's channels and their applications",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.open(cmd); err != nil {
				return err
			}
			chs, members, err := store.ListChannels(cmd.Context(), c.db, listCompany)
			if err != nil {
				return err
			}
			out := make([]channelView, len(chs))
			for i, ch := range chs {
				out[i] = channelView{ID: ch.ID, Ref: ch.Ref, Name: ch.Name, Applications: []applicationRef{}}
				for _, m := range members {
					if m.ChannelID == ch.ID {
						out[i].Applications = append(out[i].Applications, applicationRef{ID: m.ApplicationID, Environment: m.Environment, Name: m.Name})
					}
				}
			}
			return c.print(out, func(w io.Writer) {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tREF\tNAME\tAPPLICATIONS")
				for _, ch := range out {
					apps := make([]string, len(ch.Applications))
					for i, a := range ch.Applications {
						apps[i] = a.Environment + "/" + a.Name
					}
					if len(apps) == 0 {
						apps = []string{"-"}
					}
					fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", ch.ID, ch.Ref, ch.Name, strings.Join(apps, ", "))
				}
				_ = tw.Flush()
			})
		},
	}
	list.Flags().Int64Var(&listCompany, "company", 0, "company id")
	_ = list.MarkFlagRequired("company")

	cmd.AddCommand(create, list, c.channelAppCmd(true), c.channelAppCmd(false))
	return cmd
}

// channelAppCmd is add-app (put an application in a channel) or
// remove-app (take it out: it sells in general sale only).
func (c *cli) channelAppCmd(add bool) *cobra.Command {
	var companyID int64
	var ref, env, app string
	use, short := "remove-app", "Take an application out of its channel: its keys then sell in general sale only"
	if add {
		use, short = "add-app", "Put an application in a channel (out of any other): its keys sell the channel's allocations"
	}
	cmd := &cobra.Command{
		Use:   use + " --company ID --channel REF --env sandbox|production --application NAME",
		Short: short,
		Long: short + ".\n\nAn application is made by its first key (ticketctl key create --application NAME);\n" +
			"the environment's default application is named after it. The api answers keys from its\n" +
			"cache, so a change reaches every instance within the cache's TTL.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if env != apikey.Sandbox && env != apikey.Production {
				return fmt.Errorf("--env must be sandbox or production, not %q", env)
			}
			if err := c.open(cmd); err != nil {
				return err
			}
			ch, err := c.channelOf(cmd, companyID, ref)
			if err != nil {
				return err
			}
			channelID := ch.ID
			if !add {
				channelID = 0
			}
			appID, err := store.SetApplicationChannel(cmd.Context(), c.db, companyID, env, app, channelID)
			if errors.Is(err, errs.NotFound) {
				return fmt.Errorf("company %d has no %s application %q: its first key makes it (ticketctl key create --application)",
					companyID, env, app)
			}
			if err != nil {
				return err
			}
			out := map[string]any{"application_id": appID, "environment": env, "application": app, "channel": nil}
			if add {
				out["channel"] = ch.Ref
			}
			return c.print(out, func(w io.Writer) {
				if add {
					fmt.Fprintf(w, "%s application %q (%d) sells in channel %s\n", env, app, appID, ch.Ref)
				} else {
					fmt.Fprintf(w, "%s application %q (%d) sells in general sale only\n", env, app, appID)
				}
			})
		},
	}
	cmd.Flags().Int64Var(&companyID, "company", 0, "company id")
	cmd.Flags().StringVar(&ref, "channel", "", "the channel's ref")
	cmd.Flags().StringVar(&env, "env", "", "sandbox or production")
	cmd.Flags().StringVar(&app, "application", "", "the application's name")
	for _, f := range []string{"company", "channel", "env", "application"} {
		_ = cmd.MarkFlagRequired(f)
	}
	return cmd
}

// parseRows reads --rows ZONE:FROM-TO.
func parseRows(specs []string) ([]distribution.RowRange, error) {
	var out []distribution.RowRange
	for _, s := range specs {
		zone, rows, ok := strings.Cut(s, ":")
		from, to, ok2 := strings.Cut(rows, "-")
		if !ok || !ok2 || zone == "" || from == "" || to == "" {
			return nil, fmt.Errorf("--rows %q: expected ZONE:FROM-TO, such as parterre:1-5", s)
		}
		out = append(out, distribution.RowRange{Zone: zone, From: from, To: to})
	}
	return out, nil
}

type allocated struct {
	Channel string       `json:"channel"`
	EventID int64        `json:"event_id"`
	Moved   *int         `json:"moved,omitempty"`
	Left    *int         `json:"left,omitempty"`
	LeftIDs []string     `json:"left_seat_ids,omitempty"`
	Quota   *store.Quota `json:"quota,omitempty"`
}

func (c *cli) allocateCmd() *cobra.Command {
	var companyID, eventID, categoryID, sessionID int64
	var ref string
	var quantity int
	var sel distribution.Selector
	var rows []string
	cmd := &cobra.Command{
		Use: "allocate --company ID --event ID --channel REF (--zone Z | --rows ZONE:FROM-TO | --seat ID)... | --category ID --quantity N [--session ID]",
		Example: "  ticketctl allocate --company 1 --event 7 --channel kassir --zone balcony --rows parterre:1-3 --seat parterre-10-5\n" +
			"  ticketctl allocate --company 1 --event 8 --channel kassir --category 21 --quantity 100",
		Short: "Allocate seats, or a quantity of a general-admission category, to a channel",
		Long: "Allocate seats, or a quantity of a general-admission category, to a channel.\n\n" +
			"Seats: only those free and in general sale move; the rest (held, sold, another channel's) are\n" +
			"counted as left where they were. A quantity sets the channel's quota of the category (and\n" +
			"session) to N: it grows by at most what general sale has left, and shrinks by at most what the\n" +
			"channel has not sold.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := parseRows(rows)
			if err != nil {
				return err
			}
			sel.Rows = r
			byQuantity := cmd.Flags().Changed("category") || cmd.Flags().Changed("quantity") || cmd.Flags().Changed("session")
			switch {
			case byQuantity && !sel.Empty():
				return errors.New("allocate seats (--zone, --rows, --seat) or a quantity (--category, --quantity), not both")
			case byQuantity && (!cmd.Flags().Changed("category") || !cmd.Flags().Changed("quantity")):
				return errors.New("a quantity needs --category and --quantity")
			case !byQuantity && sel.Empty():
				return errors.New("name seats (--zone, --rows, --seat) or a quantity (--category, --quantity)")
			}
			if err := c.open(cmd); err != nil {
				return err
			}
			ch, err := c.channelOf(cmd, companyID, ref)
			if err != nil {
				return err
			}
			svc := c.distribution()
			out := allocated{Channel: ch.Ref, EventID: eventID}
			if byQuantity {
				var session *int64
				if cmd.Flags().Changed("session") {
					session = &sessionID
				}
				q, err := svc.SetQuota(cmd.Context(), companyID, eventID, ch.ID, categoryID, session, quantity)
				if err != nil {
					return explain(err)
				}
				out.Quota = q
				return c.print(out, func(w io.Writer) {
					fmt.Fprintf(w, "channel %s: %d of category %d allocated (%d taken, %d left to sell)\n",
						ch.Ref, q.Allocated, q.CategoryID, q.Taken, q.Left())
				})
			}
			mv, err := svc.AllocateSeats(cmd.Context(), companyID, eventID, ch.ID, sel)
			if err != nil {
				return explain(err)
			}
			moved, left := len(mv.Moved), len(mv.Left)
			out.Moved, out.Left, out.LeftIDs = &moved, &left, mv.Left
			return c.print(out, func(w io.Writer) {
				fmt.Fprintf(w, "channel %s: %d seats moved, %d left where they were (held, sold or another channel's)\n", ch.Ref, moved, left)
			})
		},
	}
	f := cmd.Flags()
	f.Int64Var(&companyID, "company", 0, "company id")
	f.Int64Var(&eventID, "event", 0, "event id")
	f.StringVar(&ref, "channel", "", "the channel's ref")
	f.StringArrayVar(&sel.Zones, "zone", nil, "a zone whose seats to allocate (repeatable)")
	f.StringArrayVar(&rows, "rows", nil, "rows FROM to TO of a zone, as ZONE:FROM-TO (repeatable)")
	f.StringArrayVar(&sel.SeatIDs, "seat", nil, "a seat id, such as parterre-3-12 (repeatable)")
	f.Int64Var(&categoryID, "category", 0, "a general-admission category's id")
	f.IntVar(&quantity, "quantity", 0, "the channel's quantity of the category")
	f.Int64Var(&sessionID, "session", 0, "a session (schedule slot) id of a scheduled event")
	for _, n := range []string{"company", "event", "channel"} {
		_ = cmd.MarkFlagRequired(n)
	}
	return cmd
}

// parseTime reads an RFC 3339 time; "" is none.
func parseTime(flag, s string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return nil, fmt.Errorf("--%s must be an RFC 3339 time with its offset (2026-12-01T10:00:00+03:00) or \"\" for none, not %q", flag, s)
	}
	return &t, nil
}

type windowSet struct {
	EventID   int64         `json:"event_id"`
	Channel   *string       `json:"channel"`
	Window    window.Window `json:"window"`
	ReleaseAt *time.Time    `json:"release_at,omitempty"`
}

func (c *cli) windowCmd() *cobra.Command {
	var companyID, eventID int64
	var ref, start, end, release string
	cmd := &cobra.Command{
		Use: "window --company ID --event ID [--channel REF [--release-at T|\"\"]] --start T|\"\" --end T|\"\"",
		Example: "  ticketctl window --company 1 --event 7 --start 2026-11-01T10:00:00+03:00 --end \"\"\n" +
			"  ticketctl window --company 1 --event 7 --channel kassir --start 2026-10-25T10:00:00+03:00 --end \"\" --release-at 2026-11-20T00:00:00+03:00",
		Short: "Set the sales window of general sale, or of a channel, for an event",
		Long: "Set the sales window of general sale (without --channel) or of a channel for an event.\n\n" +
			"Times are RFC 3339 with their offset; \"\" is no bound (general sale: from publication until the\n" +
			"event starts; a channel: general sale's bound). A channel's --release-at is when its unsold\n" +
			"allocation returns to general sale (\"\": only by hand); without it the one set before stays.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var w window.Window
			var err error
			if w.Start, err = parseTime("start", start); err != nil {
				return err
			}
			if w.End, err = parseTime("end", end); err != nil {
				return err
			}
			if w.Start != nil && w.End != nil && !w.Start.Before(*w.End) {
				return errors.New("--end must come after --start")
			}
			releaseSet := cmd.Flags().Changed("release-at")
			if releaseSet && ref == "" {
				return errors.New("--release-at goes with --channel: general sale has nothing to release")
			}
			releaseAt, err := parseTime("release-at", release)
			if err != nil {
				return err
			}
			if err := c.open(cmd); err != nil {
				return err
			}
			ctx := cmd.Context()
			out := windowSet{EventID: eventID, Window: w}
			if ref == "" {
				if err := store.SetGeneralSale(ctx, c.db, companyID, eventID, w); err != nil {
					return fmt.Errorf("company %d: %w", companyID, err)
				}
			} else {
				ch, err := c.channelOf(cmd, companyID, ref)
				if err != nil {
					return err
				}
				if !releaseSet {
					terms, err := store.GetChannelTerms(ctx, c.db, eventID, ch.ID)
					if err != nil {
						return err
					}
					if terms != nil {
						releaseAt = terms.ReleaseAt
					}
				}
				if err := c.distribution().SetTerms(ctx, companyID, eventID, ch.ID, w, releaseAt); err != nil {
					return explain(err)
				}
				out.Channel, out.ReleaseAt = &ch.Ref, releaseAt
			}
			return c.print(out, func(w io.Writer) {
				who := "general sale"
				if out.Channel != nil {
					who = "channel " + *out.Channel
				}
				fmt.Fprintf(w, "event %d, %s: sells %s until %s", eventID, who, bound(out.Window.Start, "from publication"),
					bound(out.Window.End, "the event starts"))
				if out.Channel != nil {
					fmt.Fprintf(w, "; releases %s", bound(out.ReleaseAt, "by hand only"))
				}
				fmt.Fprintln(w)
			})
		},
	}
	f := cmd.Flags()
	f.Int64Var(&companyID, "company", 0, "company id")
	f.Int64Var(&eventID, "event", 0, "event id")
	f.StringVar(&ref, "channel", "", "the channel's ref (absent: general sale)")
	f.StringVar(&start, "start", "", "when sales open, RFC 3339, or \"\"")
	f.StringVar(&end, "end", "", "when sales close, RFC 3339, or \"\"")
	f.StringVar(&release, "release-at", "", "a channel's timed release to general sale, RFC 3339, or \"\"")
	for _, n := range []string{"company", "event", "start", "end"} {
		_ = cmd.MarkFlagRequired(n)
	}
	return cmd
}

func bound(t *time.Time, none string) string {
	if t == nil {
		return none
	}
	return t.Format(time.RFC3339)
}

type released struct {
	Channel    string        `json:"channel"`
	EventID    int64         `json:"event_id"`
	Whole      bool          `json:"whole"`
	Seats      []string      `json:"seats"`
	Quantities map[int64]int `json:"quantities"`
}

func (c *cli) releaseCmd() *cobra.Command {
	var companyID, eventID, quotaID int64
	var ref string
	var seats []string
	var quantity int
	cmd := &cobra.Command{
		Use:   "release --company ID --event ID --channel REF [--seat ID ...] [--quota ID --quantity N]",
		Short: "Return a channel's allocation on an event to general sale: seats, a quantity, or all of it",
		Long: "Return a channel's allocation on an event to general sale.\n\n" +
			"--seat (repeatable) releases those seats, --quota and --quantity so many of a quota (its id as\n" +
			"allocate prints it); with neither, the whole allocation is released and closed. Sold seats stay the\n" +
			"channel's; held ones move with their holds standing.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			byQuota := cmd.Flags().Changed("quota") || cmd.Flags().Changed("quantity")
			if byQuota && (!cmd.Flags().Changed("quota") || !cmd.Flags().Changed("quantity")) {
				return errors.New("a quantity needs --quota and --quantity")
			}
			if byQuota && quantity < 1 {
				return fmt.Errorf("--quantity must be at least 1, not %d", quantity)
			}
			if err := c.open(cmd); err != nil {
				return err
			}
			ch, err := c.channelOf(cmd, companyID, ref)
			if err != nil {
				return err
			}
			r := store.Release{EventID: eventID, ChannelID: ch.ID, SeatIDs: seats, Whole: len(seats) == 0 && !byQuota}
			if byQuota {
				quotas, err := store.ListQuotaLeft(cmd.Context(), c.db, eventID, ch.ID)
				if err != nil {
					return err
				}
				found := false
				for _, q := range quotas {
					found = found || q.ID == quotaID
				}
				if !found {
					return fmt.Errorf("channel %s has no quota %d on event %d: %w", ch.Ref, quotaID, eventID, errs.NotFound)
				}
				r.Quantities = map[int64]int{quotaID: quantity}
			}
			got, err := c.distribution().Release(cmd.Context(), companyID, r)
			if err != nil {
				return explain(err)
			}
			out := released{Channel: ch.Ref, EventID: eventID, Whole: r.Whole, Seats: got.Seats, Quantities: got.Quantities}
			if out.Seats == nil {
				out.Seats = []string{}
			}
			return c.print(out, func(w io.Writer) {
				n := 0
				for _, k := range got.Quantities {
					n += k
				}
				what := "released"
				if r.Whole {
					what = "released as a whole"
				}
				fmt.Fprintf(w, "channel %s on event %d %s: %d seats, %d tickets of quotas back in general sale\n", ch.Ref, eventID, what, len(got.Seats), n)
				if len(seats) > len(got.Seats) {
					fmt.Fprintf(w, "%d of the seats named were not the channel's unsold seats and stayed\n", len(seats)-len(got.Seats))
				}
			})
		},
	}
	f := cmd.Flags()
	f.Int64Var(&companyID, "company", 0, "company id")
	f.Int64Var(&eventID, "event", 0, "event id")
	f.StringVar(&ref, "channel", "", "the channel's ref")
	f.StringArrayVar(&seats, "seat", nil, "a seat id to release (repeatable)")
	f.Int64Var(&quotaID, "quota", 0, "a quota id")
	f.IntVar(&quantity, "quantity", 0, "how many of the quota to release")
	for _, n := range []string{"company", "event", "channel"} {
		_ = cmd.MarkFlagRequired(n)
	}
	return cmd
}

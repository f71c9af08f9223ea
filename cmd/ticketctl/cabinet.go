package main

import (
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ticketsales/ticketsales/internal/organizer"
	"github.com/ticketsales/ticketsales/internal/report"
)

// demoOrganizerEmail is the demo company's cabinet user.
const demoOrganizerEmail = "organizer@demo.test"

// demoOrganizerLink creates the demo organizer on first use and issues a
// fresh one-time link every time: each `make run` prints one that works.
func (c *cli) demoOrganizerLink(cmd *cobra.Command, companyID int64) (string, error) {
	users := organizer.New(c.db, nil, organizer.Limits{})
	u, path, err := users.CreateUser(cmd.Context(), companyID, demoOrganizerEmail, organizer.RoleOwner)
	if errors.Is(err, organizer.ErrAlreadyMember) {
		if u, err = users.UserByEmail(cmd.Context(), demoOrganizerEmail, companyID); err == nil {
			path, err = users.NewLink(cmd.Context(), u.ID)
		}
	}
	if err != nil {
		return "", err
	}
	return c.publicBaseURL + path, nil
}

type createdUser struct {
	ID        int64     `json:"id"`
	CompanyID int64     `json:"company_id"`
	Email     string    `json:"email"`
	Role      string    `json:"role"`
	SignInURL string    `json:"signin_url"`
	Expires   time.Time `json:"signin_url_expires_at"`
}

func (c *cli) userCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "user", Short: "Manage the organizer's cabinet users (e-mail and password; not API keys)"}
	var companyID int64
	var email, role string
	create := &cobra.Command{
		Use: "create --company ID --email E [--role owner|finance|support|door|developer]",
		Short: "Create a cabinet user and print a one-time link to set the password and sign in " +
			"(the company's first owner; owners invite the rest of the team from the cabinet)",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.open(cmd); err != nil {
				return err
			}
			r, err := organizer.ParseRole(role)
			if err != nil {
				return err
			}
			u, path, err := organizer.New(c.db, nil, organizer.Limits{}).CreateUser(cmd.Context(), companyID, email, r)
			if err != nil {
				return err
			}
			return c.printUser(u, path)
		},
	}
	create.Flags().Int64Var(&companyID, "company", 0, "company id")
	create.Flags().StringVar(&email, "email", "", "the user's e-mail address")
	create.Flags().StringVar(&role, "role", string(organizer.RoleOwner), "the user's role in the cabinet")
	_ = create.MarkFlagRequired("company")
	_ = create.MarkFlagRequired("email")

	var linkEmail string
	var linkCompany int64
	var linkReset bool
	link := &cobra.Command{
		Use: "link --email E [--company ID] [--reset]",
		Short: "Print a new one-time sign-in link for a user (a forgotten password: a joined user's link sets the address's password, " +
			"for every company; an invited user's asks for the one the address has, if any, unless --reset; " +
			"--company when the address is a user of several)",
		Long: "Print a new one-time sign-in link for a cabinet user; the user's older links stop working.\n\n" +
			"A joined user's link sets the address's password (a forgotten one): every session of the person ends and their " +
			"other lost-password links are spent. An invited user's link (not joined yet) asks for the password the address " +
			"has, if it has one, and sets none.\n\n" +
			"--reset: the link sets a new password even for an invited user, and joins. For a person who forgot the password " +
			"and whose only membership is an invitation (removed and invited back): their invitation asks for the password " +
			"and no joined membership has a lost-password link. Make sure the person asking owns the address.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.open(cmd); err != nil {
				return err
			}
			users := organizer.New(c.db, nil, organizer.Limits{})
			u, err := users.UserByEmail(cmd.Context(), linkEmail, linkCompany)
			if err != nil {
				return err
			}
			issue := users.NewLink
			if linkReset {
				issue = users.NewResetLink
			}
			path, err := issue(cmd.Context(), u.ID)
			if err != nil {
				return err
			}
			return c.printUser(u, path)
		},
	}
	link.Flags().StringVar(&linkEmail, "email", "", "the user's e-mail address")
	link.Flags().Int64Var(&linkCompany, "company", 0, "the company whose user it is (when the address is a user of several)")
	link.Flags().BoolVar(&linkReset, "reset", false, "the link sets a new password even if the user has not joined yet (an invitation)")
	_ = link.MarkFlagRequired("email")
	var disableEmail string
	var disableID, disableCompany int64
	disable := &cobra.Command{
		Use:   "disable (--email E [--company ID] | --id ID)",
		Short: "Disable a cabinet user: end the user's sessions, spend the user's links and refuse sign-in (never the company's last active owner)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (disableEmail == "") == (disableID == 0) {
				return errors.New("give exactly one of --email and --id")
			}
			if err := c.open(cmd); err != nil {
				return err
			}
			users := organizer.New(c.db, nil, organizer.Limits{})
			id := disableID
			if disableEmail != "" {
				u, err := users.UserByEmail(cmd.Context(), disableEmail, disableCompany)
				if err != nil {
					return err
				}
				id = u.ID
			}
			u, err := users.Disable(cmd.Context(), id)
			if errors.Is(err, organizer.ErrLastOwner) {
				return fmt.Errorf("%w: make another owner first (ticketctl user create --company ID --email E), "+
					"who sets a password, then disable this one", err)
			}
			if err != nil {
				return err
			}
			return c.print(u, func(w io.Writer) {
				fmt.Fprintf(w, "user %d (%s) of company %d is disabled: its sessions are ended and it cannot sign in\n", u.ID, u.Email, u.CompanyID)
			})
		},
	}
	disable.Flags().StringVar(&disableEmail, "email", "", "the user's e-mail address")
	disable.Flags().Int64Var(&disableID, "id", 0, "the user's id")
	disable.Flags().Int64Var(&disableCompany, "company", 0, "the company whose user it is (when the address is a user of several)")
	var listCompany int64
	list := &cobra.Command{
		Use:   "list --company ID",
		Short: "List a company's cabinet users with their roles and status (active, invited, disabled)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.open(cmd); err != nil {
				return err
			}
			team, err := organizer.New(c.db, nil, organizer.Limits{}).Team(cmd.Context(), listCompany)
			if err != nil {
				return err
			}
			return c.print(team, func(w io.Writer) {
				tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tE-MAIL\tROLE\tSTATUS\tLAST SIGN-IN")
				for _, m := range team {
					last := "-"
					if m.LastSignInAt != nil {
						last = m.LastSignInAt.UTC().Format("2006-01-02 15:04 UTC")
					}
					fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", m.ID, m.Email, m.Role, m.Status, last)
				}
				_ = tw.Flush()
			})
		},
	}
	list.Flags().Int64Var(&listCompany, "company", 0, "company id")
	_ = list.MarkFlagRequired("company")
	var resetEmail string
	resetTwoFactor := &cobra.Command{
		Use:   "reset-two-factor --email E",
		Short: "Remove a person's two-factor authenticator and recovery codes (a lost phone), in every company, and end their sessions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.open(cmd); err != nil {
				return err
			}
			if err := organizer.New(c.db, nil, organizer.Limits{}).ResetPersonTwoFactor(cmd.Context(), resetEmail); err != nil {
				return err
			}
			return c.print(map[string]any{"email": resetEmail, "two_factor": false}, func(w io.Writer) {
				fmt.Fprintf(w, "%s's two-factor sign-in is removed and their sessions ended: they sign in with the password and set it up again\n", resetEmail)
			})
		},
	}
	resetTwoFactor.Flags().StringVar(&resetEmail, "email", "", "the person's e-mail address")
	_ = resetTwoFactor.MarkFlagRequired("email")
	cmd.AddCommand(create, link, disable, list, resetTwoFactor)
	return cmd
}

func (c *cli) printUser(u *organizer.User, path string) error {
	out := createdUser{ID: u.ID, CompanyID: u.CompanyID, Email: u.Email, Role: string(u.Role), SignInURL: c.publicBaseURL + path,
		Expires: time.Now().Add(organizer.LinkLifetime).UTC().Truncate(time.Second)}
	return c.print(out, func(w io.Writer) {
		fmt.Fprintf(w, "user %d (%s, %s) of company %d\none-time sign-in link (valid %s):\n%s\n", u.ID, u.Email, u.Role, u.CompanyID,
			organizer.LinkLifetime, out.SignInURL)
	})
}

func (c *cli) reportCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "report", Short: "Organizer reports"}
	var f report.Filter
	var from, to string
	var csvOut bool
	sales := &cobra.Command{
		Use:   "sales --company ID [--event ID] [--from YYYY-MM-DD] [--to YYYY-MM-DD]",
		Short: "The sales report of the cabinet: production orders only, per event, category, channel and day",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var first, last time.Time
			for _, d := range []struct {
				flag, v string
				to      *time.Time
			}{{"--from", from, &first}, {"--to", to, &last}} {
				if d.v == "" {
					continue
				}
				t, err := time.Parse(time.DateOnly, d.v)
				if err != nil {
					return fmt.Errorf("%s must be a date YYYY-MM-DD: %q", d.flag, d.v)
				}
				*d.to = t
			}
			if err := c.open(cmd); err != nil {
				return err
			}
			loc, err := report.Zone(cmd.Context(), c.db, f.CompanyID)
			if err != nil {
				return err
			}
			f.TimeZone = loc.String()
			// Whole local days of the company; one end alone stays open.
			switch {
			case !first.IsZero() && !last.IsZero():
				report.Days(&f, first, last, loc)
			case !first.IsZero():
				f.From = report.LocalMidnight(first.Year(), first.Month(), first.Day(), loc)
			case !last.IsZero():
				f.To = report.LocalMidnight(last.Year(), last.Month(), last.Day()+1, loc)
			}
			rep, err := report.Sales(cmd.Context(), c.db, f)
			if err != nil {
				return err
			}
			if csvOut {
				return report.WriteCSV(c.out, rep)
			}
			return c.print(rep, func(w io.Writer) {
				t, u := rep.Total, report.Units
				fmt.Fprintf(w, "days in %s, money in %s\n", rep.TimeZone, rep.Currency)
				fmt.Fprintf(w, "tickets sold %d, refunded %d, net %d\n", t.TicketsSold, t.TicketsRefunded, t.TicketsNet)
				fmt.Fprintf(w, "face value %s + fees on top %s = paid by buyers %s\n", u(t.FaceValue), u(t.ServiceFees-t.FeesInPrice), u(t.Gross))
				fmt.Fprintf(w, "refunded %s (face value %s, service fee %s)\n", u(t.Refunds), u(t.FaceValueRefunded), u(t.FeeRefunded))
				fmt.Fprintf(w, "service fees %s (inside prices %s), given back %s, kept by the service %s\n",
					u(t.ServiceFees), u(t.FeesInPrice), u(t.FeesReturned), u(t.FeesKept))
				fmt.Fprintf(w, "net to the organizer %s\n", u(t.NetToOrganizer))
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "EVENT\tSESSION\tTITLE\tSOLD\tREFUNDED\tFACE VALUE\tFEES\tPAID\tREFUNDED\tFEES KEPT\tNET TO ORGANIZER")
				row := func(id, session, title string, s report.SalesFigures) {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", id, session, title, s.TicketsSold, s.TicketsRefunded,
						u(s.FaceValue), u(s.ServiceFees), u(s.Gross), u(s.Refunds), u(s.FeesKept), u(s.NetToOrganizer))
				}
				for _, e := range rep.Events {
					row(fmt.Sprint(e.EventID), "", e.Title, e.SalesFigures)
					for _, s := range e.Sessions {
						if s.SessionID == 0 {
							row("", "no session", "", s.SalesFigures)
							continue
						}
						row("", s.StartsAt.Format("2006-01-02 15:04 MST"), s.Ref, s.SalesFigures)
					}
				}
				_ = tw.Flush()
			})
		},
	}
	sales.Flags().Int64Var(&f.CompanyID, "company", 0, "company id")
	sales.Flags().Int64Var(&f.EventID, "event", 0, "one event's id")
	sales.Flags().StringVar(&from, "from", "", "first day (the company's time zone), YYYY-MM-DD")
	sales.Flags().StringVar(&to, "to", "", "last day (the company's time zone), YYYY-MM-DD, included")
	sales.Flags().BoolVar(&csvOut, "csv", false, "CSV rows, as the cabinet's download")
	_ = sales.MarkFlagRequired("company")
	cmd.AddCommand(sales)
	return cmd
}

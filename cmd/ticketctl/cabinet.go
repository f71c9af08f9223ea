package main

import (
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"ticketsales/internal/organizer"
	"ticketsales/internal/report"
)

// demoOrganizerEmail is the demo company's cabinet user.
const demoOrganizerEmail = "organizer@demo.test"

// demoOrganizerLink creates the demo organizer on first use and issues a
// fresh one-time link every time: each `make run` prints one that works.
func (c *cli) demoOrganizerLink(cmd *cobra.Command, companyID int64) (string, error) {
	users := organizer.New(c.db, nil, organizer.Limits{})
	u, path, err := users.CreateUser(cmd.Context(), companyID, demoOrganizerEmail, organizer.RoleOwner)
	if errors.Is(err, organizer.ErrEmailTaken) {
		if u, err = users.UserByEmail(cmd.Context(), demoOrganizerEmail); err == nil {
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
	link := &cobra.Command{
		Use:   "link --email E",
		Short: "Print a new one-time sign-in link for a user (a forgotten password)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.open(cmd); err != nil {
				return err
			}
			users := organizer.New(c.db, nil, organizer.Limits{})
			u, err := users.UserByEmail(cmd.Context(), linkEmail)
			if err != nil {
				return err
			}
			path, err := users.NewLink(cmd.Context(), u.ID)
			if err != nil {
				return err
			}
			return c.printUser(u, path)
		},
	}
	link.Flags().StringVar(&linkEmail, "email", "", "the user's e-mail address")
	_ = link.MarkFlagRequired("email")
	var disableEmail string
	var disableID int64
	disable := &cobra.Command{
		Use:   "disable (--email E | --id ID)",
		Short: "Disable a cabinet user: end the user's sessions, spend the user's links and refuse sign-in",
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
				u, err := users.UserByEmail(cmd.Context(), disableEmail)
				if err != nil {
					return err
				}
				id = u.ID
			}
			u, err := users.Disable(cmd.Context(), id)
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
	cmd.AddCommand(create, link, disable)
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
			if from != "" {
				t, err := time.Parse(time.DateOnly, from)
				if err != nil {
					return fmt.Errorf("--from must be a date YYYY-MM-DD: %q", from)
				}
				f.From = t
			}
			if to != "" {
				t, err := time.Parse(time.DateOnly, to)
				if err != nil {
					return fmt.Errorf("--to must be a date YYYY-MM-DD: %q", to)
				}
				f.To = t.AddDate(0, 0, 1) // the whole last day
			}
			if err := c.open(cmd); err != nil {
				return err
			}
			rep, err := report.Sales(cmd.Context(), c.db, f)
			if err != nil {
				return err
			}
			if csvOut {
				return report.WriteCSV(c.out, rep)
			}
			return c.print(rep, func(w io.Writer) {
				t := rep.Total
				fmt.Fprintf(w, "tickets sold %d, refunded %d, net %d; gross %d, service fees %d, refunds %d, net revenue %d (minor units)\n",
					t.TicketsSold, t.TicketsRefunded, t.TicketsNet, t.Gross, t.ServiceFees, t.Refunds, t.NetRevenue)
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "EVENT\tTITLE\tSOLD\tREFUNDED\tGROSS\tFEES\tREFUNDS\tNET")
				for _, e := range rep.Events {
					fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\n", e.EventID, e.Title, e.TicketsSold, e.TicketsRefunded,
						e.Gross, e.ServiceFees, e.Refunds, e.NetRevenue)
				}
				_ = tw.Flush()
			})
		},
	}
	sales.Flags().Int64Var(&f.CompanyID, "company", 0, "company id")
	sales.Flags().Int64Var(&f.EventID, "event", 0, "one event's id")
	sales.Flags().StringVar(&from, "from", "", "first day (UTC), YYYY-MM-DD")
	sales.Flags().StringVar(&to, "to", "", "last day (UTC), YYYY-MM-DD, included")
	sales.Flags().BoolVar(&csvOut, "csv", false, "CSV rows, as the cabinet's download")
	_ = sales.MarkFlagRequired("company")
	cmd.AddCommand(sales)
	return cmd
}

// Package cabinet is the organizer's cabinet at /cabinet: server-rendered
// pages for the sales report, API keys (partner and door keys) and the
// request log, an event's doors live (check-in), and the catalog. Organizer users sign in with e-mail and password (they are not
// API keys); sessions live in Postgres; every state-changing request passes
// cross-origin protection; every page shows only the user's company.
// Templates, styles and the one small script are embedded in the binary.
package cabinet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/alexedwards/scs/postgresstore"
	"github.com/alexedwards/scs/v2"
	"github.com/uptrace/bun"

	"go.temporal.io/sdk/client"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/distribution"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/export"
	"github.com/ticketsales/ticketsales/internal/mail"
	"github.com/ticketsales/ticketsales/internal/orders"
	"github.com/ticketsales/ticketsales/internal/organizer"
	"github.com/ticketsales/ticketsales/internal/ratelimit"
	"github.com/ticketsales/ticketsales/internal/refunds"
	"github.com/ticketsales/ticketsales/internal/report"
	"github.com/ticketsales/ticketsales/internal/webhooks"
)

// Deps are what the cabinet serves from.
type Deps struct {
	DB    *bun.DB
	Users *organizer.Service
	// Auth is the api's key authenticator: a key revoked here leaves its
	// cache at once.
	Auth *apikey.Authenticator
	// CatalogChanged is told of every event a catalog upload touched, so
	// the api's availability cache drops it (nil: nothing to tell).
	CatalogChanged func(eventID int64)
	// PublicBaseURL decides the session cookie's Secure flag: set when the
	// deployment is reached over https (as behind a TLS-terminating proxy),
	// and on any request that arrives over TLS itself.
	PublicBaseURL string
	// ClientIPHeader names the header a trusted proxy puts the client's
	// address in ("": the TCP peer), for sign-in limits.
	ClientIPHeader string
	Log            *slog.Logger
	Now            func() time.Time

	// The cabinet acts on orders through the same services as the
	// API: the same workflows, guarantees and idempotency (nil in tests
	// that serve no orders).
	Orders   *orders.Service
	Refunds  *refunds.Service
	Webhooks *webhooks.Service
	// Temporal starts and signals workflows the cabinet needs beside
	// the services'; TemporalNamespace and TemporalUIURL make an order's
	// link to its workflow in the Temporal UI ("" UI URL: no link).
	Temporal          client.Client
	TemporalNamespace string
	TemporalUIURL     string
	// Mail sends invitations to the team (nil: none are sent).
	Mail mail.Sender
	// Distribution manages sales channels and allocations, as the
	// partner API, ticketctl and the release workflow do.
	Distribution *distribution.Service
}

// Session lifetimes: an absolute limit and an idle one.
const (
	SessionLifetime = 12 * time.Hour
	SessionIdle     = time.Hour
	// CookieName is the session cookie's name.
	CookieName = "cabinet_session"
)

type cabinet struct {
	Deps
	sessions *scs.SessionManager
	pages    *zonedPages
	apiKeys  *apikey.Keys
	// office acts on orders (refund, resend, cancel) as the API does.
	office *organizer.Orders
}

// New returns the handler of /cabinet and everything under it.
func New(d Deps) http.Handler {
	if d.Log == nil {
		d.Log = slog.Default()
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	sm := scs.New()
	// Expired sessions are deleted by the api's housekeeping, not by a
	// goroutine of the store's own.
	sm.Store = postgresstore.NewWithConfig(d.DB.DB, postgresstore.Config{TableName: "cabinet_sessions", CleanUpInterval: 0})
	sm.Lifetime, sm.IdleTimeout = SessionLifetime, SessionIdle
	sm.Cookie.Name, sm.Cookie.Path = CookieName, "/cabinet"
	sm.Cookie.HttpOnly, sm.Cookie.SameSite = true, http.SameSiteLaxMode
	sm.Cookie.Secure = strings.HasPrefix(d.PublicBaseURL, "https://")
	sm.ErrorFunc = func(w http.ResponseWriter, r *http.Request, err error) {
		d.Log.ErrorContext(r.Context(), "cabinet session", "err", err)
		http.Error(w, "The cabinet could not load your session; try again.", http.StatusInternalServerError)
	}
	c := &cabinet{Deps: d, sessions: sm, pages: &zonedPages{}, apiKeys: &apikey.Keys{DB: d.DB, Auth: d.Auth},
		office: &organizer.Orders{DB: d.DB, Orders: d.Orders, Refunds: d.Refunds, Temporal: d.Temporal}}

	mux := http.NewServeMux()
	mux.Handle("GET /cabinet/{$}", c.signedIn(c.home))
	mux.HandleFunc("GET /cabinet/signin", c.signInPage)
	mux.HandleFunc("POST /cabinet/signin", c.signIn)
	// The second factor of a sign-in whose first passed (no one is
	// signed in yet: the session only holds who waits for the code).
	mux.HandleFunc("GET /cabinet/signin/code", c.codePage)
	mux.HandleFunc("POST /cabinet/signin/code", c.signInCode)
	mux.HandleFunc("GET /cabinet/link/{token}", c.linkPage)
	mux.HandleFunc("POST /cabinet/link/{token}", c.useLink)
	mux.HandleFunc("POST /cabinet/signout", c.signOut)
	// Every page and action names the permission it needs; a user whose
	// role lacks it gets 403 (organizer.Role.Can).
	mux.Handle("GET /cabinet/report", c.allow(organizer.PermReport, c.report))
	mux.Handle("GET /cabinet/report.csv", c.allow(organizer.PermReport, c.reportCSV))
	mux.Handle("POST /cabinet/report/timezone", c.allow(organizer.PermTeam, c.setReportZone))
	mux.Handle("GET /cabinet/orders", c.allow(organizer.PermOrders, c.orders))
	mux.Handle("GET /cabinet/orders/{id}", c.allow(organizer.PermOrders, c.order))
	mux.Handle("GET /cabinet/keys", c.allow(organizer.PermKeys, c.keys))
	mux.Handle("POST /cabinet/keys", c.allow(organizer.PermKeys, c.createKey))
	mux.Handle("GET /cabinet/keys/created", c.allow(organizer.PermKeys, c.createdKey))
	mux.Handle("GET /cabinet/keys/{id}/revoke", c.allow(organizer.PermKeys, c.revokeConfirm))
	mux.Handle("POST /cabinet/keys/{id}/revoke", c.allow(organizer.PermKeys, c.revokeKey))
	mux.Handle("GET /cabinet/requests", c.allow(organizer.PermRequests, c.requests))
	mux.Handle("GET /cabinet/webhooks", c.allow(organizer.PermWebhooks, c.webhooks))
	mux.Handle("POST /cabinet/webhooks", c.allow(organizer.PermWebhooks, c.createEndpoint))
	mux.Handle("GET /cabinet/webhooks/{id}", c.allow(organizer.PermWebhooks, c.webhookEndpointPage))
	mux.Handle("POST /cabinet/webhooks/{id}", c.allow(organizer.PermWebhooks, c.endpointAction("edited", c.editEndpoint)))
	mux.Handle("POST /cabinet/webhooks/{id}/disable", c.allow(organizer.PermWebhooks, c.endpointAction("disabled", c.disableEndpoint)))
	mux.Handle("POST /cabinet/webhooks/{id}/enable", c.allow(organizer.PermWebhooks, c.endpointAction("enabled", c.enableEndpoint)))
	mux.Handle("POST /cabinet/webhooks/{id}/rotate-secret", c.allow(organizer.PermWebhooks, c.endpointAction("secret rotated", c.rotateSecret)))
	mux.Handle("POST /cabinet/webhooks/{id}/test", c.allow(organizer.PermWebhooks, c.endpointAction("tested", c.testEndpoint)))
	mux.Handle("GET /cabinet/webhooks/{id}/deliveries/{event}", c.allow(organizer.PermWebhooks, c.webhookDeliveryPage))
	mux.Handle("POST /cabinet/webhooks/{id}/deliveries/{event}/redeliver", c.allow(organizer.PermWebhooks, c.redeliver))
	mux.Handle("GET /cabinet/checkin", c.allow(organizer.PermCheckIn, c.checkinPage))
	// The door desk: look a ticket up, admit or undo by hand, the
	// refused scans, and a lost scanner's key replaced.
	mux.Handle("GET /cabinet/door", c.allow(organizer.PermDoorDesk, c.doorDesk))
	mux.Handle("POST /cabinet/door/admit", c.allow(organizer.PermDoorDesk, c.deskAdmit))
	mux.Handle("POST /cabinet/door/undo", c.allow(organizer.PermDoorDesk, c.deskUndo))
	mux.Handle("GET /cabinet/door/keys/{id}/replace", c.allow(organizer.PermDoorDesk, c.replaceKeyConfirm))
	mux.Handle("POST /cabinet/door/keys/{id}/replace", c.allow(organizer.PermDoorDesk, c.replaceKey))
	mux.Handle("GET /cabinet/door/keys/created", c.allow(organizer.PermDoorDesk, c.createdDoorKey))
	// Exports (exports.go): each in XLSX, CSV for Excel and plain CSV.
	mux.Handle("GET /cabinet/export/orders.xlsx", c.allow(organizer.PermOrders, c.exportOrders(export.XLSX)))
	mux.Handle("GET /cabinet/export/orders-excel.csv", c.allow(organizer.PermOrders, c.exportOrders(export.ExcelCSV)))
	mux.Handle("GET /cabinet/export/orders.csv", c.allow(organizer.PermOrders, c.exportOrders(export.CSV)))
	mux.Handle("GET /cabinet/export/attendees.xlsx", c.allow(organizer.PermOrders, c.exportAttendees(export.XLSX)))
	mux.Handle("GET /cabinet/export/attendees-excel.csv", c.allow(organizer.PermOrders, c.exportAttendees(export.ExcelCSV)))
	mux.Handle("GET /cabinet/export/attendees.csv", c.allow(organizer.PermOrders, c.exportAttendees(export.CSV)))
	mux.Handle("GET /cabinet/export/checkins.xlsx", c.allow(organizer.PermCheckIn, c.exportCheckIns(export.XLSX)))
	mux.Handle("GET /cabinet/export/checkins-excel.csv", c.allow(organizer.PermCheckIn, c.exportCheckIns(export.ExcelCSV)))
	mux.Handle("GET /cabinet/export/checkins.csv", c.allow(organizer.PermCheckIn, c.exportCheckIns(export.CSV)))
	mux.Handle("GET /cabinet/export/report.xlsx", c.allow(organizer.PermReport, c.exportReport(export.XLSX)))
	mux.Handle("GET /cabinet/export/report-excel.csv", c.allow(organizer.PermReport, c.exportReport(export.ExcelCSV)))
	mux.Handle("GET /cabinet/export/report.csv", c.allow(organizer.PermReport, c.exportReport(export.CSV)))
	mux.Handle("GET /cabinet/catalog", c.allow(organizer.PermCatalog, c.catalog))
	mux.Handle("POST /cabinet/catalog", c.allow(organizer.PermCatalog, c.uploadCatalog))
	// Acting on an order: a confirm page, then the POST (once per page).
	mux.Handle("GET /cabinet/orders/{id}/refund", c.allow(organizer.PermRefund, c.actionForm(actionRefund)))
	mux.Handle("POST /cabinet/orders/{id}/refund", c.allow(organizer.PermRefund, c.refundOrder))
	mux.Handle("GET /cabinet/orders/{id}/resend", c.allow(organizer.PermResend, c.actionForm(actionResend)))
	mux.Handle("POST /cabinet/orders/{id}/resend", c.allow(organizer.PermResend, c.resendTickets))
	mux.Handle("POST /cabinet/orders/{id}/notes", c.allow(organizer.PermNotes, c.addNote))
	mux.Handle("POST /cabinet/orders/{id}/email", c.allow(organizer.PermResend, c.correctEmail))
	mux.Handle("GET /cabinet/orders/{id}/cancel", c.allow(organizer.PermCancel, c.actionForm(actionCancel)))
	mux.Handle("POST /cabinet/orders/{id}/cancel", c.allow(organizer.PermCancel, c.cancelOrder))
	mux.Handle("GET /cabinet/catalog/example.json", c.allow(organizer.PermCatalog, c.catalogExample))
	mux.Handle("GET /cabinet/catalog/format", c.allow(organizer.PermCatalog, c.catalogFormat))
	// Sales channels: who sells what of each event, and when.
	mux.Handle("GET /cabinet/channels", c.allow(organizer.PermDistribution, c.distributed(c.channels)))
	mux.Handle("POST /cabinet/channels", c.allow(organizer.PermDistribution, c.distributed(c.saveChannel)))
	mux.Handle("POST /cabinet/channels/applications", c.allow(organizer.PermDistribution, c.distributed(c.moveApplication)))
	mux.Handle("GET /cabinet/channels/events/{id}", c.allow(organizer.PermDistribution, c.distributed(c.channelEvent)))
	mux.Handle("POST /cabinet/channels/events/{id}/general-sale", c.allow(organizer.PermDistribution, c.distributed(c.setGeneralSale)))
	mux.Handle("POST /cabinet/channels/events/{id}/terms", c.allow(organizer.PermDistribution, c.distributed(c.setTerms)))
	mux.Handle("POST /cabinet/channels/events/{id}/allocate", c.allow(organizer.PermDistribution, c.distributed(c.allocate)))
	mux.Handle("POST /cabinet/channels/events/{id}/release", c.allow(organizer.PermDistribution, c.distributed(c.release)))
	// The hall map: seats by state, selected and allocated on the drawing.
	mux.Handle("GET /cabinet/channels/events/{id}/map", c.allow(organizer.PermDistribution, c.distributed(c.hallMap)))
	mux.Handle("POST /cabinet/channels/events/{id}/map", c.allow(organizer.PermDistribution, c.distributed(c.hallAction)))
	mux.Handle("GET /cabinet/audit", c.allow(organizer.PermAudit, c.audit))
	mux.Handle("GET /cabinet/team", c.allow(organizer.PermTeam, c.team))
	mux.Handle("POST /cabinet/team/invite", c.allow(organizer.PermTeam, c.invite))
	mux.Handle("POST /cabinet/team/{id}/resend", c.allow(organizer.PermTeam, c.resendInvitation))
	mux.Handle("POST /cabinet/team/{id}/role", c.allow(organizer.PermTeam, c.changeRole))
	mux.Handle("GET /cabinet/team/{id}/remove", c.allow(organizer.PermTeam, c.removeConfirm))
	mux.Handle("POST /cabinet/team/{id}/remove", c.allow(organizer.PermTeam, c.removeMember))
	mux.Handle("POST /cabinet/team/{id}/two-factor/reset", c.allow(organizer.PermTeam, c.resetTwoFactor))
	mux.Handle("POST /cabinet/team/two-factor", c.allow(organizer.PermTeam, c.setTwoFactorPolicy))
	// Everyone's own account: the password, and leaving the team.
	mux.Handle("GET /cabinet/account", c.signedIn(c.account))
	mux.Handle("POST /cabinet/account/password", c.signedIn(c.changePassword))
	// Two-factor sign-in: enrolment (a QR code, then a code confirms),
	// and turning it off.
	mux.Handle("GET /cabinet/account/two-factor", c.signedIn(c.twoFactorPage))
	mux.Handle("POST /cabinet/account/two-factor", c.signedIn(c.confirmTwoFactor))
	mux.Handle("POST /cabinet/account/two-factor/disable", c.signedIn(c.disableTwoFactor))
	// A person in several companies' teams moves between them.
	mux.Handle("POST /cabinet/account/switch", c.signedIn(c.switchCompany))
	mux.Handle("GET /cabinet/account/leave", c.signedIn(c.leaveConfirm))
	mux.Handle("POST /cabinet/account/leave", c.signedIn(c.leave))
	mux.HandleFunc("/cabinet/", func(w http.ResponseWriter, r *http.Request) { c.notFound(w, r) })

	// Cross-origin protection refuses every unsafe request a browser sends
	// from another origin (Sec-Fetch-Site, else Origin against Host): a
	// form on another site cannot post to the cabinet with the user's
	// cookie. SameSite=Lax on the cookie is the second wall.
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.render(w, r, http.StatusForbidden, "error", pageData{Title: "Refused",
			Message: "This request came from another site and was refused. Open the cabinet and try again."})
	}))
	// Static files need no session: they skip the session store's query.
	outer := http.NewServeMux()
	outer.Handle("GET /cabinet/static/", staticFiles())
	outer.Handle("/cabinet/", limitBody(cop.Handler(sm.LoadAndSave(mux))))
	return securityHeaders(secureOverTLS(outer))
}

// secureOverTLS marks the cookies of a request that arrived over TLS
// Secure, whatever PublicBaseURL says.
func secureOverTLS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil {
			w = &secureCookies{ResponseWriter: w}
		}
		next.ServeHTTP(w, r)
	})
}

type secureCookies struct {
	http.ResponseWriter
	fixed bool
}

func (s *secureCookies) fix() {
	if s.fixed {
		return
	}
	s.fixed = true
	cookies := s.Header()["Set-Cookie"]
	for i, v := range cookies {
		if !strings.Contains(strings.ToLower(v), "; secure") {
			cookies[i] = v + "; Secure"
		}
	}
}

func (s *secureCookies) WriteHeader(code int) { s.fix(); s.ResponseWriter.WriteHeader(code) }

func (s *secureCookies) Write(b []byte) (int, error) { s.fix(); return s.ResponseWriter.Write(b) }

func (s *secureCookies) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// securityHeaders keeps the pages out of frames, shares no referrer (a
// sign-in link's token is in its path) and allows only this origin's
// scripts and styles.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "private, no-store")
		next.ServeHTTP(w, r)
	})
}

type userKey struct{}

// signedIn runs h for a signed-in user, with the user in the context;
// anyone else is sent to sign in, as is a session opened before the user's
// session version changed (a new password, a disabled user).
func (c *cabinet) signedIn(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := c.sessions.GetInt64(r.Context(), "user_id")
		if id == 0 {
			http.Redirect(w, r, signInURL(r), http.StatusSeeOther)
			return
		}
		u, err := c.Users.User(r.Context(), id)
		if err == nil && (u.DisabledAt != nil || c.sessions.GetInt(r.Context(), "session_version") != u.SessionVersion) {
			// The password was set again or the user disabled after this
			// session began: it ends.
			err = errs.NotFound
		}
		if errors.Is(err, errs.NotFound) {
			_ = c.sessions.Destroy(r.Context())
			http.Redirect(w, r, signInURL(r), http.StatusSeeOther)
			return
		}
		if err != nil {
			c.fail(w, r, err)
			return
		}
		if !c.enforceTwoFactor(w, r, u) {
			return
		}
		// The company's time zone, once per request: every time the
		// page prints that is not an event's is in it (zone.go).
		loc, err := report.Zone(r.Context(), c.DB, u.CompanyID)
		if err != nil {
			c.fail(w, r, err)
			return
		}
		// Whatever the user changes is theirs in the company's audit
		// log (the audit takes the actor from the context).
		ctx := organizer.AsUser(context.WithValue(context.WithValue(r.Context(), userKey{}, u), zoneKey{}, loc), u)
		h(w, r.WithContext(ctx))
	})
}

// allow runs h for a signed-in user whose role grants p; another user gets
// 403 and nothing changes.
func (c *cabinet) allow(p organizer.Perm, h http.HandlerFunc) http.Handler {
	return c.signedIn(func(w http.ResponseWriter, r *http.Request) {
		if !user(r).Can(p) {
			c.render(w, r, http.StatusForbidden, "error", pageData{Title: "Not allowed",
				Message: "Your role in the team does not allow this. The company's owner can change your role."})
			return
		}
		h(w, r)
	})
}

// landing is the first page the user's role may open.
func landing(u *organizer.User) string {
	for _, p := range []struct {
		perm organizer.Perm
		path string
	}{
		{organizer.PermReport, "/cabinet/report"},
		{organizer.PermOrders, "/cabinet/orders"},
		{organizer.PermCheckIn, "/cabinet/checkin"},
		{organizer.PermKeys, "/cabinet/keys"},
	} {
		if u.Can(p.perm) {
			return p.path
		}
	}
	return "/cabinet/account"
}

// user is the signed-in user of a request under signedIn.
func user(r *http.Request) *organizer.User {
	return r.Context().Value(userKey{}).(*organizer.User)
}

func (c *cabinet) home(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, landing(user(r)), http.StatusSeeOther)
}

// signInURL is the sign-in page for a request that needs a signed-in
// user: a GET remembers the page asked for (?next), which the sign-in
// opens afterwards; anything else signs in to the landing page.
func signInURL(r *http.Request) string {
	if r.Method != http.MethodGet {
		return "/cabinet/signin"
	}
	next := r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		next += "?" + r.URL.RawQuery
	}
	if safeNext(next) == "" {
		return "/cabinet/signin"
	}
	return "/cabinet/signin?" + url.Values{"next": {next}}.Encode()
}

// safeNext is next if it is a page of this cabinet to open after signing
// in, else "": only a relative path under /cabinet/ of this site, never
// another site ("//evil", "https://evil", "/\\evil"), the sign-in pages
// or a link's token.
func safeNext(next string) string {
	if next == "" || len(next) > 2000 || strings.ContainsAny(next, "\\\x00\r\n\t") {
		return ""
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" || u.Fragment != "" {
		return ""
	}
	p := u.Path
	if !strings.HasPrefix(next, "/cabinet/") || !strings.HasPrefix(path.Clean(p)+"/", "/cabinet/") {
		return ""
	}
	for _, no := range []string{"/cabinet/signin", "/cabinet/signout", "/cabinet/link/", "/cabinet/static/"} {
		if strings.HasPrefix(p, no) {
			return ""
		}
	}
	return next
}

func (c *cabinet) signInPage(w http.ResponseWriter, r *http.Request) {
	data := pageData{Title: "Sign in", Next: safeNext(r.URL.Query().Get("next"))}
	if r.URL.Query().Get("left") == "1" {
		// A fixed text: the query puts none of its own on the page.
		data.Notice = "You left the team and are signed out."
	}
	c.render(w, r, http.StatusOK, "signin", data)
}

func (c *cabinet) signIn(w http.ResponseWriter, r *http.Request) {
	email, password := r.PostFormValue("email"), r.PostFormValue("password")
	next := safeNext(r.PostFormValue("next"))
	u, wait, err := c.Users.SignIn(r.Context(), c.clientAddr(r), email, password)
	switch {
	case errors.Is(err, organizer.ErrTooManyTries):
		w.Header().Set("Retry-After", retryAfter(wait))
		c.render(w, r, http.StatusTooManyRequests, "signin", pageData{Title: "Sign in", Email: email, Next: next,
			Message: "Too many sign-in attempts. Wait a few minutes and try again."})
		return
	case errors.Is(err, organizer.ErrBusy):
		// Every slot of the password check is taken: the server is busy,
		// not the client wrong (503, not 429), and nothing was counted.
		w.Header().Set("Retry-After", retryAfter(wait))
		c.render(w, r, http.StatusServiceUnavailable, "signin", pageData{Title: "Sign in", Email: email, Next: next,
			Message: "Too many people are signing in right now. Try again in a few seconds."})
		return
	case errors.Is(err, organizer.ErrBadCredentials):
		c.render(w, r, http.StatusUnauthorized, "signin", pageData{Title: "Sign in", Email: email, Next: next,
			Message: "Wrong e-mail or password."})
		return
	case err != nil:
		c.fail(w, r, err)
		return
	}
	if u.SecondFactor {
		c.secondStep(w, r, u, next)
		return
	}
	c.startSession(w, r, u, next)
}

// startSession signs the user in with a new session token (never the one
// the browser had before: no session fixation) and opens next (a page
// safeNext let through), or the user's landing page.
func (c *cabinet) startSession(w http.ResponseWriter, r *http.Request, u *organizer.User, next string) {
	if err := c.sessions.RenewToken(r.Context()); err != nil {
		c.fail(w, r, err)
		return
	}
	// Nothing of an earlier sign-in carries into this one: not a notice,
	// not a webhook secret waiting to be shown, not a form's token.
	for _, k := range []string{flashKey, webhookSecretReveal("").session, secretEndpointKey, formTokenKey} {
		c.sessions.Remove(r.Context(), k)
	}
	c.clearPending(r)
	c.sessions.Put(r.Context(), "user_id", u.ID)
	c.sessions.Put(r.Context(), "session_version", u.SessionVersion)
	c.Log.InfoContext(r.Context(), "cabinet sign-in", "user_id", u.ID, "company_id", u.CompanyID, "role", u.Role)
	if next == "" {
		next = landing(u)
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (c *cabinet) signOut(w http.ResponseWriter, r *http.Request) {
	if err := c.sessions.Destroy(r.Context()); err != nil {
		c.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/cabinet/signin", http.StatusSeeOther)
}

// linkFailed answers a sign-in link that cannot be used.
func (c *cabinet) linkFailed(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, organizer.ErrLinkInvalid) {
		c.render(w, r, http.StatusNotFound, "error", pageData{Title: "Link not valid",
			Message: "This sign-in link is unknown, used or expired. Ask for a new one."})
		return
	}
	c.fail(w, r, err)
}

func (c *cabinet) linkPage(w http.ResponseWriter, r *http.Request) {
	l, err := c.Users.Link(r.Context(), r.PathValue("token"))
	if err != nil {
		c.linkFailed(w, r, err)
		return
	}
	c.render(w, r, http.StatusOK, "link", c.linkData(r, l))
}

// linkView tells an invited user whose team the link joins, as what, and
// whether the link asks for the password the address has.
type linkView struct {
	Invited          bool
	Company          string
	Role             organizer.Role
	ExistingPassword bool
	// Resets: a reset link of an invitation, which replaces the password.
	Resets bool
	// CanMail: a forgotten password's reset link can be e-mailed.
	CanMail bool
}

// linkData is the link page's data for the link.
func (c *cabinet) linkData(r *http.Request, l *organizer.Link) pageData {
	u := l.User
	v := linkView{ExistingPassword: l.ExistingPassword, Resets: l.Resets, CanMail: c.Mail != nil}
	data := pageData{Title: "Set your password", Email: u.Email, MinPassword: organizer.MinPasswordLength}
	if l.ExistingPassword {
		data.Title = "Accept the invitation"
	}
	if !u.Joined {
		company, err := c.Users.CompanyName(r.Context(), u.CompanyID)
		if err == nil {
			v.Invited, v.Company, v.Role = true, company, u.Role
		}
	}
	data.Data = v
	return data
}

func (c *cabinet) useLink(w http.ResponseWriter, r *http.Request) {
	token := r.PathValue("token")
	pw, again := r.PostFormValue("password"), r.PostFormValue("password_again")
	// The form that chose a new password (it asks for it twice), whatever
	// the link asks for now.
	_, choosing := r.PostForm["password_again"]
	l, err := c.Users.Link(r.Context(), token)
	if err != nil {
		c.linkFailed(w, r, err)
		return
	}
	data := c.linkData(r, l)
	if r.PostFormValue("forgot") != "" && l.ExistingPassword {
		c.forgotPassword(w, r, token, data)
		return
	}
	if !l.ExistingPassword && pw != again {
		data.Message = "The two passwords differ."
		c.render(w, r, http.StatusUnprocessableEntity, "link", data)
		return
	}
	// The service decides again which kind of link this is, in the
	// transaction that uses it: the page only asks. A new password is
	// never checked as the existing one (ChoosePassword).
	use := c.Users.UseLink
	if choosing {
		use = c.Users.ChoosePassword
	}
	u, wait, err := use(r.Context(), c.clientAddr(r), token, pw)
	var pe *organizer.PasswordError
	switch {
	case errors.As(err, &pe):
		data.Message = "The " + pe.Error() + "."
		c.render(w, r, http.StatusUnprocessableEntity, "link", data)
		return
	case errors.Is(err, organizer.ErrBadCredentials):
		// Counted as a failed sign-in; the link stays unused.
		data.Message = "Wrong password. Enter the password you sign in to the cabinet with."
		c.render(w, r, http.StatusUnauthorized, "link", data)
		return
	case errors.Is(err, organizer.ErrTooManyTries):
		w.Header().Set("Retry-After", retryAfter(wait))
		data.Message = "Too many sign-in attempts. Wait a few minutes and try again."
		c.render(w, r, http.StatusTooManyRequests, "link", data)
		return
	case errors.Is(err, organizer.ErrExistingPassword):
		// A password was set since the page was shown (another
		// invitation accepted): the page asks for it now; the new one
		// typed was neither checked nor counted.
		if l, err = c.Users.Link(r.Context(), token); err != nil {
			c.linkFailed(w, r, err)
			return
		}
		data = c.linkData(r, l)
		data.Message = "This address has a password now: enter it to accept. Nothing was changed."
		c.render(w, r, http.StatusConflict, "link", data)
		return
	case errors.Is(err, organizer.ErrBusy):
		// The link is not spent: the same page can be sent again.
		w.Header().Set("Retry-After", retryAfter(organizer.BusyRetry))
		data.Message = "Too many people are signing in right now. Try again in a few seconds."
		c.render(w, r, http.StatusServiceUnavailable, "link", data)
		return
	case errors.Is(err, organizer.ErrLinkInvalid):
		c.render(w, r, http.StatusNotFound, "error", pageData{Title: "Link not valid",
			Message: "This sign-in link is unknown, used or expired. Ask for a new one."})
		return
	case err != nil:
		c.fail(w, r, err)
		return
	}
	if u.SecondFactor {
		// The link was the first factor (spent now); the person's
		// authenticator is the second.
		c.secondStep(w, r, u, "")
		return
	}
	c.startSession(w, r, u, "")
}

// forgotPassword e-mails the address of an invitation that asks for the
// password it has a link that sets a new one (organizer.ForgotPassword):
// the mailbox's owner gets it, never whoever holds the invitation's link,
// whose link stops working. It checks no password and spends no budget.
func (c *cabinet) forgotPassword(w http.ResponseWriter, r *http.Request, token string, data pageData) {
	if c.Mail == nil {
		data.Message = "This cabinet cannot send e-mail. Ask the administrator for a link that sets a new password."
		c.render(w, r, http.StatusServiceUnavailable, "link", data)
		return
	}
	reset, err := c.Users.ForgotPassword(r.Context(), token)
	if err != nil {
		c.linkFailed(w, r, err)
		return
	}
	company, err := c.Users.CompanyName(r.Context(), reset.User.CompanyID)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	// No one is signed in here: the company's zone is read for the mail.
	loc, err := report.Zone(r.Context(), c.DB, reset.User.CompanyID)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	msg := organizer.ResetMail(reset.User.Email, company, strings.TrimSuffix(c.PublicBaseURL, "/")+reset.Path, reset.ExpiresAt.In(loc),
		fmt.Sprintf("reset-%d-%d@ticketsales", reset.User.ID, reset.ExpiresAt.UnixNano()))
	if err := c.Mail.Send(r.Context(), msg); err != nil {
		c.Log.WarnContext(r.Context(), "cabinet reset link not sent", "user_id", reset.User.ID, "err", err)
		c.render(w, r, http.StatusBadGateway, "error", pageData{Title: "Not sent",
			Message: "The e-mail could not be sent, and this link no longer works. Ask whoever invited you to send the invitation again."})
		return
	}
	c.Log.InfoContext(r.Context(), "cabinet reset link sent", "user_id", reset.User.ID, "company_id", reset.User.CompanyID)
	c.render(w, r, http.StatusOK, "error", pageData{Title: "Check your e-mail",
		Notice: "A link to set a new password and accept the invitation is sent to " + reset.User.Email +
			". It works once, for 72 hours; this page's link no longer works."})
}

// clientAddr is the client sign-in limits count under: the TCP peer's
// address, or the last address of ClientIPHeader (the one the trusted
// proxy saw); an IPv6 address's /64.
func (c *cabinet) clientAddr(r *http.Request) string {
	var trusted string
	if c.ClientIPHeader != "" {
		trusted = r.Header.Get(c.ClientIPHeader)
	}
	return ratelimit.Client(trusted, r.RemoteAddr)
}

func (c *cabinet) notFound(w http.ResponseWriter, r *http.Request) {
	c.render(w, r, http.StatusNotFound, "error", pageData{Title: "Not found", Message: "There is no such page in your cabinet."})
}

// fail logs an unexpected error and shows a page without its details.
func (c *cabinet) fail(w http.ResponseWriter, r *http.Request, err error) {
	c.Log.ErrorContext(r.Context(), "cabinet", "path", organizer.LogPath(r.URL.Path), "err", err)
	c.render(w, r, http.StatusInternalServerError, "error", pageData{Title: "Error",
		Message: "Something went wrong on our side; try again in a moment."})
}

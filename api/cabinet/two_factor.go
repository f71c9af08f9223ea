package cabinet

// Two-factor sign-in (docs/cabinet.md, "Two-factor sign-in"): the code
// asked for after the password or a sign-in link, enrolment on the
// account page, and the company's policy, enforced on every page.

import (
	"encoding/base64"
	"errors"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/ticketsales/ticketsales/internal/delivery"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/organizer"
)

// The session's keys of a sign-in waiting for its second factor: the
// membership, its session version, the page to open, and since when.
const (
	pendingUserKey    = "tfa_user_id"
	pendingVersionKey = "tfa_version"
	pendingNextKey    = "tfa_next"
	pendingAtKey      = "tfa_at"
)

// pendingLifetime is how long after the first factor the code is asked
// for; later, the sign-in starts again.
const pendingLifetime = 5 * time.Minute

// twoFactorPath is the enrolment page, where the company's policy sends
// an owner or finance member without an authenticator.
const twoFactorPath = "/cabinet/account/two-factor"

// secondStep holds a sign-in whose first factor passed until its code:
// a new session token (as a sign-in's), nobody signed in yet.
func (c *cabinet) secondStep(w http.ResponseWriter, r *http.Request, u *organizer.User, next string) {
	if err := c.sessions.RenewToken(r.Context()); err != nil {
		c.fail(w, r, err)
		return
	}
	for _, k := range []string{"user_id", "session_version", flashKey, webhookSecretReveal("").session, secretEndpointKey, formTokenKey} {
		c.sessions.Remove(r.Context(), k)
	}
	c.sessions.Put(r.Context(), pendingUserKey, u.ID)
	c.sessions.Put(r.Context(), pendingVersionKey, u.SessionVersion)
	c.sessions.Put(r.Context(), pendingNextKey, next)
	c.sessions.Put(r.Context(), pendingAtKey, c.Now().Unix())
	http.Redirect(w, r, "/cabinet/signin/code", http.StatusSeeOther)
}

// pending is the membership waiting for its code, or 0 (none, or too
// old: forgotten).
func (c *cabinet) pending(r *http.Request) (id int64, version int, next string) {
	ctx := r.Context()
	id = c.sessions.GetInt64(ctx, pendingUserKey)
	if id == 0 {
		return 0, 0, ""
	}
	if at := time.Unix(c.sessions.GetInt64(ctx, pendingAtKey), 0); c.Now().Sub(at) > pendingLifetime {
		c.clearPending(r)
		return 0, 0, ""
	}
	return id, c.sessions.GetInt(ctx, pendingVersionKey), safeNext(c.sessions.GetString(ctx, pendingNextKey))
}

func (c *cabinet) clearPending(r *http.Request) {
	for _, k := range []string{pendingUserKey, pendingVersionKey, pendingNextKey, pendingAtKey} {
		c.sessions.Remove(r.Context(), k)
	}
}

func (c *cabinet) codePage(w http.ResponseWriter, r *http.Request) {
	if id, _, _ := c.pending(r); id == 0 {
		http.Redirect(w, r, "/cabinet/signin", http.StatusSeeOther)
		return
	}
	c.render(w, r, http.StatusOK, "signin_code", pageData{Title: "Two-factor sign-in"})
}

// signInCode checks the code of a sign-in waiting for it (tries limited
// as passwords are; a code used once is refused) and begins the session.
func (c *cabinet) signInCode(w http.ResponseWriter, r *http.Request) {
	id, version, next := c.pending(r)
	if id == 0 {
		c.render(w, r, http.StatusUnauthorized, "signin", pageData{Title: "Sign in",
			Message: "The sign-in waited too long for its code. Sign in again."})
		return
	}
	code := r.PostFormValue("code")
	u, wait, err := c.Users.SecondFactor(r.Context(), c.clientAddr(r), id, version, code)
	switch {
	case errors.Is(err, organizer.ErrBadCode):
		c.render(w, r, http.StatusUnauthorized, "signin_code", pageData{Title: "Two-factor sign-in",
			Message: "Wrong code, or one used already. Enter the code your authenticator app shows now, or an unused recovery code."})
		return
	case errors.Is(err, organizer.ErrTooManyTries):
		w.Header().Set("Retry-After", retryAfter(wait))
		c.render(w, r, http.StatusTooManyRequests, "signin_code", pageData{Title: "Two-factor sign-in",
			Message: "Too many wrong codes. Wait a few minutes and try again."})
		return
	case errors.Is(err, organizer.ErrSessionEnded), errors.Is(err, errs.NotFound):
		// Removed, a new password, or the authenticator reset meanwhile.
		c.clearPending(r)
		c.render(w, r, http.StatusUnauthorized, "signin", pageData{Title: "Sign in", Message: "Sign in again."})
		return
	case err != nil:
		c.fail(w, r, err)
		return
	}
	c.clearPending(r)
	c.startSession(w, r, u, next)
}

// enforceTwoFactor sends an owner or finance member of a company that
// requires a second factor, who has none, to enrolment before any other
// page; true: the request may go on.
func (c *cabinet) enforceTwoFactor(w http.ResponseWriter, r *http.Request, u *organizer.User) bool {
	if !organizer.RoleNeedsTwoFactor(u.Role) || strings.HasPrefix(r.URL.Path, twoFactorPath) {
		return true
	}
	enrolled, required, err := c.Users.TwoFactorState(r.Context(), u)
	if err != nil {
		c.fail(w, r, err)
		return false
	}
	if required && !enrolled {
		http.Redirect(w, r, twoFactorPath, http.StatusSeeOther)
		return false
	}
	return true
}

// twoFactorView is the enrolment page's and the account section's data.
type twoFactorView struct {
	Enrolled, Required bool
	// Enrolment: the QR code (a PNG's data URL), the secret for manual
	// entry, in groups of four.
	QR     template.URL
	Secret string
	// Codes: the recovery codes, shown once after confirming.
	Codes []string
}

// twoFactorPage shows enrolment: a new authenticator secret (kept
// unconfirmed until a code confirms it) as a QR code and as text.
func (c *cabinet) twoFactorPage(w http.ResponseWriter, r *http.Request) {
	c.enrolPage(w, r, http.StatusOK, "")
}

func (c *cabinet) enrolPage(w http.ResponseWriter, r *http.Request, status int, message string) {
	u := user(r)
	enrolled, required, err := c.Users.TwoFactorState(r.Context(), u)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	if enrolled {
		c.done(w, r, "/cabinet/account", "Two-factor sign-in is on already.")
		return
	}
	e, err := c.Users.PendingTwoFactor(r.Context(), u)
	if errors.Is(err, errs.NotFound) {
		e, err = c.Users.BeginTwoFactor(r.Context(), u)
	}
	if errors.Is(err, organizer.ErrTwoFactorUnavailable) {
		c.render(w, r, http.StatusServiceUnavailable, "error", pageData{Title: "Two-factor sign-in", Nav: "account",
			Message: "This cabinet cannot keep authenticators safely: the administrator has not configured the order token secret."})
		return
	}
	if err != nil {
		c.fail(w, r, err)
		return
	}
	png, err := delivery.QRPNG(e.URL)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	var groups []string
	for s := e.Secret; len(s) > 0; {
		n := min(4, len(s))
		groups, s = append(groups, s[:n]), s[n:]
	}
	v := twoFactorView{Required: required, QR: template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(png)),
		Secret: strings.Join(groups, " ")}
	c.render(w, r, status, "two_factor", pageData{Title: "Set up two-factor sign-in", Nav: "account", Message: message, Data: v})
}

// confirmTwoFactor turns the authenticator on with the current password
// and a code it shows, and shows the recovery codes, once. The person's
// other sessions end; this one takes the new session version and a new
// token.
func (c *cabinet) confirmTwoFactor(w http.ResponseWriter, r *http.Request) {
	codes, u, wait, err := c.Users.ConfirmTwoFactor(r.Context(), c.clientAddr(r), user(r),
		r.PostFormValue("current_password"), r.PostFormValue("code"))
	switch {
	case errors.Is(err, organizer.ErrBadCredentials):
		c.enrolPage(w, r, http.StatusUnprocessableEntity, "The password is wrong: enter your current password and the code.")
		return
	case errors.Is(err, organizer.ErrBusy):
		w.Header().Set("Retry-After", retryAfter(organizer.BusyRetry))
		c.enrolPage(w, r, http.StatusServiceUnavailable, "Too many people are signing in right now. Try again in a few seconds.")
		return
	case errors.Is(err, organizer.ErrSessionEnded):
		_ = c.sessions.Destroy(r.Context())
		http.Redirect(w, r, "/cabinet/signin", http.StatusSeeOther)
		return
	case errors.Is(err, organizer.ErrBadCode):
		c.enrolPage(w, r, http.StatusUnprocessableEntity, "That is not the code the app shows now. Check the phone's clock, and enter the six digits shown.")
		return
	case errors.Is(err, organizer.ErrTooManyTries):
		w.Header().Set("Retry-After", retryAfter(wait))
		c.enrolPage(w, r, http.StatusTooManyRequests, "Too many wrong tries. Wait a few minutes and try again.")
		return
	case errors.Is(err, errs.NotFound), errors.Is(err, organizer.ErrTwoFactorOn):
		c.done(w, r, "/cabinet/account", "Two-factor sign-in is on already.")
		return
	case err != nil:
		c.fail(w, r, err)
		return
	}
	if !c.keepSession(w, r, u) {
		return
	}
	c.Log.InfoContext(r.Context(), "cabinet two-factor on", "user_id", user(r).ID, "company_id", user(r).CompanyID)
	c.render(w, r, http.StatusOK, "two_factor_codes", pageData{Title: "Two-factor sign-in is on", Nav: "account",
		Data: twoFactorView{Enrolled: true, Codes: codes}})
}

// disableTwoFactor turns the authenticator off after one of its codes
// (or a recovery code); where a company requires it of the role, not. The
// person's other sessions end; this one stays.
func (c *cabinet) disableTwoFactor(w http.ResponseWriter, r *http.Request) {
	u, wait, err := c.Users.DisableTwoFactor(r.Context(), c.clientAddr(r), user(r), r.PostFormValue("code"))
	switch {
	case errors.Is(err, organizer.ErrSessionEnded):
		_ = c.sessions.Destroy(r.Context())
		http.Redirect(w, r, "/cabinet/signin", http.StatusSeeOther)
		return
	case errors.Is(err, organizer.ErrTwoFactorRequired):
		c.accountPage(w, r, http.StatusConflict, "A company you are in requires two-factor sign-in of your role there: it cannot be turned off.")
		return
	case errors.Is(err, organizer.ErrBadCode):
		c.accountPage(w, r, http.StatusUnprocessableEntity, "Wrong code, or one used already: two-factor sign-in stays on.")
		return
	case errors.Is(err, organizer.ErrTooManyTries):
		w.Header().Set("Retry-After", retryAfter(wait))
		c.accountPage(w, r, http.StatusTooManyRequests, "Too many wrong codes. Wait a few minutes and try again.")
		return
	case errors.Is(err, errs.NotFound):
		c.done(w, r, "/cabinet/account", "Two-factor sign-in is off.")
		return
	case err != nil:
		c.fail(w, r, err)
		return
	}
	if !c.keepSession(w, r, u) {
		return
	}
	c.done(w, r, "/cabinet/account", "Two-factor sign-in is off. Your other sessions are signed out; this one stays.")
}

// keepSession keeps this session signed in after a change that ended the
// person's others: a new token, the new session version.
func (c *cabinet) keepSession(w http.ResponseWriter, r *http.Request, u *organizer.User) bool {
	if err := c.sessions.RenewToken(r.Context()); err != nil {
		c.fail(w, r, err)
		return false
	}
	c.sessions.Put(r.Context(), "session_version", u.SessionVersion)
	return true
}

// resetTwoFactor is an owner's reset of a member's authenticator.
func (c *cabinet) resetTwoFactor(w http.ResponseWriter, r *http.Request) {
	id, ok := c.memberID(w, r)
	if !ok {
		return
	}
	var u *organizer.User
	err := organizer.ErrResetSelf
	if id != user(r).ID {
		u, err = c.Users.ResetTwoFactor(r.Context(), user(r).CompanyID, id)
	}
	switch {
	case errors.Is(err, organizer.ErrResetSelf):
		c.teamPage(w, r, http.StatusConflict, "Your own two-factor sign-in is not reset here: turn it off on your account page, with a code.", inviteForm{})
		return
	case errors.Is(err, organizer.ErrOtherTeams):
		c.teamPage(w, r, http.StatusConflict, "This person is in other organizers' teams too, and the authenticator guards those as well: "+
			"ask the service's administrator to reset it.", inviteForm{})
		return
	case err != nil:
		c.teamFailed(w, r, err)
		return
	}
	c.logTeam(r, "reset_two_factor", u)
	c.done(w, r, "/cabinet/team", u.Email+"'s two-factor sign-in is reset and they are signed out; they sign in with the password and set it up again.")
}

// setTwoFactorPolicy sets whether owner and finance must sign in with a
// second factor.
func (c *cabinet) setTwoFactorPolicy(w http.ResponseWriter, r *http.Request) {
	required := r.PostFormValue("required") == "on"
	if err := c.Users.SetTwoFactorRequired(r.Context(), user(r).CompanyID, required); err != nil {
		c.fail(w, r, err)
		return
	}
	if required {
		c.done(w, r, "/cabinet/team", "Owners and finance now sign in with a second factor; those without one set it up on their next page.")
		return
	}
	c.done(w, r, "/cabinet/team", "Two-factor sign-in is no longer required; those who have it keep it.")
}

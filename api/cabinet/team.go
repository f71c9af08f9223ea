package cabinet

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/organizer"
)

// teamView is the team page's own data.
type teamView struct {
	Members []organizer.Member
	Roles   []roleInfo
	Self    int64
	Form    inviteForm
	// TwoFactorRequired: the company's policy (owner and finance sign in
	// with a second factor).
	TwoFactorRequired bool
}

type inviteForm struct {
	Email string
	Role  organizer.Role
}

// roleInfo is a role with what it may do, for the invitation's choice and
// the role table.
type roleInfo struct {
	Role    organizer.Role
	Summary string
}

func roleInfos() []roleInfo {
	out := make([]roleInfo, len(organizer.Roles))
	for i, r := range organizer.Roles {
		out[i] = roleInfo{Role: r, Summary: organizer.RoleSummary(r)}
	}
	return out
}

// accountView is the account page's own data.
type accountView struct {
	Company string
	Summary string
	// Others are the person's other companies, to switch to.
	Others []organizer.Membership
	// TwoFactor: whether the person has an authenticator, and whether
	// the company requires one of the role.
	TwoFactor twoFactorView
}

// confirmView asks to confirm a destructive action: a POST to Action.
type confirmView struct {
	Question, Detail string
	Action, Button   string
	ButtonID, Cancel string
}

// teamPage renders the team page with status and, for a refused action, its
// message; form keeps what the owner typed.
func (c *cabinet) teamPage(w http.ResponseWriter, r *http.Request, status int, message string, form inviteForm) {
	u := user(r)
	members, err := c.Users.Team(r.Context(), u.CompanyID)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	if form.Role == "" {
		form.Role = organizer.RoleSupport
	}
	required, err := c.Users.TwoFactorRequired(r.Context(), u.CompanyID)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.render(w, r, status, "team", pageData{Title: "Team", Nav: "team", Message: message,
		Data: teamView{Members: members, Roles: roleInfos(), Self: u.ID, Form: form, TwoFactorRequired: required}})
}

func (c *cabinet) team(w http.ResponseWriter, r *http.Request) {
	c.teamPage(w, r, http.StatusOK, "", inviteForm{})
}

// logTeam records who changed the team (user ids, never an e-mail or a
// link).
func (c *cabinet) logTeam(r *http.Request, action string, target *organizer.User, args ...any) {
	by := user(r)
	c.Log.InfoContext(r.Context(), "cabinet team", append([]any{"action", action, "by_user_id", by.ID,
		"company_id", by.CompanyID, "user_id", target.ID}, args...)...)
}

// invite adds a person to the team with a role and e-mails them the link
// to accept. Nothing changes when the e-mail cannot be sent at all (no
// mailer); when sending fails after the invitation is stored, the page
// says so and Resend sends a new link.
func (c *cabinet) invite(w http.ResponseWriter, r *http.Request) {
	form := inviteForm{Email: strings.TrimSpace(r.PostFormValue("email")), Role: organizer.Role(r.PostFormValue("role"))}
	if c.Mail == nil {
		c.teamPage(w, r, http.StatusServiceUnavailable, "This cabinet cannot send e-mail, so it cannot invite anyone. Ask the administrator to configure mail.", form)
		return
	}
	if len(form.Email) > 254 {
		c.teamPage(w, r, http.StatusUnprocessableEntity, "That is not an e-mail address.", form)
		return
	}
	inv, err := c.Users.Invite(r.Context(), user(r), form.Email, form.Role)
	var ve *errs.ValidationError
	switch {
	case errors.As(err, &ve) && ve.Fields[0].Location == "role":
		c.teamPage(w, r, http.StatusUnprocessableEntity, "Choose one of the roles.", form)
		return
	case errors.As(err, &ve):
		c.teamPage(w, r, http.StatusUnprocessableEntity, "That is not an e-mail address.", form)
		return
	case errors.Is(err, organizer.ErrAlreadyMember):
		c.teamPage(w, r, http.StatusConflict, "This e-mail is already in your team. To send an invitation again, use Resend in the list.", form)
		return
	case err != nil:
		c.fail(w, r, err)
		return
	}
	c.logTeam(r, "invite", inv.User, "role", inv.User.Role)
	if err := c.sendInvitation(r, inv); err != nil {
		c.teamPage(w, r, http.StatusBadGateway, "The invitation is saved, but its e-mail could not be sent. Try Resend in a moment.", inviteForm{})
		return
	}
	c.done(w, r, "/cabinet/team", "Invitation sent to "+inv.User.Email+" as "+string(inv.User.Role)+". The link works for 72 hours.")
}

// sendInvitation e-mails the invitation's link; the link's token is in
// the e-mail only, never in a log line.
func (c *cabinet) sendInvitation(r *http.Request, inv *organizer.Invitation) error {
	by := user(r)
	company, err := c.Users.CompanyName(r.Context(), by.CompanyID)
	if err != nil {
		return err
	}
	base := strings.TrimSuffix(c.PublicBaseURL, "/")
	msg := organizer.InvitationMail(inv.User.Email, by.Email, company, inv.User.Role, base+inv.Path, inv.ExpiresAt.In(companyZone(r)),
		fmt.Sprintf("invitation-%d-%d@ticketsales", inv.User.ID, inv.ExpiresAt.UnixNano()))
	if err := c.Mail.Send(r.Context(), msg); err != nil {
		c.Log.WarnContext(r.Context(), "cabinet invitation not sent", "user_id", inv.User.ID, "err", err)
		return err
	}
	return nil
}

// memberID reads the {id} of a team route; anything but a number is 404.
func (c *cabinet) memberID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		c.notFound(w, r)
		return 0, false
	}
	return id, true
}

// teamFailed answers a refused team change: another company's user is
// 404 as an unknown one.
func (c *cabinet) teamFailed(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, errs.NotFound):
		c.notFound(w, r)
	case errors.Is(err, organizer.ErrLastOwner):
		c.teamPage(w, r, http.StatusConflict, "The company must keep at least one active owner: make someone else an owner first.", inviteForm{})
	case errors.Is(err, organizer.ErrRemoved):
		c.teamPage(w, r, http.StatusConflict, "That person is no longer in the team. Invite them again to give them a role.", inviteForm{})
	case errors.Is(err, organizer.ErrNotInvited):
		c.teamPage(w, r, http.StatusConflict, "That person has already accepted the invitation, or was removed: there is no invitation to send again.", inviteForm{})
	default:
		c.fail(w, r, err)
	}
}

func (c *cabinet) resendInvitation(w http.ResponseWriter, r *http.Request) {
	id, ok := c.memberID(w, r)
	if !ok {
		return
	}
	if c.Mail == nil {
		c.teamPage(w, r, http.StatusServiceUnavailable, "This cabinet cannot send e-mail. Ask the administrator to configure mail.", inviteForm{})
		return
	}
	inv, err := c.Users.Reinvite(r.Context(), user(r).CompanyID, id)
	if err != nil {
		c.teamFailed(w, r, err)
		return
	}
	c.logTeam(r, "reinvite", inv.User)
	if err := c.sendInvitation(r, inv); err != nil {
		c.teamPage(w, r, http.StatusBadGateway, "A new link is made, but its e-mail could not be sent. Try Resend in a moment.", inviteForm{})
		return
	}
	c.done(w, r, "/cabinet/team", "A new invitation is sent to "+inv.User.Email+"; the earlier link no longer works.")
}

func (c *cabinet) changeRole(w http.ResponseWriter, r *http.Request) {
	id, ok := c.memberID(w, r)
	if !ok {
		return
	}
	role := organizer.Role(r.PostFormValue("role"))
	if !role.Valid() {
		c.teamPage(w, r, http.StatusUnprocessableEntity, "Choose one of the roles.", inviteForm{})
		return
	}
	u, err := c.Users.ChangeRole(r.Context(), user(r).CompanyID, id, role)
	if err != nil {
		c.teamFailed(w, r, err)
		return
	}
	c.logTeam(r, "change_role", u, "role", u.Role)
	if u.ID == user(r).ID && !u.Can(organizer.PermTeam) {
		// No longer an owner: the team page is no longer theirs.
		c.done(w, r, "/cabinet/account", "Your role is now "+string(u.Role)+".")
		return
	}
	c.done(w, r, "/cabinet/team", u.Email+" is now "+string(u.Role)+"; it counts from their next page.")
}

// removeConfirm asks before removing a member.
func (c *cabinet) removeConfirm(w http.ResponseWriter, r *http.Request) {
	id, ok := c.memberID(w, r)
	if !ok {
		return
	}
	if id == user(r).ID {
		http.Redirect(w, r, "/cabinet/account/leave", http.StatusSeeOther)
		return
	}
	members, err := c.Users.Team(r.Context(), user(r).CompanyID)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	for _, m := range members {
		if m.ID == id && m.Status != organizer.StatusDisabled {
			c.render(w, r, http.StatusOK, "team_confirm", pageData{Title: "Remove a member", Nav: "team", Data: confirmView{
				Question: "Remove " + m.Email + " (" + string(m.Role) + ") from the team?",
				Detail:   "They are signed out at once and can no longer sign in; an invitation link they have stops working. You can invite them again later.",
				Action:   fmt.Sprintf("/cabinet/team/%d/remove", id), Button: "Remove from the team", ButtonID: "confirm-remove", Cancel: "/cabinet/team"}})
			return
		}
	}
	c.notFound(w, r)
}

func (c *cabinet) removeMember(w http.ResponseWriter, r *http.Request) {
	id, ok := c.memberID(w, r)
	if !ok {
		return
	}
	if id == user(r).ID {
		c.leave(w, r)
		return
	}
	u, err := c.Users.Remove(r.Context(), user(r).CompanyID, id)
	if err != nil {
		c.teamFailed(w, r, err)
		return
	}
	c.logTeam(r, "remove", u)
	c.done(w, r, "/cabinet/team", u.Email+" is removed from the team and signed out.")
}

// accountPage shows the signed-in user's account with status and message.
func (c *cabinet) accountPage(w http.ResponseWriter, r *http.Request, status int, message string) {
	u := user(r)
	company, err := c.Users.CompanyName(r.Context(), u.CompanyID)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	ms, err := c.Users.Memberships(r.Context(), u)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	var others []organizer.Membership
	for _, m := range ms {
		if m.UserID != u.ID {
			others = append(others, m)
		}
	}
	enrolled, required, err := c.Users.TwoFactorState(r.Context(), u)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.render(w, r, status, "account", pageData{Title: "Account", Nav: "account", Message: message, MinPassword: organizer.MinPasswordLength,
		Data: accountView{Company: company, Summary: organizer.RoleSummary(u.Role), Others: others,
			TwoFactor: twoFactorView{Enrolled: enrolled, Required: required}}})
}

// switchCompany signs the person in as their membership of another
// company, with a new session token: the session proved the person, the
// membership must be theirs, joined and not removed (else 404).
func (c *cabinet) switchCompany(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PostFormValue("user_id"), 10, 64)
	if err != nil || id <= 0 {
		c.notFound(w, r)
		return
	}
	from := user(r)
	u, err := c.Users.Switch(r.Context(), c.clientAddr(r), from, id)
	if errors.Is(err, errs.NotFound) {
		c.notFound(w, r)
		return
	}
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.Log.InfoContext(r.Context(), "cabinet switch", "from_user_id", from.ID, "user_id", u.ID, "company_id", u.CompanyID)
	c.startSession(w, r, u, "")
}

func (c *cabinet) account(w http.ResponseWriter, r *http.Request) {
	c.accountPage(w, r, http.StatusOK, "")
}

// changePassword checks the current password as a sign-in does (its
// budgets too) and sets the new one: every other session of the user
// ends, this one takes the new session version and a new token.
func (c *cabinet) changePassword(w http.ResponseWriter, r *http.Request) {
	current, next, again := r.PostFormValue("current_password"), r.PostFormValue("password"), r.PostFormValue("password_again")
	if next != again {
		c.accountPage(w, r, http.StatusUnprocessableEntity, "The two new passwords differ.")
		return
	}
	u, wait, err := c.Users.ChangePassword(r.Context(), c.clientAddr(r), user(r), current, next)
	var pe *organizer.PasswordError
	switch {
	case errors.As(err, &pe):
		c.accountPage(w, r, http.StatusUnprocessableEntity, "The new "+pe.Error()+".")
		return
	case errors.Is(err, organizer.ErrBadCredentials):
		c.accountPage(w, r, http.StatusUnprocessableEntity, "The current password is wrong.")
		return
	case errors.Is(err, organizer.ErrTooManyTries):
		w.Header().Set("Retry-After", retryAfter(wait))
		c.accountPage(w, r, http.StatusTooManyRequests, "Too many wrong passwords. Wait a few minutes and try again.")
		return
	case errors.Is(err, organizer.ErrBusy):
		w.Header().Set("Retry-After", retryAfter(organizer.BusyRetry))
		c.accountPage(w, r, http.StatusServiceUnavailable, "Too many people are signing in right now. Try again in a few seconds.")
		return
	case errors.Is(err, organizer.ErrSessionEnded):
		_ = c.sessions.Destroy(r.Context())
		http.Redirect(w, r, "/cabinet/signin", http.StatusSeeOther)
		return
	case err != nil:
		c.fail(w, r, err)
		return
	}
	if err := c.sessions.RenewToken(r.Context()); err != nil {
		c.fail(w, r, err)
		return
	}
	c.sessions.Put(r.Context(), "session_version", u.SessionVersion)
	c.Log.InfoContext(r.Context(), "cabinet password changed", "user_id", u.ID, "company_id", u.CompanyID)
	c.done(w, r, "/cabinet/account", "Your password is changed. Your other sessions are signed out; this one stays.")
}

// leaveConfirm asks before leaving the team.
func (c *cabinet) leaveConfirm(w http.ResponseWriter, r *http.Request) {
	c.render(w, r, http.StatusOK, "team_confirm", pageData{Title: "Leave the team", Nav: "account", Data: confirmView{
		Question: "Leave the team?",
		Detail:   "You are signed out at once and can no longer sign in to this organizer's cabinet. An owner can invite you again.",
		Action:   "/cabinet/account/leave", Button: "Leave the team", ButtonID: "confirm-leave", Cancel: "/cabinet/account"}})
}

// leave takes the signed-in user out of the team and ends the session;
// the company's last active owner cannot leave.
func (c *cabinet) leave(w http.ResponseWriter, r *http.Request) {
	u, err := c.Users.Remove(r.Context(), user(r).CompanyID, user(r).ID)
	if errors.Is(err, organizer.ErrLastOwner) {
		c.accountPage(w, r, http.StatusConflict, "You are the company's last active owner: make someone else an owner before you leave.")
		return
	}
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.logTeam(r, "leave", u)
	if err := c.sessions.Destroy(r.Context()); err != nil {
		c.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/cabinet/signin?left=1", http.StatusSeeOther)
}

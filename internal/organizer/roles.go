package organizer

import (
	"fmt"
	"slices"
)

// Role is what a cabinet user is in the company's team; it decides every
// page and action the user may open (Can).
type Role string

// The roles. An owner may do everything, including managing the team; the
// others hold only what their work needs.
const (
	RoleOwner     Role = "owner"
	RoleFinance   Role = "finance"
	RoleSupport   Role = "support"
	RoleDoor      Role = "door"
	RoleDeveloper Role = "developer"
)

// Roles lists every role, owner first.
var Roles = []Role{RoleOwner, RoleFinance, RoleSupport, RoleDoor, RoleDeveloper}

// Perm is one thing a cabinet user may see or do.
type Perm string

// The permissions every cabinet page and action is guarded by.
const (
	PermReport Perm = "report" // the sales report and its CSV
	PermOrders Perm = "orders" // find orders and read them
	PermRefund Perm = "refund" // refund tickets of an order
	PermResend Perm = "resend" // send an order's tickets e-mail again
	PermCancel Perm = "cancel" // cancel an unpaid order
	// PermNotes: write notes on an order (what was agreed with the buyer).
	// Correcting the buyer's e-mail is PermResend's: it is done to make a
	// resend reach the buyer.
	PermNotes   Perm = "notes"
	PermCheckIn Perm = "checkin" // the doors' live page
	// PermDoorDesk: the door desk. Look a ticket up by number, barcode or
	// buyer's name (the name only: no e-mail, no phone, no money), admit it
	// or undo its admission by hand with a reason, read the refused scans,
	// and replace a lost scanner's door key (door keys only: the new key
	// has the old one's event, gate and environment, nothing more).
	PermDoorDesk Perm = "door_desk"
	PermKeys     Perm = "keys"     // API keys, partner and door
	PermRequests Perm = "requests" // the request log
	PermWebhooks Perm = "webhooks" // webhook endpoints and deliveries
	PermCatalog  Perm = "catalog"  // the catalog and its upload
	PermTeam     Perm = "team"     // invite, change and remove team members
	// PermDistribution: sales channels, their applications, and per event
	// what each sells and when (allocations, windows, releases).
	PermDistribution Perm = "distribution"
	// PermAudit: the company's audit log, who did what (owner only: it
	// watches every role, finance's refunds too, and holds the team's
	// sign-ins and their addresses).
	PermAudit Perm = "audit"
)

// grants is what each role may do besides owner's everything. A door
// keeper reads no buyer's data but the holder's name at the door desk; support finds orders and helps buyers but
// moves no money; finance reads and returns money; developers keep the
// integration running. Allocations and presale terms are commercial
// agreements with partners: those who settle with them (owner, finance)
// decide them; developers manage keys but do not change who sells what.
var grants = map[Role][]Perm{
	RoleFinance:   {PermReport, PermOrders, PermRefund, PermDistribution},
	RoleSupport:   {PermOrders, PermResend, PermCancel, PermNotes},
	RoleDoor:      {PermCheckIn, PermDoorDesk},
	RoleDeveloper: {PermKeys, PermRequests, PermWebhooks},
}

// Can reports whether the role allows p.
func (r Role) Can(p Perm) bool {
	if r == RoleOwner {
		return true
	}
	return slices.Contains(grants[r], p)
}

// Valid reports whether r is one of Roles.
func (r Role) Valid() bool { return slices.Contains(Roles, r) }

// ParseRole returns the role named s.
func ParseRole(s string) (Role, error) {
	if r := Role(s); r.Valid() {
		return r, nil
	}
	return "", fmt.Errorf("role %q: not one of owner, finance, support, door, developer", s)
}

// Can reports whether the user's role allows p (templates ask it by name:
// {{if .User.Can "refund"}}).
func (u *User) Can(p Perm) bool { return u != nil && u.Role.Can(p) }

// MayManageWebhooks is Role.MayManageWebhooks for templates ({{if
// .User.MayManageWebhooks "production"}}).
func (u *User) MayManageWebhooks(env string) bool { return u != nil && u.Role.MayManageWebhooks(env) }

// MayReadWebhookPayloads is Role.MayReadWebhookPayloads for templates.
func (u *User) MayReadWebhookPayloads(env string) bool {
	return u != nil && u.Role.MayReadWebhookPayloads(env)
}

package organizer

import (
	"strings"
	"testing"
	"time"
)

func TestEveryRoleIsSummed(t *testing.T) {
	for _, r := range Roles {
		if RoleSummary(r) == "" {
			t.Errorf("role %s has no summary for the team page", r)
		}
	}
}

func TestInvitationMailHoldsTheLinkAndItsExpiry(t *testing.T) {
	moscow, err := time.LoadLocation("Europe/Moscow")
	if err != nil {
		t.Fatal(err)
	}
	// The company's zone: the mail says the time in it, named.
	expires := time.Date(2026, 11, 29, 6, 47, 0, 0, time.UTC).In(moscow)
	m := InvitationMail("door@acme.test", "owner@acme.test", "Acme", RoleDoor, "https://t.example/cabinet/link/abc", expires, "invitation-1@ticketsales")
	for _, want := range []string{"owner@acme.test", "Acme", "door", "https://t.example/cabinet/link/abc", "2026-11-29 09:47 MSK"} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("the invitation lacks %q:\n%s", want, m.Text)
		}
	}
	if m.To != "door@acme.test" || m.MessageID == "" {
		t.Errorf("invitation %+v", m)
	}
}

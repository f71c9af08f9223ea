package organizer

import "testing"

// TestRolesGrantWhatTheirWorkNeeds pins the team's roles: a door keeper
// reads no orders, support moves no money, only owners manage the team.
func TestRolesGrantWhatTheirWorkNeeds(t *testing.T) {
	all := []Perm{PermReport, PermOrders, PermRefund, PermResend, PermCancel, PermCheckIn, PermKeys, PermRequests,
		PermWebhooks, PermCatalog, PermTeam, PermDistribution, PermNotes, PermDoorDesk}
	want := map[Role][]Perm{
		RoleOwner:     all,
		RoleFinance:   {PermReport, PermOrders, PermRefund, PermDistribution},
		RoleSupport:   {PermOrders, PermResend, PermCancel, PermNotes},
		RoleDoor:      {PermCheckIn, PermDoorDesk},
		RoleDeveloper: {PermKeys, PermRequests, PermWebhooks},
	}
	for _, r := range Roles {
		allowed := map[Perm]bool{}
		for _, p := range want[r] {
			allowed[p] = true
		}
		for _, p := range all {
			if got := r.Can(p); got != allowed[p] {
				t.Errorf("%s can %s: %v, want %v", r, p, got, allowed[p])
			}
		}
	}
	if Role("admin").Can(PermReport) || Role("").Can(PermCheckIn) {
		t.Error("an unknown role is granted something")
	}
	if _, err := ParseRole("admin"); err == nil {
		t.Error("ParseRole accepted admin")
	}
	var nobody *User
	if nobody.Can(PermCheckIn) {
		t.Error("no user can do anything")
	}
}

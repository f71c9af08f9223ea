package organizer

import "testing"

// TestEveryAuditActionHasWords: the audit page says each action in words,
// so a new action without them fails here.
func TestEveryAuditActionHasWords(t *testing.T) {
	for _, a := range AuditActions {
		if AuditWord(a) == a {
			t.Errorf("audit action %s has no words", a)
		}
	}
}

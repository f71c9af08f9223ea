package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/ticketsales/ticketsales/internal/apikey"
)

// A door retrying a scan under the same Idempotency-Key (its answer lost on
// the way) is told the first answer again, admitted, and the scan is
// recorded once: the stored answer skips the WAL flush, not the store.
func TestCheckInRetryReplaysTheAdmission(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	event := f.ids["swan-lake"]
	_, ts := f.paidTickets(t, f.keyA, "parterre-3-11")
	body := fmt.Sprintf(`{"barcode": %q, "event_id": %d, "gate": "North"}`, ts[0].Barcode, event)
	key := idemKey(t)
	var answers []checkInBody
	for i := range 2 {
		res := f.Do(t, http.MethodPost, "/v1/check-ins", door, body, key)
		if res.Status != http.StatusOK || (i == 1) != (res.Header.Get("Idempotent-Replayed") == "true") {
			t.Fatalf("scan %d: %d replayed=%q %s", i, res.Status, res.Header.Get("Idempotent-Replayed"), res.Body)
		}
		var b checkInBody
		res.Decode(t, &b)
		answers = append(answers, b)
	}
	if answers[0].Data.Outcome != "admitted" || answers[1].Data.Outcome != "admitted" || answers[1].Data.ID != answers[0].Data.ID {
		t.Fatalf("a retried scan: %+v, then %+v", answers[0].Data, answers[1].Data)
	}
	if scans := f.scansOf(t, ts[0].ID); scans != 1 {
		t.Fatalf("scans recorded: %d", scans)
	}
}

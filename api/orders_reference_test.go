package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ticketsales/ticketsales/internal/apikey"
)

// refOrder is an order's reference and metadata as a partner reads them.
type refOrder struct {
	ID        int64             `json:"id"`
	Status    string            `json:"status"`
	Reference *string           `json:"reference"`
	Metadata  map[string]string `json:"metadata"`
	PaymentID *string           `json:"payment_id"`
	Amount    struct{ Amount int64 }
}

// fullMetadata is 20 keys, the most an order takes: Cyrillic values, one
// of them 500 characters long.
func fullMetadata() map[string]string {
	md := map[string]string{}
	for i := range 19 {
		md[fmt.Sprintf("key_%02d.x-y", i)] = fmt.Sprintf("значение №%d", i)
	}
	md["note"] = strings.Repeat("ж", 500)
	return md
}

func sameMetadata(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// gaOrderBody is an order of n general-admission tickets with the given
// reference and metadata members (JSON, "" to leave one out).
func gaOrderBody(event, category int64, email, members string) string {
	return fmt.Sprintf(`{"event_id": %d, "items": [{"ticket_category_id": %d, "quantity": 1}], "customer": {"email": %q,
		"first_name": "Иван", "last_name": "Петров", "phone": "+7 999 123-45-67"}, "payment": "external"%s}`, event, category, email, members)
}

func (f *fixture) firstCategory(t *testing.T, key string, event int64) int64 {
	t.Helper()
	var cats struct{ Data []category }
	f.Get(t, fmt.Sprintf("/v1/events/%d/categories", event), key).Decode(t, &cats)
	if len(cats.Data) == 0 {
		t.Fatalf("event %d has no categories", event)
	}
	return cats.Data[0].ID
}

// A partner's reference (64 Cyrillic characters) and 20 metadata pairs
// come back as sent on the created order, when read, listed, confirmed
// and cancelled, and in the order.paid webhook; an order without them
// shows metadata {} and no reference.
func TestOrdersReferenceAndMetadataEchoed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	r := newReceiver(t)
	f.subscribe(t, f.keyA, r, "order.created", "order.paid")

	ref := strings.Repeat("Ё", 60) + "-№42"
	if n := len([]rune(ref)); n != 64 {
		t.Fatalf("reference of %d characters", n)
	}
	md := fullMetadata()
	members, _ := json.Marshal(map[string]any{"reference": ref, "metadata": md})
	extra := ", " + strings.TrimSuffix(strings.TrimPrefix(string(members), "{"), "}")
	standup := f.ids["standup"]
	cat := f.firstCategory(t, f.keyA, standup)

	check := func(what string, o refOrder) {
		t.Helper()
		if o.Reference == nil || *o.Reference != ref || !sameMetadata(o.Metadata, md) {
			t.Fatalf("%s: reference %v, metadata of %d keys %v", what, o.Reference, len(o.Metadata), o.Metadata)
		}
	}
	var created struct{ Data refOrder }
	res := f.Do(t, http.MethodPost, "/v1/orders", f.keyA, gaOrderBody(standup, cat, "ivan@example.com", extra), idemKey(t))
	if res.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	res.Decode(t, &created)
	check("created", created.Data)
	id := created.Data.ID

	var got struct{ Data refOrder }
	f.Get(t, fmt.Sprintf("/v1/orders/%d", id), f.keyA).Decode(t, &got)
	check("read", got.Data)
	var list listBody[refOrder]
	f.Get(t, "/v1/orders?filter.event_id="+fmt.Sprint(standup), f.keyA).Decode(t, &list)
	if len(list.Data) != 1 {
		t.Fatalf("listed %d orders", len(list.Data))
	}
	check("listed", list.Data[0])

	var paid struct{ Data refOrder }
	if res := f.confirm(t, f.keyA, id, created.Data.Amount.Amount); res.Status != http.StatusOK {
		t.Fatalf("confirm: %d %s", res.Status, res.Body)
	} else {
		res.Decode(t, &paid)
	}
	check("confirmed", paid.Data)
	for _, typ := range []string{"order.created", "order.paid"} {
		ev := r.await(typ, idIs(id))
		var o refOrder
		if err := json.Unmarshal(ev.Data, &o); err != nil {
			t.Fatal(err)
		}
		check(typ+" webhook", o)
	}

	// Without them: metadata is {} (never null), reference absent.
	res = f.Do(t, http.MethodPost, "/v1/orders", f.keyA, gaOrderBody(standup, cat, "ivan@example.com", ""), idemKey(t))
	if res.Status != http.StatusCreated {
		t.Fatalf("create without: %d %s", res.Status, res.Body)
	}
	var bare struct{ Data map[string]json.RawMessage }
	res.Decode(t, &bare)
	if _, ok := bare.Data["reference"]; ok || string(bare.Data["metadata"]) != "{}" {
		t.Fatalf("an order without reference or metadata: %s", res.Body)
	}
	var plain struct{ Data refOrder }
	res.Decode(t, &plain)
	var cancelled struct{ Data map[string]json.RawMessage }
	f.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/cancel", plain.Data.ID), f.keyA, "").Decode(t, &cancelled)
	if string(cancelled.Data["status"]) != `"cancelled"` || string(cancelled.Data["metadata"]) != "{}" {
		t.Fatalf("the cancel's answer: %v", cancelled.Data)
	}

	// A cancelled order's answer echoes them too.
	res = f.Do(t, http.MethodPost, "/v1/orders", f.keyA, gaOrderBody(standup, cat, "ivan@example.com", extra), idemKey(t))
	var again struct{ Data refOrder }
	res.Decode(t, &again)
	var cancel struct{ Data refOrder }
	f.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/cancel", again.Data.ID), f.keyA, "").Decode(t, &cancel)
	if cancel.Data.Status != "cancelled" {
		t.Fatalf("cancel: %+v", cancel.Data)
	}
	check("cancelled", cancel.Data)
}

// Out-of-bounds references and metadata are 422 naming the member, and
// nothing is made: the reservation they named is ordered afterwards. A
// replay of a create under its key with another reference is the
// idempotency conflict.
func TestOrdersReferenceAndMetadataBounds(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	var rb reservationBody
	if res := f.reserve(t, f.keyA, "parterre-2-7"); res.Status != http.StatusCreated {
		t.Fatalf("reserve: %d %s", res.Status, res.Body)
	} else {
		res.Decode(t, &rb)
	}
	body := func(members string) string {
		return fmt.Sprintf(`{"event_id": %d, "reservation_id": %q, "customer": %s, "payment": "external"%s}`,
			f.ids["swan-lake"], rb.Data.ID, customer, members)
	}
	tooMany := map[string]string{}
	for i := range 21 {
		tooMany[fmt.Sprintf("k%d", i)] = "v"
	}
	tooManyJSON, _ := json.Marshal(tooMany)
	for _, tc := range []struct{ members, location string }{
		{`, "reference": "` + strings.Repeat("Ж", 65) + `"`, "body.reference"},
		{`, "reference": ""`, "body.reference"},
		{`, "reference": "ORD-1\nBcc: x@example.com"`, "body.reference"},
		{`, "reference": "ORD\u00071"`, "body.reference"},
		{`, "reference": 42`, "body.reference"},
		{`, "metadata": ` + string(tooManyJSON), "body.metadata"},
		{`, "metadata": {"bad key": "v"}`, "body.metadata.bad key"},
		{`, "metadata": {"ключ": "v"}`, "body.metadata.ключ"},
		{`, "metadata": {"": "v"}`, "body.metadata."},
		{`, "metadata": {"` + strings.Repeat("k", 41) + `": "v"}`, "body.metadata." + strings.Repeat("k", 41)},
		{`, "metadata": {"note": "` + strings.Repeat("ж", 501) + `"}`, "body.metadata.note"},
		{`, "metadata": {"note": "line\nbreak"}`, "body.metadata.note"},
		{`, "metadata": {"count": 3}`, "body.metadata.count"},
		{`, "metadata": {"nested": {"a": "b"}}`, "body.metadata.nested"},
		{`, "metadata": ["a"]`, "body.metadata"},
		{`, "reference_id": "ORD-1"`, "body.reference_id"},
	} {
		p := expectProblem(t, f.Do(t, http.MethodPost, "/v1/orders", f.keyA, body(tc.members), idemKey(t)),
			http.StatusUnprocessableEntity, "validation_error")
		found := false
		for _, e := range p.Errors {
			found = found || e.Location == tc.location
		}
		if !found {
			t.Errorf("%s: errors %+v, want one at %s", tc.members, p.Errors, tc.location)
		}
	}
	var list listBody[refOrder]
	f.Get(t, "/v1/orders", f.keyA).Decode(t, &list)
	if list.Meta.Total != 0 {
		t.Fatalf("%d orders made by refused requests", list.Meta.Total)
	}

	// The bounds themselves are taken; the reservation is still there.
	key := idemKey(t)
	ok := body(`, "reference": "` + strings.Repeat("Я", 64) + `", "metadata": {"` + strings.Repeat("k", 40) + `": "` + strings.Repeat("ж", 500) + `"}`)
	if res := f.Do(t, http.MethodPost, "/v1/orders", f.keyA, ok, key); res.Status != http.StatusCreated {
		t.Fatalf("an order at the bounds: %d %s", res.Status, res.Body)
	}
	// Its key with another reference or metadata is another request.
	expectProblem(t, f.Do(t, http.MethodPost, "/v1/orders", f.keyA, body(`, "reference": "ORD-2"`), key),
		http.StatusUnprocessableEntity, "idempotency_key_reused")
	// So is a new key for the same reservation with another reference.
	expectProblem(t, f.Do(t, http.MethodPost, "/v1/orders", f.keyA, body(`, "reference": "ORD-2"`), idemKey(t)),
		http.StatusConflict, "invalid_state")
}

// GET /v1/orders finds orders by reference (several may share one), by
// payment id, by the buyer's e-mail (case aside) and by one metadata
// pair; always within the caller's company and environment: though
// company A's production orders and company B's carry the same values
// (reference, payment id, e-mail, metadata), each key finds only its own.
func TestOrdersLookups(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	keyAProd, _ := f.Key(t, f.companyA, apikey.Production)
	standup := f.ids["standup"]
	cat := f.firstCategory(t, f.keyA, standup)
	catB := f.firstCategory(t, f.keyB, f.foreignID)

	const ref = "Корзина 1042/Б"
	members := `, "reference": "` + ref + `", "metadata": {"cart_id": "c-1042", "channel": "мобильное приложение"}`
	create := func(key string, event, category int64, email, members string) refOrder {
		t.Helper()
		res := f.Do(t, http.MethodPost, "/v1/orders", key, gaOrderBody(event, category, email, members), idemKey(t))
		if res.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", res.Status, res.Body)
		}
		var ob struct{ Data refOrder }
		res.Decode(t, &ob)
		return ob.Data
	}
	// Company A, sandbox: the cart ordered, cancelled and ordered again
	// with the same reference; the second one paid.
	first := create(f.keyA, standup, cat, "Ivan.Petrov@Example.com", members)
	if res := f.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/cancel", first.ID), f.keyA, ""); res.Status != http.StatusOK {
		t.Fatalf("cancel: %d %s", res.Status, res.Body)
	}
	second := create(f.keyA, standup, cat, "Ivan.Petrov@Example.com", members)
	if res := f.confirm(t, f.keyA, second.ID, second.Amount.Amount); res.Status != http.StatusOK {
		t.Fatalf("confirm: %d %s", res.Status, res.Body)
	}
	other := create(f.keyA, standup, cat, "maria@example.com", `, "metadata": {"cart_id": "c-7"}`)
	payA := fmt.Sprintf("ext-%d", second.ID)
	// The same values, the payment id too, in A's production and in
	// company B.
	prodA := create(keyAProd, standup, cat, "ivan.petrov@example.com", members)
	orderB := create(f.keyB, f.foreignID, catB, "ivan.petrov@example.com", members)
	for _, c := range []struct {
		key string
		o   refOrder
	}{{keyAProd, prodA}, {f.keyB, orderB}} {
		res := f.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/confirm", c.o.ID), c.key,
			fmt.Sprintf(`{"external_payment_id": %q, "paid_amount": %d}`, payA, c.o.Amount.Amount), idemKey(t))
		if res.Status != http.StatusOK {
			t.Fatalf("confirm: %d %s", res.Status, res.Body)
		}
	}

	lookup := func(key, filter, value string) []int64 {
		t.Helper()
		res := f.Get(t, "/v1/orders?"+url.Values{filter: {value}}.Encode(), key)
		if res.Status != http.StatusOK {
			t.Fatalf("%s=%s: %d %s", filter, value, res.Status, res.Body)
		}
		var list listBody[refOrder]
		res.Decode(t, &list)
		var ids []int64
		for _, o := range list.Data {
			ids = append(ids, o.ID)
		}
		if list.Meta.Total != len(ids) {
			t.Fatalf("%s=%s: total %d for %d orders", filter, value, list.Meta.Total, len(ids))
		}
		return ids
	}
	same := func(a, b []int64) bool { return fmt.Sprint(a) == fmt.Sprint(b) }
	for _, tc := range []struct {
		key, filter, value string
		want               []int64
	}{
		{f.keyA, "filter.reference", ref, []int64{second.ID, first.ID}},
		{f.keyA, "filter.reference", "корзина 1042/б", nil}, // exact: case counts
		{f.keyA, "filter.payment_id", payA, []int64{second.ID}},
		{f.keyA, "filter.email", "ivan.petrov@example.COM", []int64{second.ID, first.ID}},
		{f.keyA, "filter.metadata", "cart_id:c-1042", []int64{second.ID, first.ID}},
		{f.keyA, "filter.metadata", "channel:мобильное приложение", []int64{second.ID, first.ID}},
		{f.keyA, "filter.metadata", "cart_id:c-7", []int64{other.ID}},
		{f.keyA, "filter.metadata", "cart_id:c-10", nil},
		// Another environment of the company, another company: their own.
		{keyAProd, "filter.reference", ref, []int64{prodA.ID}},
		{keyAProd, "filter.payment_id", payA, []int64{prodA.ID}},
		{keyAProd, "filter.email", "Ivan.Petrov@Example.com", []int64{prodA.ID}},
		{keyAProd, "filter.metadata", "cart_id:c-1042", []int64{prodA.ID}},
		{keyAProd, "filter.metadata", "cart_id:c-7", nil},
		{f.keyB, "filter.reference", ref, []int64{orderB.ID}},
		{f.keyB, "filter.payment_id", payA, []int64{orderB.ID}},
		{f.keyB, "filter.email", "ivan.petrov@example.com", []int64{orderB.ID}},
		{f.keyB, "filter.metadata", "cart_id:c-1042", []int64{orderB.ID}},
		{f.keyB, "filter.metadata", "cart_id:c-7", nil},
	} {
		if got := lookup(tc.key, tc.filter, tc.value); !same(got, tc.want) {
			t.Errorf("%s=%s: orders %v, want %v", tc.filter, tc.value, got, tc.want)
		}
	}
	// Filters combine: the paid one of the cart's orders.
	res := f.Get(t, "/v1/orders?"+url.Values{"filter.reference": {ref}, "filter.status": {"paid"}}.Encode(), f.keyA)
	var paid listBody[refOrder]
	res.Decode(t, &paid)
	if len(paid.Data) != 1 || paid.Data[0].ID != second.ID {
		t.Fatalf("the cart's paid order: %s", res.Body)
	}

	for _, tc := range []struct{ query, location string }{
		{"filter.metadata=cart_id", "query.filter.metadata"},
		{"filter.metadata=" + url.QueryEscape("bad key:v"), "query.filter.metadata"},
		{"filter.metadata=" + url.QueryEscape("note:"+strings.Repeat("ж", 501)), "query.filter.metadata"},
		{"filter.reference=" + url.QueryEscape(strings.Repeat("Ж", 65)), "query.filter.reference"},
	} {
		p := expectProblem(t, f.Get(t, "/v1/orders?"+tc.query, f.keyA), http.StatusUnprocessableEntity, "validation_error")
		if len(p.Errors) == 0 || p.Errors[0].Location != tc.location {
			t.Errorf("%s: %+v, want %s", tc.query, p.Errors, tc.location)
		}
	}
}

// A lookup value no order can carry (a NUL or another control character:
// references, payment ids and e-mails are one line) is bad input: a clear
// 422 naming the parameter, never a 500 from the database.
func TestOrdersLookupsRefuseControlCharacters(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, filter := range []string{"filter.reference", "filter.payment_id", "filter.email"} {
		for _, value := range []string{"Заказ\x00№1", "ext\n1", "\x00"} {
			res := f.Get(t, "/v1/orders?"+url.Values{filter: {value}}.Encode(), f.keyA)
			p := expectProblem(t, res, http.StatusUnprocessableEntity, "validation_error")
			if len(p.Errors) == 0 || p.Errors[0].Location != "query."+filter {
				t.Errorf("%s=%q: %+v, want query.%s", filter, value, p.Errors, filter)
			}
		}
	}
}

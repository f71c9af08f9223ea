package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// TestCabinetOrdersReference: the cabinet's search finds orders by the
// partner's exact reference (one order opens; a reference two orders
// share lists both; another company's order with the same reference is
// neither), and the order page shows the reference and the metadata, one
// pair a line, escaped.
func TestCabinetOrdersReference(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	standup := f.ids["standup"]
	cat := f.firstCategory(t, f.keyA, standup)
	catB := f.firstCategory(t, f.keyB, f.foreignID)
	create := func(key string, event, category int64, members string) int64 {
		t.Helper()
		res := f.Do(t, http.MethodPost, "/v1/orders", key, gaOrderBody(event, category, "ivan@example.com", members), idemKey(t))
		if res.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", res.Status, res.Body)
		}
		var ob orderBody
		res.Decode(t, &ob)
		return ob.Data.ID
	}
	shared1 := create(f.keyA, standup, cat, `, "reference": "Корзина 77/Б", "metadata": {"cart_id": "c-77", "note": "<b>VIP</b> гость"}`)
	shared2 := create(f.keyA, standup, cat, `, "reference": "Корзина 77/Б"`)
	alone := create(f.keyA, standup, cat, `, "reference": "Заказ-78"`)
	create(f.keyB, f.foreignID, catB, `, "reference": "Заказ-78"`)

	b := newBrowserless(t, f.URL, nil)
	b.setPassword(cabinetUser(t, f.Stack, f.URL, f.companyA, "owner@reference.test"))
	search := func(q string) page {
		t.Helper()
		p := b.get("/cabinet/orders?" + url.Values{"q": {q}, "env": {"sandbox"}}.Encode())
		if p.Status != http.StatusOK {
			t.Fatalf("search %q: %d %.2000s", q, p.Status, p.Body)
		}
		return p
	}
	if p := search("Заказ-78"); p.URL.Path != fmt.Sprintf("/cabinet/orders/%d", alone) {
		t.Errorf("search by a reference of one order: at %s, want order %d", p.URL, alone)
	}
	if got := orderIDsOn(t, search("Корзина 77/Б")); !slices.Equal(got, []int64{shared2, shared1}) {
		t.Errorf("search by a shared reference lists %v, want %v", got, []int64{shared2, shared1})
	}
	if got := orderIDsOn(t, search("корзина 77/б")); len(got) != 0 {
		t.Errorf("a reference is exact: another case lists %v", got)
	}

	p := b.get(fmt.Sprintf("/cabinet/orders/%d?env=sandbox", shared1))
	if p.Status != http.StatusOK {
		t.Fatalf("order page: %d", p.Status)
	}
	text := pageText(p.Body)
	for _, want := range []string{"Reference Корзина 77/Б", "Metadata cart_id : c-77 note : <b>VIP</b> гость"} {
		if !strings.Contains(text, want) {
			t.Errorf("the order page lacks %q: %s", want, text)
		}
	}
	if strings.Contains(p.Body, "<b>VIP</b>") {
		t.Error("metadata is not escaped on the order page")
	}
	if p := b.get(fmt.Sprintf("/cabinet/orders/%d?env=sandbox", alone)); strings.Contains(p.Body, `id="metadata"`) {
		t.Error("an order without metadata shows it")
	}
}

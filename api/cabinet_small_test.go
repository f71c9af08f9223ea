package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestCabinetSmallThings: the back office's small items. A signed-out GET
// signs in and lands on the page asked for, and only a relative /cabinet/
// path is accepted (no open redirect); the check-in page has no meta
// refresh but a Refresh link; every page starts with a skip link, links
// the embedded favicon and is lang="en" with Cyrillic user data marked
// lang="ru"; a payment id is found in any case and an exact key opens its
// order; statuses are words, the raw value kept in data-status.
func TestCabinetSmallThings(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	prod, _ := f.Key(t, f.companyA, "production")
	maria := f.buyerOrder(t, prod, `{"email": "maria@shop.test", "first_name": "Мария", "last_name": "Иванова", "phone": "+7 912 000-11-22"}`, "parterre-3-11")
	boris := f.buyerOrder(t, prod, `{"email": "boris@shop.test", "first_name": "Boris", "last_name": "Petrov", "phone": "+7 900 111-22-33"}`, "parterre-3-12")

	b := newBrowserless(t, f.URL, nil)
	b.setPassword(cabinetUser(t, f.Stack, f.URL, f.companyA, "owner@small.test"))
	signOut := func() {
		t.Helper()
		if p := b.post("/cabinet/signout", url.Values{}); p.URL.Path != "/cabinet/signin" {
			t.Fatalf("sign out: %d %s", p.Status, p.URL)
		}
	}

	// 1. Sign-in remembers the page asked for.
	signOut()
	status, loc, _ := b.send(http.MethodGet, "/cabinet/orders?q=x", nil)
	if want := "/cabinet/signin?next=" + url.QueryEscape("/cabinet/orders?q=x"); status != http.StatusSeeOther || loc != want {
		t.Fatalf("signed-out GET: %d to %q, want 303 to %q", status, loc, want)
	}
	p := b.get(loc)
	if !strings.Contains(p.Body, `name="next" value="/cabinet/orders?q=x"`) {
		t.Fatalf("the sign-in page does not carry next:\n%s", p.Body)
	}
	p = b.post("/cabinet/signin", url.Values{"email": {"owner@small.test"}, "password": {cabinetPassword}, "next": {"/cabinet/orders?q=x"}})
	if p.URL.Path != "/cabinet/orders" || p.URL.RawQuery != "q=x" || !strings.Contains(p.Body, `id="orders"`) && !strings.Contains(p.Body, "Search for") { // one letter is too short a search: the page says so
		t.Fatalf("after signing in: %d at %s", p.Status, p.URL)
	}
	for _, evil := range []string{"//evil.test/x", "https://evil.test/cabinet/", "/\\evil.test", "/cabinet/../..//evil.test", "/cabinet/link/abc", "javascript:alert(1)", "cabinet/orders"} {
		if p := b.get("/cabinet/signin?next=" + url.QueryEscape(evil)); strings.Contains(p.Body, `name="next"`) {
			t.Errorf("the sign-in page carries next %q", evil)
		}
		signOut()
		status, loc, _ := b.send(http.MethodPost, "/cabinet/signin", url.Values{"email": {"owner@small.test"}, "password": {cabinetPassword}, "next": {evil}})
		if status != http.StatusSeeOther || loc != "/cabinet/report" {
			t.Errorf("sign-in with next %q: %d to %q, want the landing page", evil, status, loc)
		}
	}

	// 2. The check-in page reloads nothing by itself.
	p = b.get(fmt.Sprintf("/cabinet/checkin?event=%d", f.ids["swan-lake"]))
	if p.Status != http.StatusOK || strings.Contains(p.Body, `http-equiv="refresh"`) || !strings.Contains(p.Body, `id="refresh"`) ||
		!strings.Contains(p.Body, `id="door-live" data-refresh="20"`) {
		t.Errorf("check-in page: %d\n%s", p.Status, p.Body)
	}

	// 3. Skip link first, favicon, languages.
	for _, path := range []string{"/cabinet/report", "/cabinet/orders", "/cabinet/checkin", "/cabinet/keys", "/cabinet/account", fmt.Sprintf("/cabinet/orders/%d", boris), "/cabinet/nowhere"} {
		p := b.get(path)
		body := p.Body[strings.Index(p.Body, "<body>"):]
		skip := strings.Index(body, `<a class="skip visually-hidden" href="#main" id="skip">Skip to content</a>`)
		for _, tag := range []string{"<a ", "<button", "<input", "<select", "<textarea"} {
			if i := strings.Index(body, tag); i >= 0 && i < skip || skip < 0 {
				t.Errorf("%s: %s comes before the skip link (at %d, skip at %d)", path, tag, i, skip)
			}
		}
		if !strings.Contains(p.Body, `<html lang="en">`) || !strings.Contains(p.Body, `<link rel="icon" href="/cabinet/static/favicon.svg" type="image/svg+xml">`) ||
			!strings.Contains(p.Body, `<main id="main" tabindex="-1">`) {
			t.Errorf("%s: no lang, favicon or main target", path)
		}
	}
	if st, _, body := b.send(http.MethodGet, "/cabinet/static/favicon.svg", nil); st != http.StatusOK || !strings.HasPrefix(body, "<svg") {
		t.Errorf("favicon: %d %.100s", st, body)
	}
	list := b.get("/cabinet/orders")
	if !strings.Contains(list.Body, `<td class="buyer"><span lang="ru">Мария Иванова</span>`) || strings.Contains(list.Body, `lang="ru">Boris`) || !strings.Contains(list.Body, `<td class="buyer"><span>Boris`) {
		t.Errorf("the orders list marks Cyrillic names wrongly:\n%s", list.Body)
	}

	// 4. Payment ids in any case; an exact key opens its order.
	for _, q := range []string{fmt.Sprintf("EXT-%d", maria), fmt.Sprintf("ext-%d", maria), fmt.Sprintf("%d", maria)} {
		if p := b.get("/cabinet/orders?" + url.Values{"q": {q}}.Encode()); p.URL.Path != fmt.Sprintf("/cabinet/orders/%d", maria) {
			t.Errorf("?q=%s: at %s, want order %d", q, p.URL, maria)
		}
	}
	if p := b.get("/cabinet/orders?q=boris"); p.URL.Path != "/cabinet/orders" || !strings.Contains(p.Body, fmt.Sprintf(`<tr data-order="%d"`, boris)) {
		t.Errorf("a name lists, not opens: at %s", p.URL)
	}
	if p := b.get("/cabinet/orders?q=ext-"); p.URL.Path != "/cabinet/orders" {
		t.Errorf("several matches list: at %s", p.URL)
	}

	// 5. Statuses in words, the raw value kept.
	if !strings.Contains(list.Body, `<span class="badge status-paid" data-status="paid" title="paid">Paid</span>`) ||
		!strings.Contains(list.Body, `<option value="partially_refunded">Partly refunded</option>`) ||
		!strings.Contains(list.Body, `<option value="pending_payment">Awaiting payment</option>`) {
		t.Errorf("the orders list shows raw statuses:\n%s", list.Body)
	}
}

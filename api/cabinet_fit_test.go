package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/checkin"
	"github.com/ticketsales/ticketsales/internal/organizer"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// Long words a cabinet must show without spilling out of its boxes: a
// buyer's name and e-mail, a key's name, a gate, a partner's URL, a path
// with a query.
const (
	fitBuyerFirst = "Konstantin-Aleksandr"
	fitBuyerLast  = "Konstantinopolsky-Rimsky-Korsakov"
	fitBuyerEmail = "konstantin.aleksandrovich.konstantinopolsky@partner-ticketing-agency.example.com"
	fitKeyName    = "Box office terminal, Great Hall, second floor (Konstantin's laptop, do not unplug)"
	fitGate       = "North-East-Entrance-Gate-4-Wheelchair-Accessible"
	fitEventTitle = "Symphony No. 9 in D minor, Op. 125 “Choral”: open dress rehearsal with the Festival Orchestra and Choir"
)

// fitWidths are the widths every cabinet page must fit: a desktop and a
// phone.
var fitWidths = []struct {
	name string
	w, h int64
	opts []chromedp.EmulateViewportOption
}{{"1280", 1280, 900, nil}, {"390", 390, 844, []chromedp.EmulateViewportOption{chromedp.EmulateMobile}}}

// fitMustVisit are routes the crawl has to reach (besides every GET route
// the cabinet registers, see cabinetRoutes): a page missing here means the
// crawl lost its way, not that the page fits.
var fitMustVisit = []string{
	"/cabinet/link/{id}", "/cabinet/report", "/cabinet/checkin", "/cabinet/catalog", "/cabinet/keys",
	"/cabinet/requests", "/cabinet/webhooks", "/cabinet/webhooks/{id}", "/cabinet/signin",
	"POST /cabinet/keys", "POST /cabinet/catalog", "404", "/cabinet/door", "/cabinet/door/keys/{id}/replace",
	"/cabinet/door/keys/created",
}

// fitViolation is one thing that does not fit, as measureFit finds it.
type fitViolation struct {
	Rule     string `json:"rule"`
	Selector string `json:"selector"`
	Text     string `json:"text"`
	Detail   string `json:"detail"`
}

// measureFit is the layout check run on a page at width W (the viewport's
// CSS width). Horizontal only: pages scroll down, never sideways.
//
//	page     the document is wider than the viewport.
//	box      an element's box sticks out of the viewport, and no ancestor
//	         clips or scrolls it (that ancestor's own box is checked instead).
//	scroll   at desktop width (W >= 1024) a scroll box (.scroll) has to
//	         scroll sideways: a column would be hidden until scrolled to.
//	cell     a table cell's content is wider than the cell (scrollWidth >
//	         clientWidth), unless the cell has class "scroll".
//	squeezed text whose box is narrower than its widest word, when that word
//	         is at most 12ch, or narrower than 12ch: a word is broken, or a
//	         path is broken a few letters per line. Words are what is between
//	         spaces and after a hyphen next to a letter, measured in the text's own font (a hidden probe); a
//	         text that does not wrap (white-space: nowrap/pre) cannot be
//	         squeezed. Long tokens may break (overflow-wrap: anywhere) but
//	         keep 12 characters a line.
//	control  a link or button is not wholly inside the viewport and every box
//	         that clips or scrolls it, at its first scroll position: it
//	         cannot be seen without scrolling a table sideways.
const measureFit = `((W) => {
  const tol = 1, out = [];
  const styles = new Map();
  const cs = el => { let s = styles.get(el); if (!s) { s = getComputedStyle(el); styles.set(el, s); } return s; };
  const sel = el => {
    const parts = [];
    for (let e = el; e && e.nodeType === 1 && e !== document.documentElement; e = e.parentElement) {
      let s = e.localName;
      if (e.id) { parts.unshift(s + '#' + e.id); break; }
      if (e.classList.length) s += '.' + Array.from(e.classList).join('.');
      const p = e.parentElement;
      if (p) {
        const same = Array.from(p.children).filter(c => c.localName === e.localName);
        if (same.length > 1) s += ':nth-of-type(' + (same.indexOf(e) + 1) + ')';
      }
      parts.unshift(s);
    }
    return parts.join(' > ');
  };
  const text = el => (el.innerText || el.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 70);
  const add = (rule, el, detail) => out.push({rule, selector: sel(el), text: text(el), detail});
  const px = n => Math.round(n);
  const skipped = el => el.closest('.visually-hidden, option, template, script, style, head') || (el.closest('svg') && el.localName !== 'svg');
  const rendered = el => el.getClientRects().length > 0 && cs(el).visibility !== 'hidden' && cs(el).display !== 'none';
  // clippers: the ancestors that clip or scroll el sideways, nearest first.
  const clipMemo = new Map();
  const clippers = el => {
    const p = el.parentElement;
    if (!p || p === document.body || p === document.documentElement) return [];
    let cl = clipMemo.get(p);
    if (!cl) {
      cl = cs(p).overflowX !== 'visible' ? [p, ...clippers(p)] : clippers(p);
      clipMemo.set(p, cl);
    }
    return cl;
  };

  const de = document.documentElement;
  if (de.scrollWidth > W + tol) add('page', de, 'document ' + de.scrollWidth + ' px wide in a ' + W + ' px viewport');

  for (const el of document.body.querySelectorAll('*')) {
    if (skipped(el) || !rendered(el)) continue;
    const r = el.getBoundingClientRect();
    const cl = clippers(el);
    if (cl.length === 0 && (r.left < -tol || r.right > W + tol)) {
      add('box', el, 'box ' + px(r.left) + '..' + px(r.right) + ' px, viewport 0..' + W);
    }
    if (W >= 1024 && el.classList.contains('scroll') && el.scrollWidth > el.clientWidth + tol) {
      add('scroll', el, 'content ' + el.scrollWidth + ' px wide in a ' + el.clientWidth + ' px box');
    }
    if (el.matches('td, th') && !el.classList.contains('scroll') && el.scrollWidth > el.clientWidth + tol) {
      add('cell', el, 'content ' + el.scrollWidth + ' px wide in a ' + el.clientWidth + ' px cell');
    }
    if (el.matches('a[href], button, input[type=submit], input[type=button], summary')) {
      let lo = 0, hi = W, by = 'the viewport';
      for (const c of cl) {
        const cr = c.getBoundingClientRect();
        const cLo = cr.left + c.clientLeft, cHi = cLo + c.clientWidth;
        if (cLo > lo) { lo = cLo; by = sel(c); }
        if (cHi < hi) { hi = cHi; by = sel(c); }
      }
      if (r.width < 1 || r.left < lo - tol || r.right > hi + tol) {
        add('control', el, 'at ' + px(r.left) + '..' + px(r.right) + ' px, visible ' + px(lo) + '..' + px(hi) + ' px of ' + by);
      }
    }
  }

  // squeezed: one report per box holding the text.
  // A word's width in the text's own font, numerals and spacing included.
  const probe = document.createElement('span');
  probe.style.cssText = 'position: absolute; left: -99999px; top: 0; white-space: pre; visibility: hidden';
  document.body.appendChild(probe);
  const widths = new Map();
  const widthOf = (s, w) => {
    const props = ['fontStyle', 'fontWeight', 'fontSize', 'fontFamily', 'fontStretch', 'fontVariantNumeric', 'fontFeatureSettings', 'letterSpacing', 'wordSpacing'];
    const k = props.map(p => s[p]).join('|') + '|' + w;
    let m = widths.get(k);
    if (m === undefined) {
      for (const p of props) probe.style[p] = s[p];
      probe.textContent = w;
      m = probe.getBoundingClientRect().width;
      widths.set(k, m);
    }
    return m;
  };
  const seen = new Set();
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const words = n.data.split(/\s+|(?<=\p{L}-)(?=[\p{L}\p{N}])|(?<=\p{N}-)(?=\p{L})/u).filter(w => w);
    const parent = n.parentElement;
    if (!words.length || !parent || skipped(parent) || parent.closest('select, textarea') || !rendered(parent)) continue;
    const ps = cs(parent);
    if (ps.whiteSpace === 'nowrap' || ps.whiteSpace === 'pre') continue;
    let box = parent;
    while (box.parentElement && ['inline', 'contents'].includes(cs(box).display)) box = box.parentElement;
    const bs = cs(box);
    const width = box.clientWidth - parseFloat(bs.paddingLeft) - parseFloat(bs.paddingRight);
    if (box.clientWidth === 0) continue;
    let widest = 0, word = '';
    for (const w of words) { const m = widthOf(ps, w); if (m > widest) { widest = m; word = w; } }
    const need = Math.min(widest, 12 * widthOf(ps, '0'));
    if (width + 2 < need && !seen.has(box)) {
      seen.add(box);
      add('squeezed', box, 'text box ' + px(width) + ' px wide, needs ' + px(need) + ' px (widest word "' + word.slice(0, 40) + '" is ' + px(widest) + ' px)');
    }
  }
  probe.remove();
  return out;
})`

// rowLike matches what tells rows of a table apart in a selector: the
// row's place, a number in an id.
var rowLike = regexp.MustCompile(`(tr:nth-of-type\()\d+|(#[\w-]*?-)\d+`)

// routePattern is a cabinet URL's route: numbers and long ids in the path
// become {id}, the query is dropped.
func routePattern(u *url.URL) string {
	segs := strings.Split(u.Path, "/")
	for i, s := range segs {
		if regexp.MustCompile(`^\d+$`).MatchString(s) || (len(s) >= 8 && regexp.MustCompile(`^[A-Za-z0-9_-]+$`).MatchString(s) && strings.ContainsAny(s, "0123456789")) {
			segs[i] = "{id}"
		}
	}
	return strings.Join(segs, "/")
}

// cabinetRoutes reads the GET routes the cabinet registers from its source,
// so a page added by anyone is measured (or the test says it was not reached).
func cabinetRoutes(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("cabinet", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`"GET (/cabinet/[^"\s]*)"`)
	var routes []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			r := strings.ReplaceAll(m[1], "{$}", "")
			token := strings.Contains(r, "{token}")
			r = regexp.MustCompile(`\{[^}]+\}`).ReplaceAllString(r, "{id}")
			last := r[strings.LastIndex(r, "/")+1:]
			if strings.HasPrefix(r, "/cabinet/static/") || strings.Contains(last, ".") {
				continue // files and downloads, not pages
			}
			if token && !slices.Contains(fitMustVisit, r) {
				continue // a one-time link's page: no link leads there, fitMustVisit names those opened
			}
			routes = append(routes, r)
		}
	}
	return routes
}

// crawlable tells whether a link found on a page leads to a cabinet page
// the crawl should open: same origin, under /cabinet/, not a download, not
// a static file, not a sign-in link.
func crawlable(base *url.URL, href string, download bool) (*url.URL, bool) {
	u, err := url.Parse(href)
	if err != nil || download || u.Host != base.Host || u.Scheme != base.Scheme || !strings.HasPrefix(u.Path, "/cabinet/") {
		return nil, false
	}
	last := u.Path[strings.LastIndex(u.Path, "/")+1:]
	if strings.Contains(last, ".") || strings.HasPrefix(u.Path, "/cabinet/static/") || strings.HasPrefix(u.Path, "/cabinet/link/") ||
		u.Path == "/cabinet/signout" {
		return nil, false
	}
	u.Fragment = ""
	return u, true
}

// TestCabinetPagesFit signs in as the owner of a company with long names,
// many keys, a long request log, webhook endpoints with long URLs, door
// scans and a refused catalog file, opens every cabinet page (crawling the
// links from the menu on) at 1280 and 390 px, and fails on anything that
// does not fit (see measureFit). Screenshots go to
// .data/artifacts/cabinet/fit.
func TestCabinetPagesFit(t *testing.T) {
	start := time.Now()
	f := newFixture(t)
	withOutbox(t, f)
	f.StartWorker(t)
	ctx := context.Background()
	a := f.companyA
	now := time.Now().UTC()

	// An event with a long title at a venue with a long name.
	f.Import(t, a, []byte(fmt.Sprintf(`{"cities": [{"ref": "fit-city", "name": "Saint Petersburg"}],
	  "venues": [{"ref": "fit-hall", "name": "Great Hall of the Saint Petersburg State Conservatory named after N. A. Rimsky-Korsakov", "city": "fit-city", "timezone": "Europe/Moscow"}],
	  "events": [{"ref": "fit-rehearsal", "title": %q, "slug": "fit-rehearsal", "status": "published", "starts_at": "2030-01-01T19:00:00+03:00",
	    "venue": "fit-hall", "fee": {"mode": "separate", "rate_bp": 500, "min_fee": 0},
	    "categories": [{"ref": "fit-ga", "name": "General admission, standing, left balcony wing", "price": 150000, "capacity": 200}]}]}`, fitEventTitle)))

	// A partner key with every partner scope and a long name.
	prod, prodID := f.Key(t, a, apikey.Production)
	if _, err := f.DB.NewRaw("UPDATE api_keys SET name = ? WHERE id = ?", fitKeyName, prodID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	// A door key at one event and a long gate.
	event := f.ids["swan-lake"]
	gate := fitGate
	key, hash, prefix := apikey.Generate(apikey.Production)
	if _, err := store.CreateAPIKey(ctx, f.DB, a, apikey.Production, fitKeyName+" door", hash, prefix,
		[]string{apikey.ScopeCheckin}, store.DoorLimits{EventID: &event, Gate: &gate}, store.KeyClaim{}); err != nil {
		t.Fatal(err)
	}
	door := key
	for i := range 6 { // many keys, one revoked
		_, id := f.Key(t, a, []string{apikey.Sandbox, apikey.Production}[i%2], apikey.PartnerScopes[:1+i%len(apikey.PartnerScopes)]...)
		if i == 4 {
			if _, err := f.DB.NewRaw("UPDATE api_keys SET revoked_at = now(), name = ? WHERE id = ?", fitKeyName+" (old)", id).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}

	// A Russian organizer's real data: 80-character Cyrillic titles,
	// prices in millions, 56 orders (more than a page), some refunded in
	// part; made before the orders below, which the crawl opens first.
	realOrders(t, f, a, prod, 56)

	// A webhook endpoint with a long URL that answers 500 with a long body,
	// created before the orders so their events are delivered (and fail).
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"error":"upstream_partner_ticketing_integration_temporarily_unavailable","detail":"` + strings.Repeat("x", 300) + `"}`))
	}))
	t.Cleanup(hook.Close)
	hookURL := hook.URL + "/partner-integration/api/v2/ticketing/webhooks/receive/organizer-acme-festival-2026?signature_version=v1&tenant=acme-festival-productions"
	// A production endpoint (https, on a host of its own: made in the
	// store, not resolved) that was disabled after failing for days.
	reason := "failing since 2026-11-20 12:00 UTC: every attempt for 72 hours ended with HTTP 503 Service Unavailable"
	failing := now.Add(-72 * time.Hour)
	if err := store.CreateWebhookEndpoint(ctx, f.DB, &store.WebhookEndpoint{CompanyID: a,
		URL:         "https://hooks.partner-ticketing-agency.example.com/integrations/ticketsales/v2/webhooks/production/organizer-acme-festival-productions-2026",
		Description: "Production storefront at the partner agency", Secret: "whsec_fit", FailingSince: &failing, DisabledAt: &now, DisabledReason: &reason,
		EventTypes: []string{"order.paid", "order.cancelled", "order.refunded", "order.deleted", "ticket.checked_in"}}, 10); err != nil {
		t.Fatal(err)
	}
	if res := f.createEndpoint(t, f.keyA, fmt.Sprintf(`{"url": %q, "event_types": ["order.paid", "order.cancelled", "order.refunded", "ticket.checked_in", "reservation.expired"], "description": %q}`,
		hookURL, "Test storefront at the partner agency, staging data centre (failover: the production endpoint)")); res.Status != http.StatusCreated {
		t.Fatalf("create endpoint: %d %s", res.Status, res.Body)
	}

	// Orders of a buyer with a long name and e-mail, one refunded in part,
	// and, the newest, one not paid: the list is newest first and the crawl
	// opens its first two orders, so the refunded one (with a refunds table
	// and the refund and resend links) and the unpaid one (the cancel link).
	buyer := fmt.Sprintf(`{"email": %q, "first_name": %q, "last_name": %q, "phone": "+7 999 123-45-67"}`, fitBuyerEmail, fitBuyerFirst, fitBuyerLast)
	var tickets []ticket
	for i, seats := range [][]string{{"parterre-3-10", "parterre-3-11", "balcony-1-1"}, {"parterre-2-10", "parterre-2-11"}, {"parterre-2-12"}, {"parterre-2-13"}} {
		prod := prod
		if i == 2 {
			prod = f.keyA // a sandbox order: its events go to the sandbox endpoint
		}
		var r reservationBody
		if res := f.reserve(t, prod, seats...); res.Status != http.StatusCreated {
			t.Fatalf("reserve: %d %s", res.Status, res.Body)
		} else {
			res.Decode(t, &r)
		}
		var ob orderBody
		// The longest reference and metadata, tokens without a space.
		res := f.Do(t, http.MethodPost, "/v1/orders", prod, fmt.Sprintf(`{"event_id": %d, "reservation_id": %q, "customer": %s, "payment": "external",
			"reference": %q, "metadata": {%q: %q, "cart": "c-1"}}`,
			event, r.Data.ID, buyer, strings.Repeat("Щ", 60)+fmt.Sprintf("-%03d", i), strings.Repeat("k", 40), strings.Repeat("Ж", 500)), idemKey(t))
		if res.Status != http.StatusCreated {
			t.Fatalf("order: %d %s", res.Status, res.Body)
		}
		res.Decode(t, &ob)
		if i == 3 { // reserved and ordered, never paid: it can be cancelled
			break
		}
		if res := f.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/confirm", ob.Data.ID), prod,
			fmt.Sprintf(`{"external_payment_id": "pi_3PzLongExternalPaymentIdentifier_%d_from_the_partner_gateway", "paid_amount": %d}`, ob.Data.ID, ob.Data.Amount.Amount),
			idemKey(t)); res.Status != http.StatusOK {
			t.Fatalf("confirm: %d %s", res.Status, res.Body)
		}
		var ts struct{ Data []ticket }
		f.Get(t, fmt.Sprintf("/v1/orders/%d/tickets", ob.Data.ID), prod).Decode(t, &ts)
		tickets = append(tickets, ts.Data...)
		if i == 1 { // the second order: refund one ticket
			if res := f.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/refund", ob.Data.ID), prod,
				fmt.Sprintf(`{"ticket_ids": [%d], "reason": "the buyer cannot come"}`, ts.Data[1].ID), idemKey(t)); res.Status >= 300 {
				t.Fatalf("refund: %d %s", res.Status, res.Body)
			}
		}
	}
	// Scans at the door: admitted, a copy at the same gate, an unknown one.
	for _, s := range []struct{ barcode, want string }{{tickets[2].Barcode, "admitted"}, {tickets[3].Barcode, "admitted"},
		{tickets[2].Barcode, "already_checked_in"}, {"4006381333931", "unknown"}} {
		if got := f.scan(t, door, event, s.barcode, fitGate); got.Data.Outcome != s.want {
			t.Fatalf("scan: %+v, want %s", got.Data, s.want)
		}
	}

	// A request log with long paths and queries.
	var entries []store.RequestLogEntry
	for i := range 60 {
		e := store.RequestLogEntry{RequestID: fmt.Sprintf("req_01JD3X7Q9V8K2M4N6P8R%04d", i), CompanyID: &a, APIKeyID: &prodID,
			Method: "GET", Path: fmt.Sprintf("/v1/events/%d/seats?category=parterre-left-wing-row-12&available=true&include=prices,holds&cursor=eyJpZCI6MTIzNDU2Nzg5MH0%d", event, i),
			Status: []int{200, 404, 409, 422, 429, 503}[i%6], DurationUS: int64(1500 + i*9731), CreatedAt: now.Add(-time.Duration(i) * time.Minute)}
		if i%5 == 0 {
			e.Method, e.Path = "POST", fmt.Sprintf("/aggregator/v1/orders/agg-ord-7f3e9c2a-5b1d-4e8f-9a6c-0d2b4f6e8a1c-%d/confirm-payment", i)
		}
		entries = append(entries, e)
	}
	if err := store.InsertRequestLog(ctx, f.DB, entries); err != nil {
		t.Fatal(err)
	}
	// The failing endpoint has tried at least once.
	for deadline := time.Now().Add(20 * time.Second); ; {
		var n int
		if err := f.DB.NewRaw("SELECT count(*) FROM webhook_attempts").Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no webhook delivery was attempted")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The audit log with long, Cyrillic rows.
	actx := store.WithActor(ctx, store.Actor{Kind: store.ActorTicketctl, Label: "ticketctl"})
	if err := store.Audit(actx, f.DB, store.AuditEntry{CompanyID: a, Action: store.AuditOrderRefund, Subject: "order 987654321012 " + fitEventTitle,
		Detail: map[string]any{"reason": "Покупатель не может прийти: заболел ребёнок, просит вернуть деньги за оба билета в партер", "amount": 1250000000,
			"ticket_ids": []int64{1234567, 1234568, 1234569, 1234570}, "refund_id": "rf_0123456789abcdef0123456789abcdef"}}); err != nil {
		t.Fatal(err)
	}
	t.Logf("fixture ready in %s", time.Since(start).Round(time.Millisecond))

	base := f.ProductionLikeAPI(t)
	baseURL, _ := url.Parse(base)
	link := cabinetUser(t, f.Stack, base, a, "owner.with.a.rather.long.address@festival-productions.example.com")
	// A second member, so the team page has a Remove link and its form.
	_ = cabinetUserAs(t, f.Stack, base, a, "box-office.support.desk@festival-productions.example.com", organizer.RoleSupport)
	// The support member has an authenticator: the team page shows it
	// and its Reset.
	if _, err := f.DB.ExecContext(ctx, `INSERT INTO cabinet_two_factor (email, sealed_secret, confirmed_at)
		VALUES ('box-office.support.desk@festival-productions.example.com', '\x00', now())`); err != nil {
		t.Fatal(err)
	}
	bctx := newBrowser(t, 3*time.Minute)
	artifacts := filepath.Join("..", ".data", "artifacts", "cabinet", "fit")
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(bctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}

	type anchor struct {
		Href     string `json:"href"`
		Download bool   `json:"download"`
	}
	measured := map[string]bool{}
	width := 0 // index into fitWidths of the viewport now
	var violations []string
	// measure checks the page open now at both widths (the current one
	// first, so the viewport changes once a page) and saves screenshots.
	measure := func(route string) {
		t.Helper()
		name := strings.Trim(regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(strings.TrimPrefix(route, "/cabinet/")), "-"), "-")
		if measured[route] {
			name += "-2"
		}
		measured[route] = true
		began := time.Now()
		defer func() { t.Logf("%s measured in %s", route, time.Since(began).Round(time.Millisecond)) }()
		for i := range fitWidths {
			vp := fitWidths[(width+i)%len(fitWidths)]
			if i > 0 {
				run(vp.name+" px", chromedp.EmulateViewport(vp.w, vp.h, vp.opts...))
			}
			if os.Getenv("FIT_DEBUG") != "" {
				cols, _ := chromedp.Run(bctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('table'), t => t.id + ': ' + Array.from(t.rows[0].cells, c => c.textContent.trim().slice(0, 12) + '=' + Math.round(c.getBoundingClientRect().width)).join(' '))`))
				t.Logf("%s at %s: %q", route, vp.name, cols)
			}
			got, err := chromedp.Run(bctx, chromedp.Evaluate[[]fitViolation](fmt.Sprintf("%s(%d)", measureFit, vp.w)))
			if err != nil {
				t.Fatalf("measure %s at %s px: %v", route, vp.name, err)
			}
			// One line for a rule broken the same way in many rows.
			rows := map[string]int{}
			for _, v := range got {
				like := v.Rule + ": " + rowLike.ReplaceAllString(v.Selector, "${1}${2}N")
				if rows[like]++; rows[like] == 1 {
					violations = append(violations, fmt.Sprintf("%s at %s px: %s: %s: %s (%q)", route, vp.name, v.Rule, v.Selector, v.Detail, v.Text))
				}
			}
			for k, n := range rows {
				if n > 1 {
					violations = append(violations, fmt.Sprintf("%s at %s px: %s: and %d more rows alike", route, vp.name, k, n-1))
				}
			}
			for _, a := range testenv.AxeViolations(t, bctx) {
				violations = append(violations, fmt.Sprintf("%s at %s px: accessibility: %s", route, vp.name, a))
			}
			shot, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatalf("screenshot %s: %v", route, err)
			}
			if err := os.WriteFile(filepath.Join(artifacts, name+"-"+vp.name+".png"), shot, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		width = (width + len(fitWidths) - 1) % len(fitWidths)
	}
	open := func(u string) int64 {
		t.Helper()
		res, err := chromedp.RunResponse(bctx, chromedp.Navigate(u))
		if err != nil {
			t.Fatalf("open %s: %v", u, err)
		}
		return res.Status
	}

	// The sign-in link's page, then the report.
	if st := open(link); st != http.StatusOK {
		t.Fatalf("sign-in link: %d", st)
	}
	measure("/cabinet/link/{id}")
	run("set the password", chromedp.SendKeys(chromedp.CSS("#password"), cabinetPassword), chromedp.SendKeys(chromedp.CSS("#password_again"), cabinetPassword))
	if res, err := chromedp.RunResponse(bctx, chromedp.Click(chromedp.CSS("#set-password"))); err != nil || res.Status != http.StatusOK {
		t.Fatalf("set the password: %v %v", res, err)
	}

	// Crawl: every same-origin cabinet link, one page per route.
	// A route with an id is opened twice (two orders, two endpoints):
	// one may have what the other lacks (deliveries, refunds) and links
	// to pages only it has.
	queue := []string{base + "/cabinet/"}
	queued := map[string]int{"/cabinet/": 1}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		st := open(u)
		loc, err := chromedp.Run(bctx, chromedp.Evaluate[string](`location.href`))
		if err != nil {
			t.Fatal(err)
		}
		lu, _ := url.Parse(loc)
		pu, _ := url.Parse(u)
		route := routePattern(lu)
		if st != http.StatusOK {
			t.Logf("%s answers %d: a link in the cabinet leads nowhere", u, st)
			route = fmt.Sprintf("%s (%d)", route, st)
		}
		if !measured[route] || strings.Contains(route, "{id}") {
			measure(route)
		}
		measured[routePattern(pu)] = true
		links, err := chromedp.Run(bctx, chromedp.Evaluate[[]anchor](`Array.from(document.querySelectorAll('a[href]'), a => ({href: a.href, download: a.hasAttribute('download')}))`))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range links {
			if nu, ok := crawlable(baseURL, l.Href, l.Download); ok && (queued[routePattern(nu)] == 0 ||
				queued[routePattern(nu)] == 1 && strings.Contains(routePattern(nu), "{id}") && !slices.Contains(queue, nu.String())) {
				queued[routePattern(nu)]++
				queue = append(queue, nu.String())
			}
		}
		if len(queued) > 60 {
			t.Fatalf("the crawl found more than 60 routes: %v", queued)
		}
	}

	// Pages that are answers to a form: a key just created (shown once),
	// a refused catalog file with its errors.
	if open(base+"/cabinet/keys") != http.StatusOK {
		t.Fatal("keys page")
	}
	run("name a key", chromedp.Click(chromedp.CSS("#env-production")), chromedp.SendKeys(chromedp.CSS("#key-name"), fitKeyName+", the second one"))
	// The answer shows the key once (201), or redirects to a page that does (200).
	res, err := chromedp.RunResponse(bctx, chromedp.Click(chromedp.CSS("#create-key")))
	if err != nil || (res.Status != http.StatusCreated && res.Status != http.StatusOK) {
		t.Fatalf("create a key: %v %v", res, err)
	}
	if ru, err := url.Parse(res.URL); err == nil {
		measured[routePattern(ru)] = true
	}
	measure("POST /cabinet/keys")

	// The door desk with tickets found: one admitted (the undo form),
	// others valid (the admit form), one refunded; and in the refused
	// scans a manual admission of the refunded one, with a long reason.
	var ownerID int64
	if err := f.DB.NewRaw("SELECT id FROM cabinet_users WHERE company_id = ? AND role = 'owner' ORDER BY id LIMIT 1", a).Scan(ctx, &ownerID); err != nil {
		t.Fatal(err)
	}
	if res, err := checkin.Admit(ctx, f.DB, checkin.ManualInput{CompanyID: a, UserID: ownerID, EventID: event, TicketID: tickets[4].ID,
		Gate: fitGate, Reason: "Покупатель показал чек и паспорт, сканер на северном входе не читает экран телефона — впустить по списку"}); err != nil ||
		res.Outcome != states.ScanVoid {
		t.Fatalf("manual admission of the refunded ticket: %+v %v", res, err)
	}
	if open(fmt.Sprintf("%s/cabinet/door?event=%d&q=%s", base, event, url.QueryEscape(fitBuyerLast))) != http.StatusOK {
		t.Fatal("door desk")
	}
	measure("/cabinet/door")
	// A lost scanner's key replaced: the confirmation, then the new key.
	run("open the replacement", chromedp.Navigate(base+"/cabinet/door"), chromedp.WaitVisible(chromedp.CSS("#door-keys")))
	href, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.querySelector('#door-keys a[id^="replace-"]').href`))
	if err != nil {
		t.Fatal(err)
	}
	if open(href) != http.StatusOK {
		t.Fatal("replace confirmation")
	}
	if res, err := chromedp.RunResponse(bctx, chromedp.Click(chromedp.CSS("#confirm-replace"))); err != nil || res.Status != http.StatusOK {
		t.Fatalf("replace a door key: %v %v", res, err)
	}
	measure("/cabinet/door/keys/created")
	bad := filepath.Join(t.TempDir(), "bad-catalog.json")
	if err := os.WriteFile(bad, []byte(`{"cities": [{"ref": "ekb", "name": "Yekaterinburg"}],
	  "events": [{"ref": "new-show-with-a-long-reference-that-goes-on", "title": "", "slug": "new-show", "status": "published", "starts_at": "2030-01-01T20:00:00+05:00",
	    "venue": "a-venue-reference-nobody-defined-in-this-file-or-before", "fee": {"mode": "separate", "rate_bp": 500, "min_fee": 0},
	    "categories": [{"ref": "ga", "name": "GA", "price": -5, "capacity": 10}, {"ref": "vip", "name": "VIP", "price": 5, "capacity": -1}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if open(base+"/cabinet/catalog") != http.StatusOK {
		t.Fatal("catalog page")
	}
	run("choose the file", chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{bad}))
	if res, err := chromedp.RunResponse(bctx, chromedp.Click(chromedp.CSS("#upload"))); err != nil || res.Status != http.StatusUnprocessableEntity {
		t.Fatalf("upload a bad file: %v %v", res, err)
	}
	measure("POST /cabinet/catalog")
	if st := open(base + "/cabinet/no-such-page"); st != http.StatusNotFound {
		t.Fatalf("an unknown page: %d", st)
	}
	measure("404")
	// Two-factor sign-in: enrolment confirmed shows the recovery codes
	// once; then signing in asks for a code.
	if open(base+"/cabinet/account/two-factor") != http.StatusOK {
		t.Fatal("the two-factor page")
	}
	secret, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.querySelector('#two-factor-secret').textContent.replaceAll(' ', '')`))
	if err != nil {
		t.Fatal(err)
	}
	code, err := totp.GenerateCodeCustom(secret, time.Now(), totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatal(err)
	}
	run("the current password", chromedp.SendKeys(chromedp.CSS("#current_password"), cabinetPassword))
	run("the app's code", chromedp.SendKeys(chromedp.CSS("#code"), code))
	if res, err := chromedp.RunResponse(bctx, chromedp.Click(chromedp.CSS("#two-factor-confirm-button"))); err != nil || res.Status != http.StatusOK {
		t.Fatalf("confirm two-factor: %v %v", res, err)
	}
	measure("POST /cabinet/account/two-factor")
	if open(base+"/cabinet/report") != http.StatusOK {
		t.Fatal("report page")
	}
	if res, err := chromedp.RunResponse(bctx, chromedp.Click(chromedp.CSS("#signout"))); err != nil || res.Status != http.StatusOK {
		t.Fatalf("sign out: %v %v", res, err)
	}
	measure("/cabinet/signin")
	run("sign in again", chromedp.SendKeys(chromedp.CSS("#email"), "owner.with.a.rather.long.address@festival-productions.example.com"),
		chromedp.SendKeys(chromedp.CSS("#password"), cabinetPassword))
	if res, err := chromedp.RunResponse(bctx, chromedp.Click(chromedp.CSS("#signin"))); err != nil || res.Status != http.StatusOK ||
		!strings.HasSuffix(res.URL, "/cabinet/signin/code") {
		t.Fatalf("sign in with two-factor: %v %v", res, err)
	}
	measure("/cabinet/signin/code")

	// Every page the cabinet has was measured.
	var missed []string
	for _, r := range append(slices.Clone(fitMustVisit), cabinetRoutes(t)...) {
		if !measured[r] {
			missed = append(missed, r)
		}
	}
	if len(missed) > 0 {
		t.Errorf("the crawl did not reach %v (measured %v)", missed, mapKeys(measured))
	}
	for _, v := range violations {
		t.Error(v)
	}
	t.Logf("measured %d pages at %d widths in %s", len(measured), len(fitWidths), time.Since(start).Round(time.Millisecond))
}

func mapKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

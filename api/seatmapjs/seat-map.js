// <ticket-seat-map>: the ticket sales service's seat map for a partner's shop.
// One file, no dependencies, no build step (ES2020). It reads an event's hall
// from GET {base-url}/seat-map/v1/events/{event-id}/scheme and keeps it live
// from …/availability (ETag, 304), lets the buyer pick free seats and hands
// the pick to the page as events. It never holds seats and never sees the
// partner's API key: `token` is a short-lived seat-map token, or absent when
// base-url is the partner's own proxy of those two paths.
// Guide: docs/seat-map.md. Source of truth: api/seatmapjs/seat-map.js (the copy
// in sdk/ts/seat-map is checked to be equal).
(() => {
  'use strict';
  if (typeof customElements === 'undefined' || customElements.get('ticket-seat-map')) return;

  const SVG = 'http://www.w3.org/2000/svg';
  const WORDS = {
    en: {
      map: 'Seat map', row: 'row', seat: 'seat', unavailable: 'unavailable', yours: 'held for you',
      zoomIn: 'Zoom in', zoomOut: 'Zoom out', fit: 'Show the whole hall', legend: 'Prices',
      picked: 'Picked', taken: 'Unavailable', held: 'Held for you', quantity: 'Seats',
      best: 'Best available', anyCategory: 'Any category', category: 'Category',
      summary: (n, sum) => n === 0 ? 'No seats picked' : `${n} ${n === 1 ? 'seat' : 'seats'} picked, ${sum}`,
      max: (n) => `At most ${n} seats`, lost: (l) => `No longer available: ${l}`,
      loading: 'Loading the hall…', failed: 'The seat map could not be loaded.', fee: 'with fee',
      hint: 'Arrow keys move between seats, Enter or Space picks, Escape clears the pick.',
    },
    ru: {
      map: 'Схема зала', row: 'ряд', seat: 'место', unavailable: 'недоступно', yours: 'забронировано для вас',
      zoomIn: 'Приблизить', zoomOut: 'Отдалить', fit: 'Показать весь зал', legend: 'Цены',
      picked: 'Выбрано', taken: 'Недоступно', held: 'Забронировано для вас', quantity: 'Мест',
      best: 'Лучшие места', anyCategory: 'Любая категория', category: 'Категория',
      summary: (n, sum) => n === 0 ? 'Места не выбраны' : `Выбрано мест: ${n}, ${sum}`,
      max: (n) => `Не больше ${n} мест`, lost: (l) => `Уже недоступно: ${l}`,
      loading: 'Загружаем схему зала…', failed: 'Не удалось загрузить схему зала.', fee: 'со сбором',
      hint: 'Стрелки — соседние места, Enter или пробел — выбрать, Escape — сбросить выбор.',
    },
  };
  // Category colours: distinct under the common colour-vision deficiencies
  // (Okabe–Ito), overridable with --ticket-seat-map-category-N.
  const PALETTE = ['#0072b2', '#e69f00', '#009e73', '#cc79a7', '#56b4e9', '#d55e00', '#7a6a00', '#882255'];

  const CSS = `
:host { display: block; position: relative; font: 14px/1.4 var(--ticket-seat-map-font, system-ui, sans-serif);
  color: var(--ticket-seat-map-text, #1d2330); min-width: 0; max-width: 100%; }
* { box-sizing: border-box; }
.wrap { display: flex; flex-direction: column; gap: 8px; min-width: 0; container-type: inline-size; }
.stage-box { position: relative; min-width: 0;
  height: var(--ticket-seat-map-height, clamp(240px, calc(100cqw * var(--ratio, 0.6)), min(70vh, 720px)));
  background: var(--ticket-seat-map-background, #fff); border: 1px solid var(--ticket-seat-map-border, #c8cdd6);
  border-radius: 8px; overflow: hidden; }
svg.map { display: block; overflow: hidden; width: 100%; height: 100%; touch-action: none; user-select: none; -webkit-user-select: none; cursor: grab; }
svg.map.dragging { cursor: grabbing; }
svg.map:focus { outline: none; }
.s { fill: var(--ticket-seat-map-unavailable, #d3d7de); }
.s.f { cursor: pointer; }
.s.p { fill: var(--ticket-seat-map-picked, #1d2330) !important; stroke: var(--ticket-seat-map-picked-ring, #ffbf00); stroke-width: 0.14; }
.s.h { fill: var(--ticket-seat-map-held, #6b3fa0) !important; }
.s:focus { outline: none; }
.s:focus-visible, .s.kf { stroke: var(--ticket-seat-map-focus, #d00000); stroke-width: 0.2; }
.zone { fill: var(--ticket-seat-map-zone, #f3f5f8); stroke: var(--ticket-seat-map-zone-line, #b9c0cc); stroke-width: 0.06; }
.stage { fill: var(--ticket-seat-map-stage, #3b4252); }
.stage-label { fill: var(--ticket-seat-map-stage-text, #fff); font-size: 0.9px; font-weight: 600; }
.zone-label { fill: var(--ticket-seat-map-text, #1d2330); font-size: 0.9px; font-weight: 600; }
.row-label { fill: var(--ticket-seat-map-muted, #4a5263); font-size: 0.55px; }
text { text-anchor: middle; dominant-baseline: central; pointer-events: none; }
.tools { position: absolute; right: 8px; top: 8px; display: flex; flex-direction: column; gap: 4px; }
button, input, select { font: inherit; color: inherit; }
.tools button { width: 36px; height: 36px; border-radius: 6px; border: 1px solid #8a93a3; background: #fff;
  font-size: 20px; line-height: 1; cursor: pointer; }
button:focus-visible, input:focus-visible, select:focus-visible, svg.map:focus-visible { outline: 3px solid var(--ticket-seat-map-focus, #d00000); outline-offset: 1px; }
.msg { position: absolute; inset: 0; display: flex; align-items: center; justify-content: center; padding: 16px; text-align: center; background: #fffc; }
.msg[hidden] { display: none; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; margin: 0; padding: 0; list-style: none; }
.legend li { display: flex; align-items: center; gap: 6px; min-width: 0; overflow-wrap: anywhere; }
.sw { flex: none; width: 14px; height: 14px; border-radius: 50%; background: var(--c); }
.sw.p { box-shadow: 0 0 0 2px var(--ticket-seat-map-picked-ring, #ffbf00) inset; }
.bar { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 12px; }
.bar .summary { flex: 1 1 180px; font-weight: 600; }
.best { display: flex; flex-wrap: wrap; align-items: center; gap: 6px; }
.best input { width: 4.5em; padding: 6px; border: 1px solid #8a93a3; border-radius: 6px; }
.best select { max-width: 14em; padding: 6px; border: 1px solid #8a93a3; border-radius: 6px; background: #fff; }
.best button { padding: 7px 12px; border-radius: 6px; border: 1px solid var(--ticket-seat-map-accent, #0b5cad);
  background: var(--ticket-seat-map-accent, #0b5cad); color: #fff; cursor: pointer; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
`;

  const num = (v, d) => { const n = Number(v); return Number.isFinite(n) && n > 0 ? n : d; };
  const pt = (p) => `${p[0]},${p[1]}`;
  const el = (ns, name, attrs) => {
    const e = ns ? document.createElementNS(ns, name) : document.createElement(name);
    if (attrs) for (const k in attrs) e.setAttribute(k, attrs[k]);
    return e;
  };

  class TicketSeatMap extends HTMLElement {
    static get observedAttributes() { return ['base-url', 'event-id', 'token', 'poll-interval', 'max-seats', 'lang']; }

    constructor() {
      super();
      this._token = null;
      this._seats = new Map(); // seat_id → seat
      this._picked = new Map(); // seat_id → seat, in pick order
      this._held = new Set(); // seat_ids markHeld gave
      this._cats = new Map(); // ticket_category_id → {id, price, available, name?, price_total?}
      this._names = new Map(); // category id → what the page set (categories)
      this._etag = '';
      this._since = true; // name the state held as ?since= (false once a proxy refused it)
      this._polling = null; // the poll under way: one at a time
      this._next = null; // the poll asked while one was under way
      this._timer = 0;
      this._gen = 0; // a load's generation: answers of an older one are dropped
      this._view = { s: 1, x: 0, y: 0 };
      this._frame = 0;
      this._focusSeat = null;
      this._pointers = new Map();
      const root = this.attachShadow({ mode: 'open' });
      // Constructed style sheets: a page's Content Security Policy without
      // style-src 'unsafe-inline' allows them (a <style> is the fallback).
      this._sheets = typeof CSSStyleSheet !== 'undefined' && 'replaceSync' in CSSStyleSheet.prototype && 'adoptedStyleSheets' in root;
      if (this._sheets) {
        const base = new CSSStyleSheet(); base.replaceSync(CSS);
        this._catSheet = new CSSStyleSheet();
        root.adoptedStyleSheets = [base, this._catSheet];
      }
      root.innerHTML = `${this._sheets ? '' : `<style>${CSS}</style>`}<div class="wrap">
<div class="stage-box"><svg class="map" xmlns="${SVG}"><g class="view"></g></svg>
<div class="tools"><button type="button" data-z="in">+</button><button type="button" data-z="out">−</button><button type="button" data-z="fit">⤢</button></div>
<div class="msg" role="status"></div></div>
<p class="sr hint"></p>
<div class="bar"><span class="summary" aria-live="polite"></span>
<form class="best"><label><span class="q"></span> <input type="number" name="quantity" min="1" value="2" inputmode="numeric"></label>
<select name="category" hidden></select><button type="submit"></button></form></div>
<ul class="legend"></ul><p class="sr live" aria-live="assertive"></p></div>`;
      this._svg = root.querySelector('svg');
      this._box = root.querySelector('.stage-box');
      this._g = root.querySelector('g.view');
      this._msg = root.querySelector('.msg');
      this._summary = root.querySelector('.summary');
      this._legend = root.querySelector('.legend');
      this._live = root.querySelector('.live');
      this._best = root.querySelector('form.best');
      this._bindInput();
    }

    // ---- attributes and properties ----
    get baseUrl() { return (this.getAttribute('base-url') || '').replace(/\/+$/, ''); }
    get eventId() { return this.getAttribute('event-id') || ''; }
    get token() { return this._token !== null ? this._token : this.getAttribute('token'); }
    set token(v) {
      this._token = v == null ? null : String(v);
      // A new token after a 401 resumes at once.
      if (this._stalled && this.isConnected) { this._stalled = false; this._ready ? this._poll() : this._load(); }
    }
    get pollInterval() { return num(this.getAttribute('poll-interval'), 5); }
    get maxSeats() { return Math.floor(num(this.getAttribute('max-seats'), 10)); }
    // selectedSeats: the buyer's pick as seatmap:change reports it.
    get selectedSeats() { return [...this._picked.values()].map((s) => this._out(s)); }
    get heldSeats() { return [...this._held].map((id) => this._seats.get(id)).filter(Boolean).map((s) => this._out(s)); }
    // categories: names (and the fee) of the event's categories, as the
    // partner's server reads them from GET /v1/events/{id}/categories.
    set categories(list) {
      this._names = new Map((list || []).map((c) => [Number(c.id != null ? c.id : c.ticket_category_id), c]));
      if (this._ready) { this._drawLegend(); this._relabelAll(); }
    }
    get categories() { return [...this._names.values()]; }

    connectedCallback() {
      this._words();
      if (!this._ro && typeof ResizeObserver !== 'undefined') {
        this._ro = new ResizeObserver(() => this._resized());
        this._ro.observe(this._box);
      }
      this._load();
    }
    disconnectedCallback() { this._stop(); }
    attributeChangedCallback(name, old, val) {
      if (old === val || !this.isConnected) return;
      if (name === 'base-url' || name === 'event-id') this._load();
      else if (name === 'token') this.token = val;
      else if (name === 'poll-interval') this._schedule();
      else if (name === 'lang') { this._words(); if (this._ready) { this._relabelAll(); this._drawLegend(); this._announceSummary(); } }
      else if (name === 'max-seats') this._best.quantity.max = String(this.maxSeats);
    }

    // ---- methods ----
    clear() {
      if (!this._picked.size) return;
      const was = [...this._picked.values()];
      this._picked.clear();
      for (const s of was) this._paint(s);
      this._changed('clear');
    }
    // markHeld(seats): seats the partner's server holds for this buyer
    // ([{seat_id}], e.g. a reservation's seats). They are drawn as held for
    // the buyer, leave the pick, and stay so until markHeld([]) or
    // another markHeld.
    markHeld(seats) {
      const ids = new Set((seats || []).map((s) => typeof s === 'string' ? s : s.seat_id));
      const before = [...this._held];
      this._held = ids;
      let dropped = false;
      for (const id of ids) if (this._picked.delete(id)) dropped = true;
      for (const id of before) { const s = this._seats.get(id); if (s) this._paint(s); }
      for (const id of ids) { const s = this._seats.get(id); if (s) this._paint(s); }
      if (dropped) this._changed('held');
    }
    refresh() { return this._ready ? this._poll() : this._load(); }
    zoomIn() { this._zoomAt(1.5); }
    zoomOut() { this._zoomAt(1 / 1.5); }
    fit() { this._fit(); }

    // ---- loading and polling ----
    _stop() { clearTimeout(this._timer); this._timer = 0; this._gen++; }
    _schedule(wait, now) {
      clearTimeout(this._timer);
      if (!this.isConnected || this._stalled || !this._ready) return;
      this._timer = setTimeout(() => this._poll(), now ? 0 : Math.max(wait || 0, this.pollInterval) * 1000);
    }
    async _fetch(path, etag, since) {
      const headers = { Accept: 'application/json' };
      const token = this.token;
      if (token) headers.Authorization = 'Bearer ' + token;
      if (etag) headers['If-None-Match'] = etag;
      const query = since ? '?since=' + since : '';
      // no-store: the If-None-Match is ours, so a 304 reaches this code.
      return fetch(`${this.baseUrl}/seat-map/v1/events/${encodeURIComponent(this.eventId)}/${path}${query}`, { headers, cache: 'no-store', credentials: 'omit' });
    }
    async _failed(res) {
      let code = '';
      try { code = (await res.json()).code || ''; } catch (_) { /* not a problem body */ }
      this._emit('seatmap:error', { status: res.status, code });
      if (res.status === 401 || res.status === 403) this._stalled = true; // until a new token
    }
    async _load() {
      this._stop();
      const gen = this._gen;
      this._ready = false;
      this._etag = '';
      this._since = true; // another base-url or event: try since again
      this._next = null;
      if (!this.eventId) return;
      this._message(this._w.loading);
      try {
        const [sres, ares] = await Promise.all([this._fetch('scheme'), this._fetch('availability')]);
        if (gen !== this._gen) return;
        if (!sres.ok) { await this._failed(sres); this._message(this._w.failed); return; }
        if (!ares.ok) { await this._failed(ares); this._message(this._w.failed); return; }
        const scheme = (await sres.json()).data;
        const avail = (await ares.json()).data;
        if (gen !== this._gen) return;
        this._etag = ares.headers.get('ETag') || '';
        this._draw(scheme);
        this._apply(avail, true);
        this._ready = true;
        this._message('');
        this._fit();
        this._emit('seatmap:ready', { seat_count: this._seats.size });
      } catch (err) {
        if (gen !== this._gen) return;
        this._emit('seatmap:error', { status: 0, code: 'network', message: String(err && err.message || err) });
        this._message(this._w.failed);
        this._timer = setTimeout(() => this._load(), this.pollInterval * 1000);
        return;
      }
      this._schedule();
    }
    _poll() {
      // One poll at a time, so answers never cross (a change is applied to
      // the state it was computed from). A read asked during one (refresh,
      // a new token) follows it at once: its reason may postdate that
      // poll's request.
      const gen = this._gen;
      if (this._polling && this._polling.gen === gen) {
        if (!this._next) {
          const q = this._polling.then(() => {
            if (this._next === q) this._next = null;
            if (gen === this._gen && this._ready) return this._poll();
          });
          this._next = q;
        }
        return this._next;
      }
      const p = this._pollOnce().finally(() => { if (this._polling === p) this._polling = null; });
      p.gen = gen; // a reload's polls do not wait for an older one's
      this._polling = p;
      return p;
    }
    async _pollOnce() {
      clearTimeout(this._timer);
      const gen = this._gen;
      const etag = this._etag;
      // The service's own ETag also names what this map holds, so a change
      // is answered with the changed seats alone (a proxy's ETag of another
      // form is only sent back as If-None-Match).
      const own = this._since && /^"([0-9a-f]{32})"$/.exec(etag);
      const since = own ? own[1] : '';
      let wait = 0;
      try {
        const res = await this._fetch('availability', etag, since);
        if (gen !== this._gen) return;
        if (res.status === 200) {
          const avail = (await res.json()).data;
          if (gen !== this._gen) return;
          if (avail.since && avail.since !== since) {
            // Changes since a state this map does not hold (a proxy's cache
            // that ignores the query): ask for the whole list, at once
            // unless this was that ask.
            this._etag = '';
            this._schedule(0, Boolean(since));
            return;
          }
          this._etag = res.headers.get('ETag') || '';
          this._apply(avail, false);
        } else if (since && (res.status === 400 || res.status === 422)) {
          // A proxy that refuses the query: poll as before it existed.
          this._since = false;
          this._schedule(0, true);
          return;
        } else if (res.status !== 304) {
          await this._failed(res);
          // 429: the service's budget per address and token; wait as told.
          if (res.status === 429 || res.status === 503) wait = Number(res.headers.get('Retry-After')) || 0;
        }
      } catch (err) {
        if (gen !== this._gen) return;
        this._emit('seatmap:error', { status: 0, code: 'network', message: String(err && err.message || err) });
      }
      this._schedule(wait);
    }

    // ---- drawing ----
    _draw(scheme) {
      const g = this._g;
      g.textContent = '';
      this._seats.clear();
      this._picked.clear();
      this._focusSeat = null;
      this._bounds = scheme.bounds || { x: 0, y: 0, width: 1, height: 1 };
      // The box takes the hall's proportions (within limits), so a wide
      // hall on a phone does not float in an empty tall box.
      this._box.style.setProperty('--ratio', String(Math.min(2, Math.max(0.3, this._bounds.height / this._bounds.width))));
      const frag = document.createDocumentFragment();
      const back = el(SVG, 'g'); const seatsG = el(SVG, 'g'); const labels = el(SVG, 'g', { 'aria-hidden': 'true' });
      const st = scheme.stage;
      if (st && st.outline && st.outline.length) {
        back.appendChild(el(SVG, 'polygon', { class: 'stage', points: st.outline.map(pt).join(' ') }));
        if (st.label && st.label_at) labels.appendChild(this._text(st.label, st.label_at, 'stage-label'));
      }
      for (const z of scheme.zones || []) {
        if (z.outline && z.outline.length) back.appendChild(el(SVG, 'polygon', { class: 'zone', points: z.outline.map(pt).join(' ') }));
        if (z.name && z.label_at) labels.appendChild(this._text(z.name, z.label_at, 'zone-label'));
        const rot = Number(z.rotation) || 0;
        for (const r of z.rows || []) {
          for (const p of r.label_points || []) {
            const t = this._text(r.row, p, 'row-label');
            if (rot) t.setAttribute('transform', `rotate(${rot} ${p[0]} ${p[1]})`);
            labels.appendChild(t);
          }
          for (const s of r.seats || []) {
            const c = el(SVG, 'circle', { cx: s.x, cy: s.y, r: 0.42, role: 'checkbox', class: 's' });
            const seat = { id: s.seat_id, zone: z.id, zoneName: z.name || z.id, row: r.row, number: s.number, x: s.x, y: s.y, el: c, status: '', cat: null, price: null };
            c._seat = seat;
            this._seats.set(seat.id, seat);
            seatsG.appendChild(c);
          }
        }
      }
      frag.append(back, labels, seatsG);
      g.appendChild(frag);
      this._svg.setAttribute('role', 'group');
      this._summaryText();
    }
    _text(s, at, cls) {
      const t = el(SVG, 'text', { x: at[0], y: at[1], class: cls });
      t.textContent = s;
      return t;
    }
    // _apply takes an availability answer: only seats whose status, category
    // or price changed are repainted. An answer with since lists only the
    // seats changed since the state this map holds; one without lists
    // every seat for sale.
    _apply(avail, first) {
      const changes = !first && Boolean(avail.since);
      const cats = new Map();
      for (const c of avail.categories || []) cats.set(Number(c.ticket_category_id), c);
      const catsChanged = first || !sameCats(this._cats, cats);
      this._cats = cats;
      if (catsChanged) this._catIndex = new Map([...cats.keys()].sort((a, b) => a - b).map((id, i) => [id, i]));
      const seen = new Set();
      const lost = [];
      for (const a of avail.seats || []) {
        const s = this._seats.get(a.seat_id);
        if (!s) continue;
        seen.add(s);
        const price = a.price || null;
        const cat = Number(a.ticket_category_id);
        if (!first && !catsChanged && s.status === a.status && s.cat === cat && samePrice(s.price, price)) continue;
        s.status = a.status; s.cat = cat; s.price = price;
        if (a.status !== 'free' && this._picked.delete(s.id)) lost.push(s);
        this._paint(s);
      }
      // A seat left out of a whole answer is not for sale to this key
      // (another channel's); left out of changes, it is as it was, though
      // a category change repaints it.
      for (const s of this._seats.values()) {
        if (seen.has(s)) continue;
        if (changes) { if (catsChanged) this._paint(s); continue; }
        if (s.status === 'none' && !first && !catsChanged) continue;
        s.status = 'none'; s.cat = null; s.price = null;
        if (this._picked.delete(s.id)) lost.push(s);
        this._paint(s);
      }
      if (catsChanged) this._drawLegend();
      if (lost.length) {
        this._live.textContent = this._w.lost(lost.map((s) => this._name(s, false)).join('; '));
        this._changed('taken', lost);
      } else if (first) {
        this._summaryText();
      }
      if (first && !this._focusSeat) this._setFocus(this._firstFree(), false);
    }
    _paint(s) {
      const c = s.el;
      let cls = 's';
      const held = this._held.has(s.id);
      if (held) cls += ' h';
      else if (s.status === 'free') {
        cls += ' f c' + (this._catIndex.get(s.cat) % PALETTE.length);
        if (this._picked.has(s.id)) cls += ' p';
      }
      if (s === this._focusSeat && this._kbd) cls += ' kf';
      c.setAttribute('class', cls);
      c.setAttribute('aria-checked', this._picked.has(s.id) || held ? 'true' : 'false');
      if (s.status === 'free' && !held) c.removeAttribute('aria-disabled'); else c.setAttribute('aria-disabled', 'true');
      c.setAttribute('aria-label', this._name(s, true));
    }
    _relabelAll() { for (const s of this._seats.values()) s.el.setAttribute('aria-label', this._name(s, true)); }
    // _name is the seat's accessible name: "Партер, ряд 5, место 12, 3 500 ₽".
    _name(s, withState) {
      const w = this._w;
      let n = `${s.zoneName}, ${w.row} ${s.row}, ${w.seat} ${s.number}`;
      const pay = this._pays(s.cat, s.price);
      if (s.status === 'free' && pay) n += `, ${this._money(pay)}`;
      if (withState && this._held.has(s.id)) n += `, ${w.yours}`;
      else if (withState && s.status !== 'free') n += `, ${w.unavailable}`;
      return n;
    }
    // _pays is what a buyer pays for one ticket: the price the API states,
    // or price_total (price and fee) when the category's answer gives it.
    _pays(cat, price) {
      const info = this._names.get(cat) || this._cats.get(cat);
      const total = info && info.price_total;
      if (total && price && info.price && info.price.amount === price.amount) return total;
      return price;
    }
    _money(m) {
      if (!m) return '';
      try {
        return new Intl.NumberFormat(this._lang, { style: 'currency', currency: m.currency, minimumFractionDigits: m.amount % 100 ? 2 : 0, maximumFractionDigits: 2 }).format(m.amount / 100);
      } catch (_) { return `${(m.amount / 100).toFixed(2)} ${m.currency}`; }
    }
    _drawLegend() {
      const w = this._w;
      const ul = this._legend;
      ul.textContent = '';
      const sel = this._best.category;
      sel.textContent = '';
      sel.appendChild(new Option(w.anyCategory, ''));
      const zonesOf = new Map();
      for (const s of this._seats.values()) {
        if (s.cat == null) continue;
        if (!zonesOf.has(s.cat)) zonesOf.set(s.cat, new Set());
        zonesOf.get(s.cat).add(s.zoneName);
      }
      const rules = [];
      for (const [id, i] of this._catIndex) {
        const c = this._cats.get(id);
        const named = this._names.get(id);
        const name = (named && named.name) || [...(zonesOf.get(id) || [])].slice(0, 3).join(' · ') || `${w.category} ${i + 1}`;
        const colour = `var(--ticket-seat-map-category-${i}, ${PALETTE[i % PALETTE.length]})`;
        if (i < PALETTE.length) rules.push(`.s.c${i} { fill: ${colour}; }`);
        const li = el(null, 'li');
        const sw = el(null, 'span', { class: 'sw', 'aria-hidden': 'true' });
        sw.style.setProperty('--c', colour);
        const pay = this._pays(id, c.price);
        const text = `${name}: ${this._money(pay)}${pay !== c.price ? ` (${w.fee})` : ''}`;
        li.append(sw, text);
        ul.appendChild(li);
        sel.appendChild(new Option(`${name}, ${this._money(pay)}`, String(id)));
      }
      for (const [cls, label, colour] of [['p', w.picked, 'var(--ticket-seat-map-picked, #1d2330)'], ['', w.taken, 'var(--ticket-seat-map-unavailable, #d3d7de)'], ['', w.held, 'var(--ticket-seat-map-held, #6b3fa0)']]) {
        const li = el(null, 'li');
        const sw = el(null, 'span', { class: 'sw ' + cls, 'aria-hidden': 'true' });
        sw.style.setProperty('--c', colour);
        li.append(sw, label);
        ul.appendChild(li);
      }
      sel.hidden = this._catIndex.size < 2;
      if (this._sheets) this._catSheet.replaceSync(rules.join('\n'));
      else {
        let style = this.shadowRoot.querySelector('style.cats');
        if (!style) { style = el(null, 'style', { class: 'cats' }); this.shadowRoot.appendChild(style); }
        style.textContent = rules.join('\n');
      }
    }
    _summaryText() {
      const seats = [...this._picked.values()];
      this._summary.textContent = this._w.summary(seats.length, this._money(this._total(seats)) || '0');
    }
    _announceSummary() { this._summaryText(); }
    _total(seats) {
      if (!seats.length) return null;
      let amount = 0; let currency = '';
      for (const s of seats) { const p = this._pays(s.cat, s.price); if (p) { amount += p.amount; currency = p.currency; } }
      return { amount, currency };
    }
    _out(s) {
      return { zone_id: s.zone, seat_id: s.id, label: this._name(s, false), category_id: s.cat, price: s.price ? { ...s.price } : null };
    }
    _changed(reason, dropped) {
      this._summaryText();
      const seats = [...this._picked.values()];
      const detail = { seats: seats.map((s) => this._out(s)), total: this._total(seats) || { amount: 0, currency: (this._cats.values().next().value || { price: { currency: '' } }).price.currency }, reason };
      if (dropped) detail.dropped = dropped.map((s) => this._out(s));
      this._emit('seatmap:change', detail);
    }
    _emit(type, detail) { this.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true })); }
    _message(text) { this._msg.textContent = text; this._msg.hidden = !text; }
    _words() {
      const lang = (this.getAttribute('lang') || (this.closest('[lang]') || document.documentElement).getAttribute('lang') || 'en').toLowerCase();
      this._lang = lang;
      this._w = WORDS[lang.slice(0, 2)] || WORDS.en;
      const w = this._w; const r = this.shadowRoot;
      this._svg.setAttribute('aria-label', w.map);
      this._svg.setAttribute('aria-describedby', 'hint');
      r.querySelector('.hint').id = 'hint';
      r.querySelector('.hint').textContent = w.hint;
      r.querySelector('[data-z=in]').setAttribute('aria-label', w.zoomIn);
      r.querySelector('[data-z=out]').setAttribute('aria-label', w.zoomOut);
      r.querySelector('[data-z=fit]').setAttribute('aria-label', w.fit);
      r.querySelector('.q').textContent = w.quantity;
      this._best.category.setAttribute('aria-label', w.category);
      this._best.querySelector('button').textContent = w.best;
      this._best.quantity.max = String(this.maxSeats);
      this._legend.setAttribute('aria-label', w.legend);
    }

    // ---- picking ----
    _toggle(s) {
      if (!s || s.status !== 'free' || this._held.has(s.id)) return;
      if (this._picked.has(s.id)) this._picked.delete(s.id);
      else if (this._picked.size >= this.maxSeats) { this._live.textContent = this._w.max(this.maxSeats); return; }
      else this._picked.set(s.id, s);
      this._paint(s);
      this._changed(this._picked.has(s.id) ? 'pick' : 'unpick');
    }
    _firstFree() {
      let best = null;
      for (const s of this._seats.values()) if (s.status === 'free' && (!best || s.y < best.y - 1e-9 || (Math.abs(s.y - best.y) < 1e-9 && Math.abs(s.x) < Math.abs(best.x)))) best = s;
      return best || this._seats.values().next().value || null;
    }
    // _setFocus makes s the map's one tab stop (roving tabindex).
    _setFocus(s, focus) {
      const old = this._focusSeat;
      this._focusSeat = s;
      if (old && old !== s) { old.el.removeAttribute('tabindex'); this._paint(old); }
      if (!s) { this._svg.setAttribute('tabindex', '0'); return; }
      // -1: not a tab stop of its own (Chromium would make the clipped svg
      // one, as a scroller), the seat is.
      this._svg.setAttribute('tabindex', '-1');
      s.el.setAttribute('tabindex', '0');
      this._paint(s);
      if (focus) { s.el.focus({ preventScroll: true }); this._reveal(s); }
    }
    // _near finds the seat nearest s in a direction: ahead along the axis,
    // with sideways distance costing more, so a row is walked along.
    _near(s, dx, dy) {
      let best = null; let bestScore = Infinity;
      for (const o of this._seats.values()) {
        if (o === s) continue;
        const ax = (o.x - s.x) * dx + (o.y - s.y) * dy;
        if (ax <= 0.05) continue;
        const side = Math.abs((o.x - s.x) * dy - (o.y - s.y) * dx);
        if (side > ax * 2 + 0.6) continue;
        const score = ax + side * 3;
        if (score < bestScore) { bestScore = score; best = o; }
      }
      return best;
    }
    _bindInput() {
      const svg = this._svg;
      const r = this.shadowRoot;
      r.querySelector('.tools').addEventListener('click', (e) => {
        const b = e.target.closest('button'); if (!b) return;
        if (b.dataset.z === 'in') this.zoomIn(); else if (b.dataset.z === 'out') this.zoomOut(); else this.fit();
      });
      this._best.addEventListener('submit', (e) => {
        e.preventDefault();
        const q = Math.max(1, Math.min(this.maxSeats, Math.floor(Number(this._best.quantity.value) || 1)));
        this._best.quantity.value = String(q);
        const detail = { quantity: q };
        const cat = this._best.category.value;
        if (cat) detail.category_id = Number(cat);
        this._emit('seatmap:best-available', detail);
      });
      svg.addEventListener('keydown', (e) => {
        const s = this._focusSeat;
        const dirs = { ArrowRight: [1, 0], ArrowLeft: [-1, 0], ArrowDown: [0, 1], ArrowUp: [0, -1] };
        if (dirs[e.key] && s) {
          e.preventDefault();
          this._kbd = true;
          const n = this._near(s, dirs[e.key][0], dirs[e.key][1]);
          if (n) this._setFocus(n, true);
        } else if ((e.key === 'Enter' || e.key === ' ') && s) {
          e.preventDefault(); this._kbd = true; this._toggle(s);
        } else if (e.key === 'Escape') { this.clear(); }
        else if (e.key === '+' || e.key === '=') { e.preventDefault(); this.zoomIn(); }
        else if (e.key === '-') { e.preventDefault(); this.zoomOut(); }
        else if (e.key === '0') { e.preventDefault(); this.fit(); }
      });
      svg.addEventListener('focusin', (e) => { if (e.target._seat && e.target._seat !== this._focusSeat) this._setFocus(e.target._seat, false); });
      // Pointers: a press that does not move picks; one that moves pans;
      // two pinch. The view's transform is set once per frame.
      svg.addEventListener('pointerdown', (e) => {
        if (e.button !== 0 && e.pointerType === 'mouse') return;
        this._kbd = false;
        this._rect = svg.getBoundingClientRect();
        this._pointers.set(e.pointerId, { x: e.clientX, y: e.clientY, x0: e.clientX, y0: e.clientY, target: e.target });
        try { svg.setPointerCapture(e.pointerId); } catch (_) { /* synthetic */ }
        this._moved = this._pointers.size > 1 ? true : this._moved && this._pointers.size > 1;
        if (this._pointers.size === 1) this._moved = false;
      });
      svg.addEventListener('pointermove', (e) => {
        const p = this._pointers.get(e.pointerId); if (!p) return;
        const v = this._view;
        if (this._pointers.size === 2) {
          const [a, b] = [...this._pointers.values()];
          const d0 = Math.hypot(a.x - b.x, a.y - b.y);
          p.x = e.clientX; p.y = e.clientY;
          const d1 = Math.hypot(a.x - b.x, a.y - b.y);
          if (d0 > 0) this._zoomAt(d1 / d0, (a.x + b.x) / 2 - this._rect.left, (a.y + b.y) / 2 - this._rect.top);
          this._moved = true;
          return;
        }
        const dx = e.clientX - p.x; const dy = e.clientY - p.y;
        p.x = e.clientX; p.y = e.clientY;
        if (!this._moved && Math.hypot(p.x - p.x0, p.y - p.y0) < 5) return;
        if (!this._moved) { this._moved = true; svg.classList.add('dragging'); }
        v.x += dx; v.y += dy;
        this._frameView();
      });
      const up = (e) => {
        const p = this._pointers.get(e.pointerId); if (!p) return;
        this._pointers.delete(e.pointerId);
        svg.classList.remove('dragging');
        if (e.type === 'pointerup' && !this._moved && this._pointers.size === 0 && p.target && p.target._seat) {
          this._setFocus(p.target._seat, false);
          this._toggle(p.target._seat);
        }
      };
      svg.addEventListener('pointerup', up);
      svg.addEventListener('pointercancel', up);
      svg.addEventListener('wheel', (e) => {
        e.preventDefault();
        const rect = this._rect = svg.getBoundingClientRect();
        const k = Math.exp(-(e.deltaMode === 1 ? e.deltaY * 16 : e.deltaY) * 0.0015);
        this._zoomAt(k, e.clientX - rect.left, e.clientY - rect.top);
      }, { passive: false });
    }

    // ---- view ----
    // _size reads the map's box: once per fit or resize, never per frame.
    _size() {
      const r = this._box.getBoundingClientRect();
      return { w: r.width - 2, h: r.height - 2 };
    }
    _resized() {
      const { w, h } = this._size();
      if (this._ready && this._fitted && (Math.abs(w - this._lastW) > 0.5 || Math.abs(h - this._lastH) > 0.5)) this._fit();
    }
    _fit() {
      const b = this._bounds; if (!b) return;
      const { w, h } = this._size();
      this._lastW = w; this._lastH = h;
      this._fitted = true;
      if (w <= 0 || h <= 0) return; // not laid out yet: the resize observer fits it
      // The zoom buttons keep a 48 px strip on the right clear of seats.
      const fw = Math.max(w / 2, w - 48);
      const s = Math.min(fw / b.width, h / b.height);
      this._minScale = s * 0.5;
      this._view = { s, x: (fw - b.width * s) / 2 - b.x * s, y: (h - b.height * s) / 2 - b.y * s };
      this._frameView();
    }
    _zoomAt(k, cx, cy) {
      const v = this._view;
      if (cx === undefined) { const { w, h } = this._size(); cx = w / 2; cy = h / 2; }
      const s = Math.max(this._minScale || 0.01, Math.min(v.s * k, 120));
      const f = s / v.s;
      v.x = cx - (cx - v.x) * f; v.y = cy - (cy - v.y) * f; v.s = s;
      this._fitted = false;
      this._frameView();
    }
    _reveal(seat) {
      const v = this._view; const { w, h } = this._size();
      const px = seat.x * v.s + v.x; const py = seat.y * v.s + v.y; const m = Math.max(24, v.s);
      if (px < m) v.x += m - px; else if (px > w - m) v.x -= px - (w - m);
      if (py < m) v.y += m - py; else if (py > h - m) v.y -= py - (h - m);
      this._frameView();
    }
    _frameView() {
      if (this._frame) return;
      this._frame = requestAnimationFrame(() => {
        this._frame = 0;
        const v = this._view;
        this._g.setAttribute('transform', `translate(${v.x} ${v.y}) scale(${v.s})`);
      });
    }
  }

  function samePrice(a, b) { return (!a && !b) || (a && b && a.amount === b.amount && a.currency === b.currency); }
  function sameCats(a, b) {
    if (a.size !== b.size) return false;
    for (const [id, c] of b) { const o = a.get(id); if (!o || !samePrice(o.price, c.price)) return false; }
    return true;
  }

  customElements.define('ticket-seat-map', TicketSeatMap);
})();

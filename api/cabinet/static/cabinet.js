// The cabinet works without this script; it only adds the copy buttons,
// refreshes the check-in page's figures in place, and selects seats on
// the hall map.
document.addEventListener('click', (ev) => {
  const b = ev.target.closest('button[data-copy]');
  if (!b) return;
  const input = document.getElementById(b.dataset.copy);
  if (!input) return;
  input.focus();
  input.select();
  const done = () => { b.textContent = 'Copied'; };
  let copied = false;
  try { copied = document.execCommand('copy'); } catch (e) { copied = false; }
  if (copied) { done(); return; }
  if (navigator.clipboard) {
    navigator.clipboard.writeText(input.value).then(done, () => { b.textContent = 'Selected: press Ctrl+C'; });
  } else {
    b.textContent = 'Selected: press Ctrl+C';
  }
});

// The check-in page's figures (#door-live) refresh themselves while the
// page is in view: the same page is fetched from this origin and its
// figures swapped in; a hidden tab asks nothing. Without the script the
// page's Refresh link does the same.
(() => {
  const live = document.getElementById('door-live');
  const every = live ? Number(live.dataset.refresh) : 0;
  if (!live || !(every > 0) || !window.fetch || !window.DOMParser) return;
  let busy = false;
  const refresh = async () => {
    if (busy || document.visibilityState !== 'visible') return;
    busy = true;
    try {
      const res = await fetch(location.href, { credentials: 'same-origin', headers: { 'Accept': 'text/html' } });
      if (!res.ok) return;
      const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
      const fresh = doc.getElementById('door-live');
      const now = document.getElementById('door-live');
      if (fresh && now) now.replaceWith(document.importNode(fresh, true));
    } catch (e) {
      // Offline or signed out: the figures stay as they are.
    } finally {
      busy = false;
    }
  };
  setInterval(refresh, every * 1000);
  document.addEventListener('visibilitychange', refresh);
})();

// The refund form says the money back before its button: when a ticket is
// ticked or unticked the same page is asked (GET, pick=1) for the amount
// the refund rule gives, and its line swapped in. Without the script the
// form's "Show the amount" button does the same.
(() => {
  const form = document.getElementById('refund-form');
  if (!form || !window.fetch || !window.DOMParser) return;
  const show = document.getElementById('show-amount');
  let asked = 0;
  form.addEventListener('change', async (ev) => {
    if (!ev.target.matches('input[type=checkbox]')) return;
    const q = new URLSearchParams(new FormData(form));
    q.delete('token');
    q.set('pick', '1');
    const n = ++asked;
    try {
      const res = await fetch(form.getAttribute('action') + '?' + q, { credentials: 'same-origin', headers: { 'Accept': 'text/html' } });
      if (!res.ok || n !== asked) return;
      const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
      const fresh = doc.getElementById('refund-amount');
      const now = document.getElementById('refund-amount');
      if (fresh && now) now.replaceWith(document.importNode(fresh, true));
    } catch (e) {
      // Offline or signed out: the button still shows the amount.
    }
  });
  if (show) show.hidden = true;
})();

// The hall map (#hall-map): a click on a seat, a rectangle dragged over
// seats (mouse or pen; a finger pans the map), or a click on a zone's or
// a row's name selects seats into the form's seat list, which is sent as
// it would be typed without the script. A second click unselects; a zone
// or row whose seats are all selected is unselected whole.
(() => {
  const svg = document.getElementById('hall-map');
  const list = svg && document.getElementById(svg.dataset.seats);
  if (!svg || !list || !svg.getScreenCTM) return;
  const count = document.getElementById('map-count');
  const seats = new Map();
  svg.querySelectorAll('circle[data-seat]').forEach((c) => seats.set(c.dataset.seat, c));
  let selected = new Set();
  const show = () => {
    list.value = Array.from(selected).join(' ');
    if (count) count.textContent = selected.size === 0 ? 'No seats selected.' : (selected.size === 1 ? '1 seat selected.' : selected.size + ' seats selected.');
  };
  const set = (id, on) => {
    const c = seats.get(id);
    if (!c) return;
    if (on) selected.add(id); else selected.delete(id);
    c.classList.toggle('sel', on);
  };
  const fromList = () => {
    const ids = new Set(list.value.split(/[\s,;]+/).filter(Boolean));
    selected.forEach((id) => { if (!ids.has(id)) set(id, false); });
    ids.forEach((id) => set(id, true));
    selected = ids;
    if (count) count.textContent = selected.size === 1 ? '1 seat selected.' : selected.size + ' seats selected.';
  };
  list.addEventListener('input', fromList);
  fromList();
  const toggleAll = (group) => {
    const ids = Array.from(group.querySelectorAll('circle[data-seat]'), (c) => c.dataset.seat);
    const on = !ids.every((id) => selected.has(id));
    ids.forEach((id) => set(id, on));
  };
  const at = (ev) => {
    const p = svg.createSVGPoint();
    p.x = ev.clientX; p.y = ev.clientY;
    return p.matrixTransform(svg.getScreenCTM().inverse());
  };
  let drag = null;
  svg.addEventListener('pointerdown', (ev) => {
    if (ev.pointerType === 'touch' || ev.button !== 0) return;
    drag = { x: ev.clientX, y: ev.clientY, from: at(ev), box: null };
  });
  svg.addEventListener('pointermove', (ev) => {
    if (!drag) return;
    if (!drag.box) {
      if (Math.abs(ev.clientX - drag.x) + Math.abs(ev.clientY - drag.y) < 6) return;
      drag.box = document.createElementNS('http://www.w3.org/2000/svg', 'rect');
      drag.box.setAttribute('class', 'drag-box');
      svg.appendChild(drag.box);
      svg.setPointerCapture(ev.pointerId);
    }
    const p = at(ev);
    drag.rect = { x0: Math.min(p.x, drag.from.x), y0: Math.min(p.y, drag.from.y), x1: Math.max(p.x, drag.from.x), y1: Math.max(p.y, drag.from.y) };
    drag.box.setAttribute('x', drag.rect.x0);
    drag.box.setAttribute('y', drag.rect.y0);
    drag.box.setAttribute('width', drag.rect.x1 - drag.rect.x0);
    drag.box.setAttribute('height', drag.rect.y1 - drag.rect.y0);
  });
  const end = (ev) => {
    const d = drag;
    drag = null;
    if (!d) return;
    if (!d.box) {
      const seat = ev.target.closest('circle[data-seat]');
      const label = ev.target.closest('[data-select]');
      if (seat) set(seat.dataset.seat, !selected.has(seat.dataset.seat));
      else if (label) toggleAll(label.closest(label.dataset.select === 'zone' ? 'g.zone' : 'g.row'));
      show();
      return;
    }
    d.box.remove();
    if (ev.type === 'pointercancel' || !d.rect) return;
    seats.forEach((c, id) => {
      const x = Number(c.getAttribute('cx')), y = Number(c.getAttribute('cy'));
      if (x >= d.rect.x0 && x <= d.rect.x1 && y >= d.rect.y0 && y <= d.rect.y1) set(id, true);
    });
    show();
  };
  svg.addEventListener('pointerup', end);
  svg.addEventListener('pointercancel', end);
  // A tap (touch) selects as a click does.
  svg.addEventListener('click', (ev) => {
    if (ev.pointerType !== 'touch') return;
    drag = { x: 0, y: 0, box: null };
    end(ev);
  });
})();

// The example shop's page (docs/example-shop.md). The seat map reads the
// hall from the service with the page's seat map token; everything that
// sells goes to this shop's own server, which holds the partner's key.
'use strict';

const map = document.querySelector('ticket-seat-map');
const $ = (id) => document.getElementById(id);
const lang = document.documentElement.lang || 'en';
const money = (m) => new Intl.NumberFormat(lang, {style: 'currency', currency: m.currency}).format(m.amount / 100);
let picked = [];
let holding = new Set(); // seats asked for while a hold is on its way
let holdTimer = 0;
let polling = false;

// The categories' names and prices with the fee, for the map's legend.
map.categories = JSON.parse($('categories').textContent);

// call asks the shop's server; a refusal throws with its problem's detail.
async function call(method, path, body) {
  const res = await fetch(path, {
    method,
    headers: body ? {'Content-Type': 'application/json'} : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) {
    const fields = (data.errors || []).map((e) => e.message).filter(Boolean);
    const text = (data.detail || `The shop answered ${res.status}.`) + (fields.length ? ` ${fields.join('; ')}.` : '');
    throw Object.assign(new Error(text), {problem: data});
  }
  return data;
}

function say(text) {
  $('status').textContent = text;
}

function list(ul, items) {
  ul.replaceChildren(...items.map((text) => Object.assign(document.createElement('li'), {textContent: text})));
}

function showPicked() {
  $('picked-text').textContent = picked.length
    ? `${picked.length} picked, ${money(picked.total)}: ${picked.map((s) => s.label).join('; ')}.`
    : $('held').hidden
      ? 'No seats picked yet: pick them on the map, or ask for the best available.'
      : 'To change your seats, pick others on the map and hold them instead.';
  $('hold').textContent = $('held').hidden ? 'Hold these seats' : 'Hold these instead';
  $('hold').disabled = picked.length === 0;
}

// The buyer picks on the map: show the pick and let them hold it.
map.addEventListener('seatmap:change', (e) => {
  picked = Object.assign(e.detail.seats, {total: e.detail.total});
  // Seats of a hold still on its way show as taken on the map's next
  // read; they are the buyer's own, so say nothing of them.
  const others = (e.detail.dropped || []).filter((s) => !holding.has(s.seat_id));
  if (e.detail.reason === 'taken' && others.length) {
    say(`Taken by someone else meanwhile: ${others.map((s) => s.label).join('; ')}.`);
  }
  showPicked();
});

$('hold').addEventListener('click', () => hold({seats: picked.map((s) => ({zone_id: s.zone_id, seat_id: s.seat_id}))}));

// The map's best-available button: the service picks the seats.
map.addEventListener('seatmap:best-available', (e) =>
  hold({best_available: {quantity: e.detail.quantity, category_id: e.detail.category_id}}));

// A token past its hour (401), or one of another event (403): ask the
// shop for a new one, the map goes on.
map.addEventListener('seatmap:error', async (e) => {
  if (e.detail.status !== 401 && e.detail.status !== 403) return;
  try {
    map.token = (await call('POST', '/api/seat-map-token')).token;
  } catch (err) {
    say(err.message);
  }
});

async function hold(body) {
  $('hold').disabled = true;
  holding = new Set((body.seats || []).map((s) => s.seat_id));
  say('Holding your seats…');
  try {
    const held = await call('POST', '/api/hold', body);
    map.markHeld(held.seats);
    list($('held-seats'), held.seats.map((s) => `${s.label}: ${money(s.price)}`));
    $('held-total').textContent = money(held.total_to_pay);
    $('held-fee').textContent = money(held.service_fee);
    $('held-until').dateTime = held.expires_at;
    $('held-until').textContent = new Date(held.expires_at).toLocaleTimeString(lang, {hour: '2-digit', minute: '2-digit'});
    $('held').hidden = false;
    clearTimeout(holdTimer);
    holdTimer = setTimeout(() => holdGone('Your hold ran out: the seats are back on sale. Choose again.'),
      new Date(held.expires_at) - Date.now());
    say(`${held.seats.length} seats held for you. Fill in your details to order them.`);
  } catch (err) {
    say(err.message);
    if (err.problem && err.problem.code === 'seat_taken') map.refresh();
  }
  holding = new Set();
  showPicked();
}

// holdGone forgets a hold that expired or was ordered: the map draws its
// seats as anyone's again.
function holdGone(text) {
  clearTimeout(holdTimer);
  map.markHeld([]);
  map.refresh();
  $('held').hidden = true;
  showPicked();
  if (text) say(text);
}

// The buyer's details: the shop orders the hold and shows the payment link.
$('buyer').addEventListener('submit', async (e) => {
  e.preventDefault();
  $('order').disabled = true;
  try {
    const order = await call('POST', '/api/order', Object.fromEntries(new FormData(e.target)));
    clearTimeout(holdTimer);
    $('held').hidden = true;
    showPicked();
    showOrders([order]);
    say('Your order is waiting for payment.');
    startPolling();
  } catch (err) {
    const code = err.problem && err.problem.code;
    if (code === 'reservation_expired' || code === 'invalid_state' || code === 'no_hold') holdGone();
    say(err.message);
  }
  $('order').disabled = false;
});

// showOrders shows the cart's orders: the payment link of the one waiting
// for payment, the tickets of those paid. It answers whether one waits.
function showOrders(orders) {
  const waiting = orders.find((o) => o.status === 'pending_payment');
  $('pay').hidden = !waiting;
  if (waiting) {
    $('order-id').textContent = `№ ${waiting.order_id}`;
    $('order-amount').textContent = money(waiting.amount);
    $('pay-link').href = waiting.payment_url;
  }
  const tickets = orders.flatMap((o) => o.tickets);
  $('ticket-list').replaceChildren(...tickets.map((t) => {
    const li = document.createElement('li');
    const a = Object.assign(document.createElement('a'), {href: t.order_url, textContent: `Ticket ${t.number}`});
    li.append(a, `: ${t.seat ? t.seat.label : 'general admission'}, ${money(t.price)}${t.status === 'refunded' ? ' (refunded)' : ''}`);
    return li;
  }));
  $('tickets').hidden = tickets.length === 0;
  return !!waiting;
}

function startPolling() {
  if (polling) return;
  polling = true;
  setTimeout(poll, 1000);
}

// poll reads the cart's orders until none waits for payment.
async function poll() {
  let orders;
  try {
    orders = (await call('GET', '/api/orders')).orders;
  } catch (err) {
    say(err.message);
    setTimeout(poll, 2000);
    return;
  }
  if (showOrders(orders)) {
    setTimeout(poll, 2000);
    return;
  }
  polling = false;
  if ($('held').hidden) map.markHeld([]); // else a new hold's seats stay drawn as the buyer's
  map.refresh();
  const last = orders[0];
  if (!last) say('Your order is no longer here. Choose your seats again.');
  else if (last.status === 'paid') say(`Paid. Your ${last.tickets.length} tickets are below.`);
  else if (last.status === 'cancelled') say('The order was cancelled: its time to pay ran out. Choose your seats again.');
  else if (last.status === 'refunded') say('The order was refunded.');
}

// A buyer who comes back (or reloads) sees their orders as they are now.
call('GET', '/api/orders').then(({orders}) => {
  if (showOrders(orders)) {
    say('Your order is waiting for payment.');
    startPolling();
  }
}, (err) => say(err.message));

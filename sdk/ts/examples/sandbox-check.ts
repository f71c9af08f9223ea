// The contract's sandbox check with @ticketsales/sdk and nothing else: from
// a sandbox key to tickets — a seated order from a reservation paid on the
// test gateway, a general-admission order and a scheduled order each
// confirmed as paid elsewhere, every order's tickets read back, and a full
// refund of one. Exits non-zero on the first thing that is not as the API promises.
//
//   TICKETS_URL=http://127.0.0.1:8080 TICKETS_KEY=tk_sandbox_… npm run sandbox-check
import { createTicketsClient, ok, ProblemError, type Order, type Schemas } from "@ticketsales/sdk";

const baseUrl = process.env.TICKETS_URL;
const apiKey = process.env.TICKETS_KEY;
if (!baseUrl || !apiKey) {
  console.error("set TICKETS_URL (the service) and TICKETS_KEY (a sandbox API key)");
  process.exit(2);
}
const tickets = createTicketsClient({ baseUrl, apiKey });
const buyer: Schemas["Customer"] = {
  email: "anna@example.com",
  first_name: "Anna",
  last_name: "Pavlova",
  phone: "+7 999 123-45-67",
};

function check(cond: unknown, what: string): asserts cond {
  if (!cond) throw new Error(what);
}

// The events on sale: a seated one, a general-admission one, a scheduled one.
const { data: events } = await ok(tickets.GET("/v1/events", { params: { query: { "filter.status": "published" } } }));
let seated: Schemas["Event"] | undefined;
let general: Schemas["Event"] | undefined;
let scheduled: { event: Schemas["Event"]; slot: number } | undefined;
for (const e of events) {
  if (e.has_scheme) {
    seated ??= e;
    continue;
  }
  const { data: sessions } = await ok(tickets.GET("/v1/sessions", { params: { query: { "filter.event_id": e.id } } }));
  const first = sessions[0];
  if (first) scheduled ??= { event: e, slot: first.id };
  else general ??= e;
}
check(seated && general && scheduled, "the catalog needs a seated, a general-admission and a scheduled event on sale");

// 1. Seated: a free seat from availability, held, ordered, paid on the test
// gateway (as a buyer would on its page), and the order polled until paid.
const { data: availability } = await ok(
  tickets.GET("/v1/events/{id}/availability", { params: { path: { id: seated.id } } }),
);
const seat = availability.seats.find((s) => s.status === "free");
check(seat, `event ${seated.id} has no free seat`);
const { data: hold } = await ok(
  tickets.POST("/v1/reservations", {
    body: { event_id: seated.id, seats: [{ zone_id: seat.zone_id, seat_id: seat.seat_id }], ttl_minutes: 15 },
  }),
);
console.log(`held ${seat.seat_id} of "${seated.title}" until ${hold.expires_at}`);
const { data: pending } = await ok(
  tickets.POST("/v1/orders", {
    body: { event_id: seated.id, reservation_id: hold.id, customer: buyer, payment: "gateway" },
  }),
);
check(pending.payment_url, `order ${pending.id} has no payment_url`);
const paid = await fetch(pending.payment_url, {
  method: "POST",
  body: new URLSearchParams({ action: "pay" }),
  redirect: "manual",
});
check(paid.status === 303, `test gateway: HTTP ${paid.status}`);
const seatedOrder = await tickets.waitForOrder(pending.id, { timeoutMs: 30_000 });
check(seatedOrder.status === "paid", `seated order ${seatedOrder.id} is ${seatedOrder.status}`);
console.log(`seated order ${seatedOrder.id}: paid on the test gateway, ${money(seatedOrder.amount)}`);
await ticketsOf(seatedOrder, true);

// 2. General admission: two tickets of a category, paid elsewhere (confirm).
const { data: gaCategories } = await ok(
  tickets.GET("/v1/events/{id}/categories", { params: { path: { id: general.id } } }),
);
const gaCategory = gaCategories[0];
check(gaCategory, `event ${general.id} has no ticket category`);
const gaOrder = await confirmed(
  "general admission",
  { event_id: general.id, items: [{ ticket_category_id: gaCategory.id, quantity: 2 }], customer: buyer, payment: "external" },
);
await ticketsOf(gaOrder, false);

// 3. Scheduled: one ticket of a session.
const { data: slotCategories } = await ok(
  tickets.GET("/v1/events/{id}/categories", { params: { path: { id: scheduled.event.id } } }),
);
const slotCategory = slotCategories[0];
check(slotCategory, `event ${scheduled.event.id} has no ticket category`);
const slotOrder = await confirmed("scheduled", {
  event_id: scheduled.event.id,
  schedule_slot_id: scheduled.slot,
  items: [{ ticket_category_id: slotCategory.id, quantity: 1 }],
  customer: buyer,
  payment: "external",
});
await ticketsOf(slotOrder, false);

// 4. A full refund of the general-admission order: its two tickets are void
// and their capacity on sale again. An order paid elsewhere is refunded at
// once (201, money_returned_by: external); a gateway order's refund may
// answer 202 while the gateway returns the money.
const { data: refund } = await ok(
  tickets.POST("/v1/orders/{id}/refund", { params: { path: { id: gaOrder.id } }, body: { reason: "buyer cannot come" } }),
);
check(refund.status === "completed" && refund.order_status === "refunded", `refund: ${refund.status}, order ${refund.order_status}`);
check(refund.amount.amount === gaOrder.amount.amount, `refund of ${money(refund.amount)}, paid ${money(gaOrder.amount)}`);
console.log(`refunded order ${gaOrder.id}: ${money(refund.amount)}, ${refund.status}, money returned by ${refund.money_returned_by}`);

// A second refund is refused as a problem: ProblemError carries its fields.
try {
  await ok(tickets.POST("/v1/orders/{id}/refund", { params: { path: { id: gaOrder.id } }, body: {} }));
  throw new Error("a second full refund succeeded");
} catch (e) {
  if (!(e instanceof ProblemError)) throw e;
  check(e.status === 409 && e.code === "invalid_state", `second refund: ${e.message}`);
  console.log(`a second refund is refused: ${e.status} ${e.code} (${e.request_id})`);
}
console.log("sandbox check passed");

/** confirmed creates an order paid elsewhere and confirms its payment. */
async function confirmed(what: string, body: Schemas["CreateOrderInputBody"]): Promise<Order> {
  const { data: created } = await ok(tickets.POST("/v1/orders", { body }));
  const { data: order } = await ok(
    tickets.POST("/v1/orders/{id}/confirm", {
      params: { path: { id: created.id } },
      body: { external_payment_id: `pay-${crypto.randomUUID()}`, paid_amount: created.amount.amount },
    }),
  );
  check(order.status === "paid", `${what} order ${order.id} is ${order.status} after confirm`);
  console.log(`${what} order ${order.id}: ${order.status}, ${money(order.amount)}`);
  return order;
}

/** ticketsOf checks a paid order's tickets: active, a test ticket's barcode, a seat exactly when seated. */
async function ticketsOf(order: Order, withSeat: boolean): Promise<void> {
  const { data: list } = await ok(tickets.GET("/v1/orders/{id}/tickets", { params: { path: { id: order.id } } }));
  check(list.length > 0, `order ${order.id} has no tickets`);
  for (const t of list) {
    check(
      t.status === "active" && /^2000\d{9}$/.test(t.barcode) && (t.seat !== null) === withSeat && t.is_test && t.order_url,
      `order ${order.id}: ticket ${JSON.stringify(t)}`,
    );
    console.log(`  ticket ${t.number} barcode ${t.barcode}${t.seat ? ` seat ${t.seat.seat_id}` : ""}`);
  }
}

function money(m: Schemas["Money"]): string {
  return `${(m.amount / 100).toFixed(2)} ${m.currency}`;
}

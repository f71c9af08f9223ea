// constructEvent: a delivery signed as the service signs it (the Standard
// Webhooks reference library) is verified and typed; a tampered body, an old
// or future timestamp, a wrong secret or id are refused.
// Run: npm test (the repository's test/sdk runs it in make test).
import assert from "node:assert/strict";
import { test } from "node:test";

import { Webhook } from "standardwebhooks";

import { constructEvent, WebhookVerificationError, type WebhookEvent, type WebhookEventType } from "@ticketsales/sdk";

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const other = "whsec_dGhlIG90aGVyIGVuZHBvaW50J3Mgc2VjcmV0IGtleQ==";
const paid = JSON.stringify({
  id: "evt_1",
  type: "order.paid",
  created_at: "2026-11-29T10:00:00Z",
  data: { id: 42, status: "paid", event_id: 7, is_test: true, payment: "external" },
  new_member: 1,
});

function headers(id: string, at: Date, body: string, ...secrets: string[]): Record<string, string> {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": secrets.map((s) => new Webhook(s).sign(id, at, body)).join(" "),
  };
}

// What a receiver writes: the switch narrows data by type.
function describe(event: WebhookEvent): string {
  switch (event.type) {
    case "order.paid":
      return `order ${event.data.id} ${event.data.status}`;
    case "ticket.checked_in":
      return `ticket ${event.data.ticket_number} at ${event.data.gate}`;
    default:
      return event.type;
  }
}

test("a signed delivery is verified and typed", () => {
  const event = constructEvent(paid, headers("evt_1", new Date(), paid, secret), secret);
  assert.equal(event.id, "evt_1");
  assert.equal(describe(event), "order 42 paid");
});

test("bytes, Fetch Headers and Node's headers are taken", () => {
  const h = headers("evt_1", new Date(), paid, secret);
  assert.equal(constructEvent(new TextEncoder().encode(paid), new Headers(h), secret).type, "order.paid");
  const node = { ...h, "Webhook-Id": undefined, "x-forwarded-for": ["10.0.0.1", "10.0.0.2"] };
  assert.equal(constructEvent(Buffer.from(paid), node, secret).type, "order.paid");
});

test("after a rotation either secret verifies", () => {
  const h = headers("evt_1", new Date(), paid, other, secret);
  for (const s of [other, secret]) assert.equal(constructEvent(paid, h, s).id, "evt_1");
});

test("refused: tampered, old, future, wrong secret, another id, no headers", () => {
  const now = Date.now();
  const cases: [string, string, Record<string, string>][] = [
    ["tampered body", paid + " ", headers("evt_1", new Date(now), paid, secret)],
    ["old timestamp", paid, headers("evt_1", new Date(now - 6 * 60_000), paid, secret)],
    ["future timestamp", paid, headers("evt_1", new Date(now + 6 * 60_000), paid, secret)],
    ["wrong secret", paid, headers("evt_1", new Date(now), paid, other)],
    ["another id", paid, headers("evt_2", new Date(now), paid, secret)],
    ["no headers", paid, {}],
  ];
  for (const [name, body, h] of cases) {
    assert.throws(() => constructEvent(body, h, secret), WebhookVerificationError, name);
  }
  for (const bad of ["", "whsec_", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"]) {
    assert.throws(() => constructEvent(paid, headers("evt_1", new Date(now), paid, secret), bad), TypeError, bad);
  }
});

test("the specification's vector: signed as expected, refused now as too old", () => {
  const id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
  const body = '{"test": 2432232314}';
  const h = headers(id, new Date(1614265330 * 1000), body, secret);
  assert.equal(h["webhook-signature"], "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  assert.throws(() => constructEvent(body, h, secret), /too old/);
});

// Every event type of the document is in the union (a type missing here or
// there fails to compile).
const everyType: Record<WebhookEventType, true> = {
  "order.created": true,
  "order.paid": true,
  "order.cancelled": true,
  "order.refunded": true,
  "order.deleted": true,
  "reservation.expired": true,
  "ticket.checked_in": true,
  "ticket.check_in_conflict": true,
  "allocation.changed": true,
  "webhook.test": true,
};
test("the union has every event type", () => assert.equal(Object.keys(everyType).length, 10));

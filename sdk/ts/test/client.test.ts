// The client's own behaviour against a real HTTP server on loopback that
// answers as the API does when it refuses: retries with the same
// Idempotency-Key after Retry-After, ProblemError's fields, waitForOrder.
// Run: npm test (the repository's test/sdk runs it in make test).
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";

import { createTicketsClient, ok, ProblemError } from "@ticketsales/sdk";

type Seen = { method: string; url: string; headers: IncomingMessage["headers"]; body: string; at: number };
let seen: Seen[] = [];
let answer: (req: Seen, n: number, res: ServerResponse) => void = () => {};
let baseUrl = "";
const server = createServer((req, res) => {
  let body = "";
  req.on("data", (c: Buffer) => (body += c.toString()));
  req.on("end", () => {
    const s = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body, at: Date.now() };
    seen.push(s);
    answer(s, seen.length, res);
  });
});
before(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => server.close());

function reply(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const type = status >= 400 ? "application/problem+json" : "application/json";
  res.writeHead(status, { "Content-Type": type, ...headers });
  res.end(JSON.stringify(body));
}

function problem(status: number, code: string, extra: Record<string, unknown> = {}) {
  return { type: "about:blank", title: "Refused", status, code, detail: `a ${code}`, request_id: "req_1", ...extra };
}

const hold = { data: { id: "rsv_1", status: "reserved", expires_at: "2030-01-01T00:00:00Z" }, request_id: "req_2" };
const key = "tk_sandbox_" + "0".repeat(48);

test("a 429 is sent again after its Retry-After with the same key and body", async () => {
  seen = [];
  answer = (_, n, res) => (n === 1 ? reply(res, 429, problem(429, "rate_limited"), { "Retry-After": "1" }) : reply(res, 201, hold));
  const tickets = createTicketsClient({ baseUrl, apiKey: key });
  const got = await ok(tickets.POST("/v1/reservations", { body: { event_id: 1, seats: [{ zone_id: "z", seat_id: "s" }], ttl_minutes: 15 } }));
  assert.equal(got.data.id, "rsv_1");
  assert.equal(seen.length, 2);
  const [first, second] = seen as [Seen, Seen];
  assert.equal(first.headers.authorization, `Bearer ${key}`);
  assert.match(String(first.headers["idempotency-key"]), /^[0-9a-f-]{36}$/);
  assert.equal(second.headers["idempotency-key"], first.headers["idempotency-key"]);
  assert.equal(second.body, first.body);
  assert.ok(second.at - first.at >= 900, `retried after ${second.at - first.at} ms, Retry-After was 1 s`);
});

test("each call gets its own key; a caller's key is kept; a GET gets none", async () => {
  seen = [];
  answer = (s, _, res) => (s.method === "GET" ? reply(res, 200, { data: [], request_id: "r" }) : reply(res, 201, hold));
  const tickets = createTicketsClient({ baseUrl, apiKey: key });
  const body = { event_id: 1, seats: [{ zone_id: "z", seat_id: "s" }], ttl_minutes: 15 };
  await ok(tickets.POST("/v1/reservations", { body }));
  await ok(tickets.POST("/v1/reservations", { body }));
  await ok(tickets.POST("/v1/reservations", { body, params: { header: { "Idempotency-Key": "mine-1" } } }));
  await ok(tickets.GET("/v1/events"));
  const keys = seen.map((s) => s.headers["idempotency-key"]);
  assert.notEqual(keys[0], keys[1]);
  assert.equal(keys[2], "mine-1");
  assert.equal(keys[3], undefined);
});

test("a 503 past the retries is a ProblemError with the problem's fields", async () => {
  seen = [];
  answer = (_, __, res) => reply(res, 503, problem(503, "unavailable"), { "Retry-After": "0" });
  const tickets = createTicketsClient({ baseUrl, apiKey: key, maxRetries: 2 });
  const err = await ok(tickets.POST("/v1/orders/{id}/cancel", { params: { path: { id: 7 } } })).then(
    () => assert.fail("no error"),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ProblemError);
  assert.equal(seen.length, 3);
  assert.equal(new Set(seen.map((s) => s.headers["idempotency-key"])).size, 1);
  assert.equal(err.status, 503);
  assert.equal(err.code, "unavailable");
  assert.equal(err.request_id, "req_1");
  assert.equal(err.retryAfter, 0);
  assert.match(err.message, /503 unavailable: a unavailable \(request req_1\)/);
});

test("a 409 idempotency_request_in_progress is asked again; another 409 is not", async () => {
  seen = [];
  answer = (_, n, res) =>
    n === 1 ? reply(res, 409, problem(409, "idempotency_request_in_progress"), { "Retry-After": "0" }) : reply(res, 201, hold);
  const tickets = createTicketsClient({ baseUrl, apiKey: key });
  const body = { event_id: 1, seats: [{ zone_id: "z", seat_id: "s" }], ttl_minutes: 15 };
  await ok(tickets.POST("/v1/reservations", { body }));
  assert.equal(seen.length, 2);
  assert.equal(seen[1]?.headers["idempotency-key"], seen[0]?.headers["idempotency-key"]);
});

test("a Retry-After longer than maxRetryDelayMs is answered, not waited for", async () => {
  seen = [];
  answer = (_, __, res) => reply(res, 429, problem(429, "rate_limited"), { "Retry-After": "3600" });
  const tickets = createTicketsClient({ baseUrl, apiKey: key });
  const res = await tickets.GET("/v1/events");
  assert.equal(res.response.status, 429);
  assert.equal(seen.length, 1);
});

test("a refusal's own fields: seat_taken names the seats; other 4xx are not retried", async () => {
  seen = [];
  const seats = [{ zone_id: "z", seat_id: "s" }];
  answer = (_, __, res) => reply(res, 409, problem(409, "seat_taken", { unavailable_seats: seats }));
  const tickets = createTicketsClient({ baseUrl, apiKey: key });
  const err = await ok(tickets.POST("/v1/reservations", { body: { event_id: 1, seats, ttl_minutes: 15 } })).catch((e: unknown) => e);
  assert.ok(err instanceof ProblemError);
  assert.equal(err.code, "seat_taken");
  assert.deepEqual(err.unavailable_seats, seats);
  assert.equal(seen.length, 1);
});

test("an answer that is not a problem (a proxy's page) is a ProblemError with code error", async () => {
  answer = (_, __, res) => {
    res.writeHead(502, { "Content-Type": "text/html" });
    res.end("<h1>Bad gateway</h1>");
  };
  const tickets = createTicketsClient({ baseUrl, apiKey: key });
  const err = await ok(tickets.GET("/v1/events")).catch((e: unknown) => e);
  assert.ok(err instanceof ProblemError);
  assert.equal(err.status, 502);
  assert.equal(err.code, "error");
  assert.equal(err.detail, "<h1>Bad gateway</h1>");
});

test("waitForOrder polls until the order leaves pending_payment", async () => {
  seen = [];
  answer = (_, n, res) =>
    reply(res, 200, { data: { id: 9, status: n < 3 ? "pending_payment" : "paid" }, request_id: "r" });
  const tickets = createTicketsClient({ baseUrl, apiKey: key });
  const order = await tickets.waitForOrder(9, { intervalMs: 10 });
  assert.equal(order.status, "paid");
  assert.equal(seen.length, 3);
  assert.ok(seen.every((s) => s.method === "GET" && s.url === "/v1/orders/9"));
});

test("paginate follows next_cursor to the end, keeping the filters, page number only on the first request", async () => {
  seen = [];
  const ids = Array.from({ length: 12 }, (_, i) => 100 - i);
  answer = (s, _, res) => {
    const q = new URL(s.url, baseUrl).searchParams;
    const start = q.has("cursor") ? Number(q.get("cursor")!.slice(1)) : 0;
    const per = Number(q.get("per_page"));
    const end = Math.min(start + per, ids.length);
    const meta = { current_page: 1, per_page: per, total: ids.length, last_page: 3, ...(end < ids.length ? { next_cursor: `c${end}` } : {}) };
    reply(res, 200, { data: ids.slice(start, end).map((id) => ({ id, status: "paid" })), meta, request_id: "r" });
  };
  const tickets = createTicketsClient({ baseUrl, apiKey: key });
  const got: number[] = [];
  for await (const order of tickets.paginate("/v1/orders", { params: { query: { per_page: 5, page: 1, "filter.status": "paid" } } })) {
    got.push(order.id);
  }
  assert.deepEqual(got, ids);
  const queries = seen.map((s) => new URL(s.url, baseUrl).searchParams);
  assert.equal(queries.length, 3);
  assert.equal(queries[0]!.get("page"), "1");
  assert.equal(queries[0]!.has("cursor"), false);
  assert.deepEqual(queries.slice(1).map((q) => [q.get("cursor"), q.has("page"), q.get("filter.status"), q.get("per_page")]), [
    ["c5", false, "paid", "5"],
    ["c10", false, "paid", "5"],
  ]);

  // Breaking out reads no further page.
  seen = [];
  for await (const order of tickets.paginate("/v1/orders", { params: { query: { per_page: 5 } } })) {
    if (order.id === 99) break;
  }
  assert.equal(seen.length, 1);
});

test("paginate throws the refusal of a page as a ProblemError", async () => {
  seen = [];
  answer = (s, _, res) =>
    s.url.includes("cursor=")
      ? reply(res, 422, problem(422, "validation_error", { errors: [{ location: "query.cursor", message: "bad" }] }))
      : reply(res, 200, { data: [{ id: 1 }], meta: { current_page: 1, per_page: 1, total: 2, last_page: 2, next_cursor: "x" }, request_id: "r" });
  const tickets = createTicketsClient({ baseUrl, apiKey: key });
  const got: number[] = [];
  const err = await (async () => {
    for await (const d of tickets.paginate("/v1/webhook-endpoints/{id}/deliveries", { params: { path: { id: 3 }, query: { per_page: 1 } } })) {
      got.push(d.attempts);
    }
  })().then(
    () => assert.fail("no error"),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ProblemError);
  assert.equal(err.problem.code, "validation_error");
  assert.equal(seen[0]!.url, "/v1/webhook-endpoints/3/deliveries?per_page=1");
});

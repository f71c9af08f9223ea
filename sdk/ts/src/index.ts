// A thin typed client for the ticket sales partner API (/v1, /aggregator/v1)
// on openapi-fetch: the paths, parameters, bodies and answers are the types
// generated from the API's OpenAPI document (schema.d.ts); this file adds
// what every partner would otherwise write by hand — bearer auth, an
// Idempotency-Key on every unsafe request, retries on 429/503 with the same
// key, problem+json errors as a class, polling an order until it settles, and
// verifying a webhook delivery into a typed event (constructEvent).
import createClient, { type Client, type Middleware } from "openapi-fetch";
import { Webhook, WebhookVerificationError } from "standardwebhooks";

import type { components, operations, paths, webhooks } from "./schema.js";

export type { components, operations, paths, webhooks };

/** The API's schemas by name: `Schemas["Order"]`, `Schemas["Ticket"]`, … */
export type Schemas = components["schemas"];
/** An order as the API answers it. */
export type Order = Schemas["Order"];
/** An RFC 9457 problem as the API answers every error. */
export type Problem = Schemas["Problem"];

type UnsafeMethod = "post" | "put" | "patch" | "delete";

// The document requires Idempotency-Key on creating calls; the client sets
// one when the caller does not, so the types let the caller leave it out.
type WithOptionalIdempotencyKey<Op> = Op extends { parameters: { header: infer H } }
  ? "Idempotency-Key" extends keyof H
    ? Omit<Op, "parameters"> & {
        parameters: Omit<Op["parameters"], "header"> & {
          header?: Omit<H, "Idempotency-Key"> & { "Idempotency-Key"?: string };
        };
      }
    : Op
  : Op;

/** The API's paths as the client takes them: Idempotency-Key optional. */
export type TicketsPaths = {
  [P in keyof paths]: {
    [M in keyof paths[P]]: M extends UnsafeMethod ? WithOptionalIdempotencyKey<paths[P][M]> : paths[P][M];
  };
};

export interface TicketsClientOptions {
  /** The service, e.g. `http://127.0.0.1:8080` (paths start with /v1). */
  baseUrl: string;
  /** An API key, `tk_sandbox_…` or `tk_production_…`. */
  apiKey: string;
  /** The fetch to send with (default: the global fetch). */
  fetch?: typeof globalThis.fetch;
  /** Retries of a 429, 503 or 409 idempotency_request_in_progress answer (default 3); 0 turns retries off. */
  maxRetries?: number;
  /** The longest wait before a retry (default 30 s): a longer Retry-After returns the answer instead. */
  maxRetryDelayMs?: number;
}

/** The GET operation of a path, if it has one. */
type GetOf<P extends keyof paths> = paths[P] extends { get: infer G } ? G : never;

/** The paths whose GET answers a page of a list: they take a `cursor`. */
export type ListPath = {
  [P in keyof paths]: GetOf<P> extends { parameters: { query?: { cursor?: string } } } ? P : never;
}[keyof paths];

/** What paginate takes: the list's parameters (path, query filters, per_page) as GET takes them. */
export type ListInit<P extends ListPath> = {
  params?: GetOf<P> extends { parameters: infer R } ? Omit<R, "query"> & { query?: Omit<NonNullable<R extends { query?: infer Q } ? Q : never>, "cursor"> } : never;
  signal?: AbortSignal;
};

/** An item of a list: `ListItem<"/v1/orders">` is an order. */
export type ListItem<P extends ListPath> = GetOf<P> extends {
  responses: { 200: { content: { "application/json": { data: (infer T)[] } } } };
}
  ? T
  : never;

/** The client: openapi-fetch's GET/POST/PUT/PATCH/DELETE on the API's paths, plus waitForOrder and paginate. */
export interface TicketsClient extends Client<TicketsPaths> {
  /**
   * Walks a list to its end by cursor, yielding each item once: the first
   * page with the filters given, then each page after the previous one's
   * last item (`meta.next_cursor`), so orders arriving meanwhile neither
   * repeat nor hide others. A refusal throws ProblemError; breaking out of
   * the loop reads no further page.
   *
   *     for await (const order of tickets.paginate("/v1/orders", { params: { query: { "filter.status": "paid" } } })) { … }
   */
  paginate<P extends ListPath>(path: P, init?: ListInit<P>): AsyncGenerator<ListItem<P>, void, undefined>;
  /**
   * Polls `GET /v1/orders/{id}` until the order leaves `pending_payment`
   * (paid, cancelled, refunded, …) and returns it; throws when it has not
   * within `timeoutMs` (default 60 s).
   */
  waitForOrder(id: number, options?: WaitOptions): Promise<Order>;
}

export interface WaitOptions {
  /** Give up after this long (default 60 000 ms). */
  timeoutMs?: number;
  /** Between two reads (default 500 ms). */
  intervalMs?: number;
  signal?: AbortSignal;
}

/** The HTTP methods that change something: each gets an Idempotency-Key. */
const unsafeMethods = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * createTicketsClient returns a client that authenticates every request
 * with the key, gives every unsafe request without an Idempotency-Key a
 * fresh one (so a retry — by this client or by the caller with the same
 * options — cannot do the work twice), and retries 429, 503 and 409
 * idempotency_request_in_progress answers after their Retry-After with the
 * same key.
 */
export function createTicketsClient(options: TicketsClientOptions): TicketsClient {
  const { baseUrl, apiKey } = options;
  if (!baseUrl) throw new TypeError("createTicketsClient: baseUrl is required");
  if (!apiKey) throw new TypeError("createTicketsClient: apiKey is required");
  const client = createClient<TicketsPaths>({
    baseUrl,
    fetch: retrying(options.fetch ?? globalThis.fetch, options.maxRetries ?? 3, options.maxRetryDelayMs ?? 30_000),
  });
  client.use(auth(apiKey));
  const waitForOrder = async (id: number, wait: WaitOptions = {}): Promise<Order> => {
    const deadline = Date.now() + (wait.timeoutMs ?? 60_000);
    for (;;) {
      const { data: order } = await ok(client.GET("/v1/orders/{id}", { params: { path: { id } }, signal: wait.signal }));
      if (order.status !== "pending_payment") return order;
      if (Date.now() >= deadline) {
        throw new Error(`waitForOrder: order ${id} is still pending_payment after ${wait.timeoutMs ?? 60_000} ms`);
      }
      await sleep(wait.intervalMs ?? 500, wait.signal);
    }
  };
  async function* paginate<P extends ListPath>(path: P, init: ListInit<P> = {}): AsyncGenerator<ListItem<P>, void, undefined> {
    const params = (init.params ?? {}) as { query?: Record<string, unknown> };
    let cursor: string | undefined;
    for (;;) {
      // The first page as asked (a page number too); later ones by cursor alone.
      const query = cursor === undefined ? params.query : { ...params.query, page: undefined, cursor };
      const get = client.GET as (path: string, init: unknown) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
      const body = (await ok(get(path, { params: { ...params, query }, signal: init.signal }))) as {
        data: ListItem<P>[];
        meta?: { next_cursor?: string };
      };
      yield* body.data;
      const next = body.meta?.next_cursor;
      if (!next || body.data.length === 0 || next === cursor) return;
      cursor = next;
    }
  }
  return Object.assign(client, { waitForOrder, paginate });
}

/** The bearer key on every request, and an Idempotency-Key on unsafe ones. */
function auth(apiKey: string): Middleware {
  return {
    onRequest({ request }) {
      request.headers.set("Authorization", `Bearer ${apiKey}`);
      if (unsafeMethods.has(request.method) && !request.headers.has("Idempotency-Key")) {
        request.headers.set("Idempotency-Key", crypto.randomUUID());
      }
      return request;
    },
  };
}

/**
 * retrying sends a request again when the answer is 429 (rate limited), 503
 * (unavailable, nothing was changed) or 409 idempotency_request_in_progress,
 * after Retry-After (seconds or a date) or else 0.5 s, 1 s, 2 s, …: the same
 * request, so the same
 * Idempotency-Key, and the server answers a repeat of work it did with its
 * first answer.
 */
function retrying(send: typeof globalThis.fetch, maxRetries: number, maxDelayMs: number): typeof globalThis.fetch {
  return async (input, init) => {
    const request = input instanceof Request ? input : new Request(input, init);
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= maxRetries;
      // A body can be read once: each attempt but the last sends a copy.
      const response = await send(last ? request : request.clone());
      if (last || !(await retryable(response))) return response;
      const delay = retryDelay(response.headers.get("Retry-After"), attempt);
      if (delay > maxDelayMs) return response;
      await response.body?.cancel();
      await sleep(delay, request.signal);
    }
  };
}

/**
 * retryable: 429 and 503 promise nothing was done; 409
 * idempotency_request_in_progress means the first request with this key is
 * still running, and a repeat after it gets its answer.
 */
async function retryable(response: Response): Promise<boolean> {
  if (response.status === 429 || response.status === 503) return true;
  if (response.status !== 409) return false;
  try {
    const body: unknown = await response.clone().json();
    return (body as { code?: unknown } | null)?.code === "idempotency_request_in_progress";
  } catch {
    return false;
  }
}

function retryDelay(header: string | null, attempt: number): number {
  if (header !== null && header.trim() !== "") {
    const seconds = Number(header);
    if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
    const at = Date.parse(header);
    if (!Number.isNaN(at)) return Math.max(0, at - Date.now());
  }
  return 500 * 2 ** attempt;
}

function sleep(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * ProblemError is an answer other than 2xx: the API's RFC 9457 problem
 * (application/problem+json) with its fields, or for an answer that is not
 * one (a proxy's page), the status with code "error" and the text as detail.
 */
export class ProblemError extends Error {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail?: string;
  readonly code: Problem["code"];
  readonly request_id?: string;
  /** validation_error: each field's error. */
  readonly errors?: Problem["errors"];
  /** insufficient_scope: the scope the key lacks. */
  readonly required_scope?: string;
  /** seat_taken: the seats taken. */
  readonly unavailable_seats?: Problem["unavailable_seats"];
  /** sold_out: the categories sold out. */
  readonly unavailable_categories?: number[];
  /** sold_out (best available): free seats left within the request. */
  readonly available?: number;
  /** sold_out: the schedule slot is full. */
  readonly slot_sold_out?: boolean;
  /** Retry-After of the answer, in seconds, when it had one. */
  readonly retryAfter?: number;
  /** The whole problem as the API sent it (fields this version does not name too). */
  readonly problem: Partial<Problem> & Record<string, unknown>;
  readonly response: Response;

  constructor(response: Response, body: unknown) {
    const p: Partial<Problem> & Record<string, unknown> =
      body !== null && typeof body === "object" && !Array.isArray(body)
        ? (body as Partial<Problem> & Record<string, unknown>)
        : { detail: typeof body === "string" && body !== "" ? body.slice(0, 500) : undefined };
    const status = typeof p.status === "number" ? p.status : response.status;
    const code = p.code ?? "error";
    const title = p.title ?? (response.statusText || `HTTP ${status}`);
    const requestId = p.request_id ?? response.headers.get("X-Request-Id") ?? undefined;
    super(`${status} ${code}: ${p.detail ?? title}${requestId ? ` (request ${requestId})` : ""}`);
    this.name = "ProblemError";
    this.type = p.type ?? "about:blank";
    this.title = title;
    this.status = status;
    this.detail = p.detail;
    this.code = code;
    this.request_id = requestId;
    this.errors = p.errors;
    this.required_scope = p.required_scope;
    this.unavailable_seats = p.unavailable_seats;
    this.unavailable_categories = p.unavailable_categories;
    this.available = p.available;
    this.slot_sold_out = p.slot_sold_out;
    const retryAfter = Number(response.headers.get("Retry-After") ?? NaN);
    this.retryAfter = Number.isFinite(retryAfter) ? retryAfter : undefined;
    this.problem = p;
    this.response = response;
  }
}

/**
 * ok awaits a call and returns its body (`{data, request_id, meta?}`), or
 * throws ProblemError when the answer is not 2xx:
 *
 *     const { data: order } = await ok(tickets.GET("/v1/orders/{id}", { params: { path: { id } } }));
 */
export async function ok<R extends { data?: unknown; error?: unknown; response: Response }>(
  call: Promise<R>,
): Promise<Exclude<R["data"], undefined>> {
  const { data, error, response } = await call;
  if (!response.ok || error !== undefined) throw new ProblemError(response, error);
  return data as Exclude<R["data"], undefined>;
}

/** The event types the service sends: the document's webhooks ("order.paid", …). */
export type WebhookEventType = keyof webhooks;

type WebhookBody<T extends WebhookEventType> =
  NonNullable<webhooks[T]["post"]> extends { requestBody: { content: { "application/json": infer B } } } ? B : never;

/** Each event type's body, by type: `WebhookEvents["order.paid"]` is an OrderPaidEvent (`data` an Order). */
export type WebhookEvents = { [T in WebhookEventType]: WebhookBody<T> };

/**
 * A verified delivery: the union of every event type's body, discriminated
 * by `type`, so `switch (event.type)` narrows `event.data` (an Order for
 * `order.paid`, a Refund for `order.refunded`, …).
 */
export type WebhookEvent = WebhookEvents[WebhookEventType];

/** The headers of a delivery: a Fetch Headers, or Node's `req.headers`. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

/** Thrown by constructEvent when a delivery is not signed with the secret. */
export { WebhookVerificationError };

/**
 * constructEvent verifies a webhook delivery and returns its typed event,
 * as Stripe's constructEvent does. `payload` is the raw body exactly as
 * received (with Express, `express.raw({ type: "application/json" })`; not
 * JSON parsed and serialised again), `headers` the request's headers,
 * `secret` the endpoint's signing secret (`whsec_…`, shown when the
 * endpoint was made or its secret rotated). The signature is checked per
 * Standard Webhooks by its reference library (`standardwebhooks`):
 * HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}", any of the
 * space-separated signatures (two while a rotated secret still signs),
 * compared in constant time, and a timestamp within 5 minutes of now.
 * Throws WebhookVerificationError when it fails: answer 4xx and ignore the
 * body.
 *
 *     const event = constructEvent(req.body, req.headers, process.env.TICKETS_WEBHOOK_SECRET!);
 *     switch (event.type) {
 *       case "order.paid": console.log(`order ${event.data.id} paid`); break;
 *     }
 *
 * An event type this version does not know yet (the service may add some)
 * is returned as it came: keep a `default` branch that ignores it.
 */
export function constructEvent(payload: string | Uint8Array, headers: WebhookHeaders, secret: string): WebhookEvent {
  if (!secret.startsWith("whsec_") || secret.length === "whsec_".length) {
    throw new TypeError('constructEvent: a webhook secret is "whsec_" and base64');
  }
  // The library signs a string or a Buffer: bytes are decoded as the UTF-8 JSON they are.
  const body = typeof payload === "string" ? payload : new TextDecoder("utf-8", { fatal: true }).decode(payload);
  const flat: Record<string, string> = {};
  if (typeof Headers !== "undefined" && headers instanceof Headers) {
    headers.forEach((value, name) => (flat[name.toLowerCase()] = value));
  } else {
    for (const [name, value] of Object.entries(headers)) {
      if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
    }
  }
  const event = new Webhook(secret).verify(body, flat) as WebhookEvent | undefined;
  if (event === null || typeof event !== "object" || event.id !== flat["webhook-id"]) {
    throw new WebhookVerificationError("The body's id is not the webhook-id header");
  }
  return event;
}

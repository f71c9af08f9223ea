-- Partner webhooks. Endpoints belong to an application (one per company and
-- environment), so sandbox and production events never mix.
CREATE TABLE webhook_endpoints (
    id                      bigserial PRIMARY KEY,
    application_id          bigint NOT NULL REFERENCES applications (id),
    company_id              bigint NOT NULL REFERENCES companies (id),
    is_test                 boolean NOT NULL,
    url                     text NOT NULL CHECK (url <> ''),
    description             text NOT NULL DEFAULT '',
    -- Empty: every event type.
    event_types             text[] NOT NULL DEFAULT '{}',
    enabled                 boolean NOT NULL DEFAULT true,
    -- Signing secrets (whsec_…): the current one, and the one it replaced,
    -- which keeps signing beside it until previous_secret_expires_at.
    secret                  text NOT NULL,
    previous_secret         text,
    previous_secret_expires_at timestamptz,
    -- Since when every delivery to the endpoint has failed (NULL: the last
    -- one succeeded); an endpoint failing long enough is disabled, and says why.
    failing_since           timestamptz,
    disabled_at             timestamptz,
    disabled_reason         text,
    created_at              timestamptz NOT NULL DEFAULT now(),
    updated_at              timestamptz NOT NULL DEFAULT now(),
    deleted_at              timestamptz
);
CREATE INDEX webhook_endpoints_owner ON webhook_endpoints (company_id, is_test) WHERE deleted_at IS NULL;

-- The outbox: one row per event, written in the transaction of the change
-- it reports, and only for an environment that has an endpoint.
CREATE TABLE webhook_events (
    id             text PRIMARY KEY,
    type           text NOT NULL,
    company_id     bigint NOT NULL,
    is_test        boolean NOT NULL,
    order_id       bigint,
    reservation_id text,
    refund_id      text,
    -- A test ping goes to this endpoint only.
    endpoint_id    bigint REFERENCES webhook_endpoints (id),
    -- The subject's row as the change left it, and the body sent, fixed
    -- when the event is dispatched.
    snapshot       jsonb,
    payload        jsonb,
    created_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    dispatched_at  timestamptz
);
CREATE INDEX webhook_events_undispatched ON webhook_events (created_at) WHERE dispatched_at IS NULL;
CREATE INDEX webhook_events_order ON webhook_events (order_id) WHERE order_id IS NOT NULL;

-- One delivery per event and endpoint, its workflow webhook/{event}/{endpoint}.
CREATE TABLE webhook_deliveries (
    event_id        text NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
    endpoint_id     bigint NOT NULL REFERENCES webhook_endpoints (id),
    status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts        integer NOT NULL DEFAULT 0,
    last_attempt_at timestamptz,
    last_status     integer,
    last_error      text,
    delivered_at    timestamptz,
    failed_at       timestamptz,
    -- When the delivery workflow was started (NULL: the sweep starts it).
    started_at      timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at DESC);
CREATE INDEX webhook_deliveries_unstarted ON webhook_deliveries (created_at) WHERE started_at IS NULL;

-- Every attempt: when, how long, the answer's status and its first bytes.
CREATE TABLE webhook_attempts (
    id               bigserial PRIMARY KEY,
    event_id         text NOT NULL,
    endpoint_id      bigint NOT NULL,
    run_id           text NOT NULL,
    attempt          integer NOT NULL,
    attempted_at     timestamptz NOT NULL,
    duration_ms      integer NOT NULL,
    status_code      integer,
    error            text,
    response_excerpt text NOT NULL DEFAULT '',
    FOREIGN KEY (event_id, endpoint_id) REFERENCES webhook_deliveries (event_id, endpoint_id) ON DELETE CASCADE,
    UNIQUE (event_id, endpoint_id, run_id, attempt)
);

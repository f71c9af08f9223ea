-- Every seat change takes a number from one sequence, so an event's
-- availability version is max(version) of its seats: read through an index,
-- with no hot per-event counter row that every hold would have to lock.
CREATE SEQUENCE seat_change_seq;
ALTER TABLE event_seats ADD COLUMN version bigint NOT NULL DEFAULT nextval('seat_change_seq');
CREATE INDEX event_seats_event_version ON event_seats (event_id, version);

-- A reservation holds seats of one event until expires_at.
CREATE TABLE reservations (
    id           text PRIMARY KEY,
    company_id   bigint NOT NULL REFERENCES companies (id),
    api_key_id   bigint NOT NULL REFERENCES api_keys (id),
    is_test      boolean NOT NULL,
    event_id     bigint NOT NULL REFERENCES events (id),
    status       text NOT NULL CHECK (status IN ('reserved', 'ordered', 'expired', 'released')),
    expires_at   timestamptz NOT NULL,
    currency     text NOT NULL,
    total        bigint NOT NULL,
    service_fee  bigint NOT NULL,
    total_to_pay bigint NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX reservations_company_created ON reservations (company_id, created_at DESC);

-- The seats of a reservation with the price fixed when each was held.
CREATE TABLE reservation_seats (
    reservation_id text NOT NULL REFERENCES reservations (id) ON DELETE CASCADE,
    event_id       bigint NOT NULL,
    seat_id        text NOT NULL,
    category_id    bigint NOT NULL REFERENCES ticket_categories (id),
    price          bigint NOT NULL,
    PRIMARY KEY (reservation_id, seat_id)
);

-- Idempotency records of creating POSTs, per API key, kept 24 hours.
CREATE TABLE idempotency_keys (
    api_key_id   bigint NOT NULL REFERENCES api_keys (id),
    key          text NOT NULL,
    method       text NOT NULL,
    path         text NOT NULL,
    body_hash    bytea NOT NULL,
    status       integer,          -- NULL while the first request runs
    headers      jsonb,
    body         bytea,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (api_key_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

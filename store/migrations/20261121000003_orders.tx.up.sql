-- Orders: one per purchase, from a reservation (seated events) or from items
-- (general admission, optionally in a schedule slot).
CREATE TABLE orders (
    id                  bigserial PRIMARY KEY,
    company_id          bigint NOT NULL REFERENCES companies (id),
    api_key_id          bigint NOT NULL REFERENCES api_keys (id),
    is_test             boolean NOT NULL,
    event_id            bigint NOT NULL REFERENCES events (id),
    reservation_id      text UNIQUE REFERENCES reservations (id),
    schedule_slot_id    bigint REFERENCES sessions (id),
    status              text NOT NULL CHECK (status IN ('pending_payment', 'paid', 'cancelled', 'partially_refunded', 'refunded')),
    cancel_reason       text CHECK (cancel_reason IN ('buyer', 'payment_timeout', 'partner')),
    payment             text NOT NULL CHECK (payment IN ('gateway', 'external')),
    payment_id          text,
    currency            text NOT NULL,
    total               bigint NOT NULL,
    service_fee         bigint NOT NULL,
    amount              bigint NOT NULL,
    customer_email      text NOT NULL,
    customer_first_name text NOT NULL,
    customer_last_name  text NOT NULL,
    customer_phone      text NOT NULL,
    -- The public order page's token, hashed; compared in constant time.
    access_token_hash   bytea NOT NULL,
    created_at          timestamptz NOT NULL DEFAULT now(),
    expires_at          timestamptz NOT NULL,
    paid_at             timestamptz,
    cancelled_at        timestamptz,
    emailed_at          timestamptz,
    updated_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX orders_company_created ON orders (company_id, created_at DESC);

-- One position per ticket, with its price fixed when the order was made.
CREATE TABLE order_items (
    order_id    bigint NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    position    integer NOT NULL,
    category_id bigint NOT NULL REFERENCES ticket_categories (id),
    seat_id     text,
    price       bigint NOT NULL,
    PRIMARY KEY (order_id, position)
);

-- Tickets: at most one per order position, whatever retries happen.
CREATE TABLE tickets (
    id          bigserial PRIMARY KEY,
    order_id    bigint NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    position    integer NOT NULL,
    number      text NOT NULL UNIQUE,
    barcode     text NOT NULL UNIQUE CHECK (barcode ~ '^[0-9]{13}$'),
    status      text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'refunded')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (order_id, position)
);

-- Payments of the built-in test gateway.
CREATE TABLE gateway_payments (
    id          text PRIMARY KEY,
    order_id    bigint NOT NULL,
    amount      bigint NOT NULL,
    currency    text NOT NULL,
    description text NOT NULL,
    status      text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'declined', 'paid')),
    refunded    bigint NOT NULL DEFAULT 0,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Refunds the test gateway made, by the caller's refund key: a retried
-- refund returns money once.
CREATE TABLE gateway_refunds (
    key        text PRIMARY KEY,
    payment_id text NOT NULL REFERENCES gateway_payments (id),
    amount     bigint NOT NULL CHECK (amount > 0),
    created_at timestamptz NOT NULL DEFAULT now()
);

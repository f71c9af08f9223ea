-- Refunds: each voids some tickets of a paid order and returns money.
CREATE TABLE refunds (
    id                text PRIMARY KEY,
    order_id          bigint NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    amount            bigint NOT NULL CHECK (amount >= 0),
    reason            text NOT NULL DEFAULT '',
    money_returned_by text NOT NULL CHECK (money_returned_by IN ('gateway', 'external')),
    status            text NOT NULL CHECK (status IN ('pending', 'completed')),
    created_at        timestamptz NOT NULL DEFAULT now(),
    completed_at      timestamptz
);
CREATE INDEX refunds_order ON refunds (order_id);

CREATE TABLE refund_tickets (
    refund_id text NOT NULL REFERENCES refunds (id) ON DELETE CASCADE,
    ticket_id bigint NOT NULL UNIQUE REFERENCES tickets (id) ON DELETE CASCADE,
    PRIMARY KEY (refund_id, ticket_id)
);

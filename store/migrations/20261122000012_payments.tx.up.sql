-- Which gateway takes a gateway order's payment ('test': the built-in test
-- gateway, for sandbox orders and development; 'hosted': the configured
-- hosted-payment-page provider) and where the buyer pays.
ALTER TABLE orders ADD COLUMN gateway text CHECK (gateway IN ('test', 'hosted'));
ALTER TABLE orders ADD COLUMN payment_url text;

-- The order page's access token is 32 random bytes per order. It is checked
-- against access_token_hash only; this sealed copy (AES-256-GCM under
-- ORDER_TOKEN_SECRET) lets the service show the link again. NULL for orders
-- made before: their token is still derived from the order id.
ALTER TABLE orders ADD COLUMN access_token_sealed bytea;

-- Every payment a gateway reports as paid, stored before the callback is
-- acknowledged, then applied to its order or returned:
--   received   -> applied     it paid its order
--   received   -> refund_due  the order could not take it (closed, paid by
--                             another payment, another amount, seats lost)
--   refund_due -> refunded    the gateway returned it
-- So Σ received = Σ applied (the paid orders' amounts) + Σ refunded once
-- nothing is in flight. No foreign key: a sandbox order is deleted after a
-- day, its payments stay on record.
CREATE TABLE payments (
    gateway       text NOT NULL CHECK (gateway IN ('test', 'hosted')),
    id            text NOT NULL,
    order_id      bigint NOT NULL,
    amount        bigint NOT NULL CHECK (amount >= 0),
    currency      text NOT NULL,
    status        text NOT NULL DEFAULT 'received'
                  CHECK (status IN ('received', 'applied', 'refund_due', 'refunded')),
    refund_reason text CHECK (refund_reason IN ('order_closed', 'order_gone', 'other_payment', 'amount_mismatch', 'seats_lost')),
    received_at   timestamptz NOT NULL DEFAULT now(),
    settled_at    timestamptz,
    refunded_at   timestamptz,
    PRIMARY KEY (gateway, id),
    CHECK (status = 'received' OR settled_at IS NOT NULL),
    CHECK ((status IN ('refund_due', 'refunded')) = (refund_reason IS NOT NULL))
);
CREATE INDEX payments_order ON payments (order_id);
-- The reaper's look-up of payments not yet settled or returned.
CREATE INDEX payments_open ON payments (received_at) WHERE status IN ('received', 'refund_due');
-- An order is paid by one payment.
CREATE UNIQUE INDEX payments_one_applied ON payments (order_id) WHERE status = 'applied';

-- A refund whose money the gateway would not take back within its retry
-- budget is 'failed' (operators are alerted) until the reaper's sweep
-- resumes it.
ALTER TABLE refunds DROP CONSTRAINT refunds_status_check;
ALTER TABLE refunds ADD CONSTRAINT refunds_status_check CHECK (status IN ('pending', 'completed', 'failed'));
ALTER TABLE refunds ADD COLUMN failed_at timestamptz;
ALTER TABLE refunds ADD COLUMN last_error text;
CREATE INDEX refunds_open ON refunds (created_at) WHERE status IN ('pending', 'failed');

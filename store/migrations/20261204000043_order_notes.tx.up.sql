-- The back office's notes on an order, and correcting the buyer's e-mail
-- (docs/cabinet.md, "Notes and the buyer's e-mail").
--
-- A note is written by a cabinet user (who, as cabinet_actions records who
-- did what) on one of the company's orders: at most 2000 characters, never
-- edited. The form's one-time token is claimed by the note's own INSERT
-- (unique per company), so a double click or a reload adds it once. A
-- sandbox order is deleted after a day: its notes go with it. IF NOT
-- EXISTS: a crash between the commit and its record runs it again.
CREATE TABLE IF NOT EXISTS order_notes (
    id         bigserial PRIMARY KEY,
    company_id bigint NOT NULL REFERENCES companies (id),
    order_id   bigint NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    user_id    bigint NOT NULL REFERENCES cabinet_users (id),
    body       text NOT NULL CHECK (char_length(body) BETWEEN 1 AND 2000),
    token      text NOT NULL CHECK (length(token) BETWEEN 16 AND 64),
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (company_id, token)
);

-- The order's page lists its notes, newest first.
CREATE INDEX IF NOT EXISTS order_notes_order ON order_notes (order_id, created_at);

-- Correcting the buyer's e-mail updates orders.customer_email in place and
-- records the old and the new address as a cabinet action ('email'), in
-- the same transaction: the order's timeline shows who changed it, from
-- what to what.
ALTER TABLE cabinet_actions DROP CONSTRAINT IF EXISTS cabinet_actions_action_check;
ALTER TABLE cabinet_actions ADD CONSTRAINT cabinet_actions_action_check
    CHECK (action IN ('refund', 'resend', 'cancel', 'email'));

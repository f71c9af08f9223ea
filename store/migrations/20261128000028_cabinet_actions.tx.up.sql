-- What the back office did to an order and who did it: a refund, a resend
-- of the tickets e-mail, a cancel. The confirm page carries a one-time
-- random token; the action claims it with one guarded INSERT (unique per
-- company), so a double click or a reload does the action once. A refund's
-- row is written in the refund's own transaction.
CREATE TABLE cabinet_actions (
    id         bigserial PRIMARY KEY,
    company_id bigint NOT NULL REFERENCES companies (id),
    user_id    bigint NOT NULL REFERENCES cabinet_users (id),
    -- A sandbox order is deleted after a day: its actions go with it.
    order_id   bigint NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    action     text NOT NULL CHECK (action IN ('refund', 'resend', 'cancel')),
    detail     jsonb NOT NULL DEFAULT '{}',
    token      text NOT NULL CHECK (length(token) BETWEEN 16 AND 64),
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (company_id, token)
);

-- An order's page lists its actions in its timeline.
CREATE INDEX cabinet_actions_order ON cabinet_actions (order_id, created_at);

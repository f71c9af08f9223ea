-- The organizer's cabinet (/cabinet): its users, one-time sign-in links,
-- server-side sessions, and what the sales report needs to know about an
-- order's channel.

-- The channel that sold an order: 'api' (a partner application on /v1) or
-- 'aggregator' (the adapter on /aggregator/v1). The key and application are
-- orders.api_key_id. Orders from before were all sold over /v1 or could not
-- be told apart: they count as 'api'.
ALTER TABLE orders ADD COLUMN channel text NOT NULL DEFAULT 'api' CHECK (channel IN ('api', 'aggregator'));

-- The report reads a company's paid production orders by payment time.
CREATE INDEX orders_report ON orders (company_id, paid_at) WHERE NOT is_test AND paid_at IS NOT NULL;
CREATE INDEX refunds_completed ON refunds (completed_at) WHERE status = 'completed';

-- When a key last authenticated a request, written with the request log's
-- batches (one UPDATE per batch, not per request).
ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz;

-- Organizer users sign in with e-mail and password; they are not API keys.
-- The password is an argon2id hash (PHC string); NULL until the user sets
-- one through a sign-in link. A session holds the session_version it was
-- opened under and ends when that changes: setting a password and
-- disabling the user bump it. A disabled user (disabled_at) cannot sign in
-- or use a link.
CREATE TABLE cabinet_users (
    id              bigserial PRIMARY KEY,
    company_id      bigint NOT NULL REFERENCES companies (id),
    email           text NOT NULL CHECK (email = lower(email) AND email LIKE '%_@_%'),
    password_hash   text,
    session_version integer NOT NULL DEFAULT 1,
    disabled_at     timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (email)
);

-- One-time links to sign in and set a password. Only the SHA-256 of the
-- token is kept; a link works once, before expires_at.
CREATE TABLE cabinet_signin_links (
    token_hash bytea PRIMARY KEY,
    user_id    bigint NOT NULL REFERENCES cabinet_users (id) ON DELETE CASCADE,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX cabinet_signin_links_user ON cabinet_signin_links (user_id);

-- Sessions of the session manager (github.com/alexedwards/scs, postgresstore
-- schema; the table name is ours).
CREATE TABLE cabinet_sessions (
    token  text PRIMARY KEY,
    data   bytea NOT NULL,
    expiry timestamptz NOT NULL
);
CREATE INDEX cabinet_sessions_expiry ON cabinet_sessions (expiry);

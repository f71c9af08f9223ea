-- The company's audit log (docs/cabinet.md, "Audit log"): who did what,
-- when, to what. One row per action, written by store.Audit in the same
-- transaction as the change it records, so a change never commits without
-- its row (and a change rolled back leaves none).
--
-- actor_kind says who acted: a cabinet user (actor_user_id), an API key
-- (actor_key_id: a partner's refund through the API), the operator's
-- ticketctl, or the system itself (a scheduled release). actor is the
-- label at the time (the user's e-mail, the key's prefix and name), so the
-- row reads the same after the user is removed or the key revoked. Rows
-- are never updated or deleted by the application. IF NOT EXISTS: a crash
-- between the commit and its record runs it again.
CREATE TABLE IF NOT EXISTS audit_log (
    id            bigserial PRIMARY KEY,
    company_id    bigint NOT NULL REFERENCES companies (id),
    at            timestamptz NOT NULL DEFAULT now(),
    actor_kind    text NOT NULL CHECK (actor_kind IN ('user', 'key', 'ticketctl', 'system')),
    actor_user_id bigint REFERENCES cabinet_users (id),
    actor_key_id  bigint REFERENCES api_keys (id),
    actor         text NOT NULL CHECK (char_length(actor) <= 300),
    action        text NOT NULL CHECK (action ~ '^[a-z0-9_]+\.[a-z0-9_]+$'),
    subject       text NOT NULL DEFAULT '' CHECK (char_length(subject) <= 500),
    detail        jsonb NOT NULL DEFAULT '{}',
    CHECK ((actor_kind = 'user') = (actor_user_id IS NOT NULL)),
    CHECK ((actor_kind = 'key') = (actor_key_id IS NOT NULL))
);

-- The audit page: the company's rows newest first, all of them, of one
-- action, or of one person.
CREATE INDEX IF NOT EXISTS audit_log_company ON audit_log (company_id, id DESC);
CREATE INDEX IF NOT EXISTS audit_log_company_action ON audit_log (company_id, action, id DESC);
CREATE INDEX IF NOT EXISTS audit_log_company_user ON audit_log (company_id, actor_user_id, id DESC) WHERE actor_user_id IS NOT NULL;

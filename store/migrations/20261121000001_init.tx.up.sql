-- Organizers, their applications (one per environment) and API keys.
CREATE TABLE companies (
    id         bigserial PRIMARY KEY,
    name       text NOT NULL CHECK (name <> ''),
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE applications (
    id          bigserial PRIMARY KEY,
    company_id  bigint NOT NULL REFERENCES companies (id),
    name        text NOT NULL,
    environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (company_id, environment, name)
);

CREATE TABLE api_keys (
    id             bigserial PRIMARY KEY,
    application_id bigint NOT NULL REFERENCES applications (id),
    name           text NOT NULL DEFAULT '',
    -- Only the SHA-256 of the key is kept; the key itself is shown once.
    key_hash       bytea NOT NULL UNIQUE,
    key_prefix     text NOT NULL,
    scopes         text[] NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    revoked_at     timestamptz
);

-- Catalog. Every record belongs to one company and is upserted by its file ref.
CREATE TABLE cities (
    id         bigserial PRIMARY KEY,
    company_id bigint NOT NULL REFERENCES companies (id),
    ref        text NOT NULL,
    name       text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (company_id, ref)
);

CREATE TABLE venues (
    id         bigserial PRIMARY KEY,
    company_id bigint NOT NULL REFERENCES companies (id),
    city_id    bigint NOT NULL REFERENCES cities (id),
    ref        text NOT NULL,
    name       text NOT NULL,
    timezone   text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (company_id, ref)
);

CREATE TABLE schemes (
    id         bigserial PRIMARY KEY,
    venue_id   bigint NOT NULL REFERENCES venues (id),
    ref        text NOT NULL,
    name       text NOT NULL,
    -- Geometry as served, and the hash of it used as the strong ETag.
    geometry   jsonb NOT NULL,
    etag       text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (venue_id, ref)
);

CREATE TABLE scheme_seats (
    scheme_id bigint NOT NULL REFERENCES schemes (id) ON DELETE CASCADE,
    seat_id   text NOT NULL,
    zone_id   text NOT NULL,
    row       text NOT NULL,
    number    text NOT NULL,
    label     text NOT NULL,
    PRIMARY KEY (scheme_id, seat_id)
);

CREATE TABLE events (
    id           bigserial PRIMARY KEY,
    company_id   bigint NOT NULL REFERENCES companies (id),
    ref          text NOT NULL,
    title        text NOT NULL,
    slug         text NOT NULL,
    status       text NOT NULL CHECK (status IN ('published', 'draft', 'archived')),
    starts_at    timestamptz NOT NULL,
    venue_id     bigint NOT NULL REFERENCES venues (id),
    scheme_id    bigint REFERENCES schemes (id),
    currency     text NOT NULL DEFAULT 'RUB',
    fee_mode     text NOT NULL CHECK (fee_mode IN ('included', 'separate')),
    fee_rate_bp  integer NOT NULL CHECK (fee_rate_bp BETWEEN 0 AND 10000),
    min_fee      bigint NOT NULL CHECK (min_fee >= 0),
    -- Bumped by every change of the event's seats: the availability ETag.
    seat_version bigint NOT NULL DEFAULT 1,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (company_id, ref)
);
CREATE INDEX events_company_status_starts ON events (company_id, status, starts_at);
CREATE INDEX events_company_updated ON events (company_id, updated_at);

CREATE TABLE ticket_categories (
    id         bigserial PRIMARY KEY,
    event_id   bigint NOT NULL REFERENCES events (id),
    ref        text NOT NULL,
    name       text NOT NULL,
    position   integer NOT NULL,
    base_price bigint NOT NULL CHECK (base_price >= 0),
    -- General-admission capacity; NULL for seated categories.
    capacity   integer CHECK (capacity >= 0),
    -- Tickets sold so far: drives price changes "after_sold" and GA capacity.
    sold       integer NOT NULL DEFAULT 0 CHECK (sold >= 0),
    zones      text[] NOT NULL DEFAULT '{}',
    rows       jsonb NOT NULL DEFAULT '{}',
    -- Price rules in file order: [{"from": ts} | {"after_sold": n}, "price": p].
    price_changes jsonb NOT NULL DEFAULT '[]',
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (event_id, ref)
);

CREATE TABLE sessions (
    id         bigserial PRIMARY KEY,
    event_id   bigint NOT NULL REFERENCES events (id),
    ref        text NOT NULL,
    starts_at  timestamptz NOT NULL,
    capacity   integer NOT NULL CHECK (capacity >= 0),
    sold       integer NOT NULL DEFAULT 0 CHECK (sold >= 0),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (event_id, ref)
);

-- The seat inventory: one row per seat per event. A seat changes state only
-- through one conditional UPDATE, so it can never be held or sold twice.
CREATE TABLE event_seats (
    event_id        bigint NOT NULL REFERENCES events (id),
    seat_id         text NOT NULL,
    zone_id         text NOT NULL,
    row             text NOT NULL,
    number          text NOT NULL,
    label           text NOT NULL,
    category_id     bigint NOT NULL REFERENCES ticket_categories (id),
    state           text NOT NULL DEFAULT 'free' CHECK (state IN ('free', 'held', 'sold')),
    hold_id         text,
    hold_expires_at timestamptz,
    order_id        bigint,
    PRIMARY KEY (event_id, seat_id)
);
CREATE INDEX event_seats_hold ON event_seats (hold_id) WHERE hold_id IS NOT NULL;

-- The request log of /v1 and /aggregator/v1, written in batches.
CREATE TABLE request_log (
    id          bigserial PRIMARY KEY,
    request_id  text NOT NULL,
    company_id  bigint,
    api_key_id  bigint,
    method      text NOT NULL,
    path        text NOT NULL,
    status      integer NOT NULL,
    duration_us bigint NOT NULL,
    created_at  timestamptz NOT NULL
);
CREATE INDEX request_log_company_created ON request_log (company_id, created_at DESC);

-- updated_at moves only when a row really changes, so re-importing the same
-- catalog leaves every timestamp as it was.
CREATE FUNCTION touch_updated_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW IS DISTINCT FROM OLD THEN
        NEW.updated_at = now();
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER cities_touch BEFORE UPDATE ON cities FOR EACH ROW EXECUTE FUNCTION touch_updated_at();
CREATE TRIGGER venues_touch BEFORE UPDATE ON venues FOR EACH ROW EXECUTE FUNCTION touch_updated_at();
CREATE TRIGGER schemes_touch BEFORE UPDATE ON schemes FOR EACH ROW EXECUTE FUNCTION touch_updated_at();
CREATE TRIGGER events_touch BEFORE UPDATE ON events FOR EACH ROW
    WHEN (OLD.seat_version = NEW.seat_version) EXECUTE FUNCTION touch_updated_at();
CREATE TRIGGER categories_touch BEFORE UPDATE ON ticket_categories FOR EACH ROW EXECUTE FUNCTION touch_updated_at();
CREATE TRIGGER sessions_touch BEFORE UPDATE ON sessions FOR EACH ROW EXECUTE FUNCTION touch_updated_at();

-- A change of an event's categories or sessions changes what partners see of
-- the event (price_from, schedule), so it moves the event's updated_at too.
CREATE FUNCTION touch_parent_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE events SET updated_at = now() WHERE id = COALESCE(NEW.event_id, OLD.event_id);
    RETURN NULL;
END $$;

CREATE TRIGGER categories_touch_event AFTER INSERT OR UPDATE OF name, base_price, capacity, price_changes, zones, rows ON ticket_categories
    FOR EACH ROW EXECUTE FUNCTION touch_parent_event();
CREATE TRIGGER sessions_touch_event AFTER INSERT OR UPDATE OF starts_at, capacity ON sessions
    FOR EACH ROW EXECUTE FUNCTION touch_parent_event();

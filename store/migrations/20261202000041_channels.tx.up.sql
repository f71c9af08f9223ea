-- Distribution (docs/decisions.md, "Channels and allocations"): an
-- organizer groups applications into channels; seats and general-admission
-- quantities of an event may be allocated to a channel and are then sold
-- only through its applications' keys, within its sales window, until they
-- are released to general sale. IF NOT EXISTS throughout: a crash between
-- the commit and its record runs it again.

CREATE TABLE IF NOT EXISTS channels (
    id         bigserial PRIMARY KEY,
    company_id bigint NOT NULL REFERENCES companies (id),
    ref        text NOT NULL CHECK (ref ~ '^[a-z0-9][a-z0-9_-]{0,63}$'),
    name       text NOT NULL CHECK (name <> '' AND length(name) <= 200),
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (company_id, ref)
);

-- An application sells in at most one channel; one not in any sells in
-- general sale only.
CREATE TABLE IF NOT EXISTS channel_applications (
    application_id bigint PRIMARY KEY REFERENCES applications (id),
    channel_id     bigint NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
    added_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS channel_applications_channel ON channel_applications (channel_id);

-- General sale's window; NULL: from publication, until the event starts.
ALTER TABLE events ADD COLUMN IF NOT EXISTS sales_start timestamptz;
ALTER TABLE events ADD COLUMN IF NOT EXISTS sales_end timestamptz;

-- A channel's terms for one event: its own window (NULL: general sale's),
-- when its unsold allocation returns to general sale, and whether it has.
CREATE TABLE IF NOT EXISTS channel_events (
    event_id    bigint NOT NULL REFERENCES events (id),
    channel_id  bigint NOT NULL REFERENCES channels (id),
    sales_start timestamptz,
    sales_end   timestamptz,
    release_at  timestamptz,
    -- Set by a whole release: a seat or ticket of the channel given back
    -- later (a refund) goes to general sale, not to a channel that is done.
    released_at timestamptz,
    -- Seats released to general sale so far (quantities count in quotas).
    released_seats integer NOT NULL DEFAULT 0 CHECK (released_seats >= 0),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (event_id, channel_id),
    CHECK (sales_start IS NULL OR sales_end IS NULL OR sales_start < sales_end)
);
CREATE INDEX IF NOT EXISTS channel_events_channel ON channel_events (channel_id);

-- The seat's allocation (NULL: general sale). It stays through a hold and
-- a sale, so a seat freed again returns to the allocation it came from.
ALTER TABLE event_seats ADD COLUMN IF NOT EXISTS channel_id bigint REFERENCES channels (id);
CREATE INDEX IF NOT EXISTS event_seats_channel ON event_seats (event_id, channel_id) WHERE channel_id IS NOT NULL;

-- Quantities of a general-admission category (and schedule slot) allocated
-- to a channel. taken counts the positions of its live orders (pending and
-- paid); allocated - taken is what the channel has left, and is kept out of
-- general sale. released counts what went back to general sale.
CREATE TABLE IF NOT EXISTS channel_quotas (
    id          bigserial PRIMARY KEY,
    event_id    bigint NOT NULL,
    channel_id  bigint NOT NULL,
    category_id bigint NOT NULL REFERENCES ticket_categories (id),
    session_id  bigint REFERENCES sessions (id),
    allocated   integer NOT NULL CHECK (allocated >= 0),
    taken       integer NOT NULL DEFAULT 0 CHECK (taken >= 0 AND taken <= allocated),
    released    integer NOT NULL DEFAULT 0 CHECK (released >= 0),
    -- Its channel released its allocation as a whole: positions given back
    -- go on to general sale. Kept on the row an order or refund updates, so
    -- the update reads it fresh under the row's lock.
    closed      boolean NOT NULL DEFAULT false,
    FOREIGN KEY (event_id, channel_id) REFERENCES channel_events (event_id, channel_id)
);
CREATE UNIQUE INDEX IF NOT EXISTS channel_quotas_one ON channel_quotas (channel_id, category_id) WHERE session_id IS NULL;
CREATE UNIQUE INDEX IF NOT EXISTS channel_quotas_one_slot ON channel_quotas (channel_id, category_id, session_id) WHERE session_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS channel_quotas_category ON channel_quotas (category_id);

-- The quota a general-admission position was taken from (NULL: general
-- sale), so a cancel or refund gives it back there.
ALTER TABLE order_items ADD COLUMN IF NOT EXISTS quota_id bigint REFERENCES channel_quotas (id);
CREATE INDEX IF NOT EXISTS order_items_quota ON order_items (quota_id) WHERE quota_id IS NOT NULL;

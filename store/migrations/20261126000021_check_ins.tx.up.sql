-- Check-in at the door. A ticket is admitted once: the first scan that
-- finds it not inside sets checked_in_at (one guarded UPDATE), every scan
-- is recorded in check_ins with its outcome. Events that allow re-entry
-- let a scan with direction 'out' take a ticket out again.
ALTER TABLE tickets ADD COLUMN checked_in_at timestamptz;
ALTER TABLE tickets ADD COLUMN checked_in_gate text;
ALTER TABLE tickets ADD COLUMN inside boolean NOT NULL DEFAULT false;

ALTER TABLE events ADD COLUMN allow_reentry boolean NOT NULL DEFAULT false;

-- Door keys: a key with the checkin scope may be limited to one event and
-- one gate.
ALTER TABLE api_keys ADD COLUMN checkin_event_id bigint REFERENCES events (id);
ALTER TABLE api_keys ADD COLUMN checkin_gate text;

CREATE TABLE check_ins (
    id          bigserial PRIMARY KEY,
    company_id  bigint NOT NULL,
    event_id    bigint NOT NULL,
    ticket_id   bigint REFERENCES tickets (id) ON DELETE CASCADE,
    barcode     text NOT NULL,
    gate        text NOT NULL,
    device_id   text NOT NULL DEFAULT '',
    direction   text NOT NULL DEFAULT 'in' CHECK (direction IN ('in', 'out')),
    outcome     text NOT NULL,
    api_key_id  bigint NOT NULL,
    -- scanned_at is the device's time (offline scans are uploaded later);
    -- received_at is the service's.
    scanned_at  timestamptz NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(),
    offline     boolean NOT NULL DEFAULT false
);
CREATE INDEX check_ins_event ON check_ins (event_id, scanned_at);
CREATE INDEX check_ins_ticket ON check_ins (ticket_id);

-- Scanning offline. Each event has an Ed25519 key per environment that
-- signs its tickets' codes (format 2, package ticketcode): a door checks a
-- code with the published public key alone, and a sandbox ticket's code
-- does not verify with the key a real door holds. The private key is kept sealed (AES-256-GCM
-- under ORDER_TOKEN_SECRET, see internal/delivery/codes.go), made the first
-- time the event needs it by one guarded INSERT.
CREATE TABLE event_signing_keys (
    event_id           bigint NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    is_test            boolean NOT NULL,
    public_key         bytea NOT NULL CHECK (length(public_key) = 32),
    sealed_private_key bytea NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (event_id, is_test)
);

-- door_xid is the transaction that last changed what a door knows of a
-- ticket (issued, refunded, its order cancelled, admitted, let out). A
-- door list's cursor is the oldest transaction still running when it was
-- read, so a delta (door_xid >= cursor) misses no change committed later.
-- Triggers keep it in the transactions that make the changes. Tickets
-- issued before have none: they are in full lists, and in deltas once
-- they change.
ALTER TABLE tickets ADD COLUMN door_xid xid8;

CREATE FUNCTION tickets_door_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.door_xid := pg_current_xact_id();
    RETURN NEW;
END $$;

CREATE TRIGGER tickets_door_issued BEFORE INSERT ON tickets
    FOR EACH ROW EXECUTE FUNCTION tickets_door_changed();
CREATE TRIGGER tickets_door_changed BEFORE UPDATE ON tickets
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.inside IS DISTINCT FROM NEW.inside
        OR OLD.checked_in_at IS DISTINCT FROM NEW.checked_in_at OR OLD.checked_in_gate IS DISTINCT FROM NEW.checked_in_gate
        OR OLD.barcode IS DISTINCT FROM NEW.barcode)
    EXECUTE FUNCTION tickets_door_changed();

CREATE FUNCTION orders_door_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE tickets SET door_xid = pg_current_xact_id() WHERE order_id = NEW.id;
    RETURN NULL;
END $$;

-- An order's status is on each of its tickets' rows in a door list (paid,
-- cancelled, refunded).
CREATE TRIGGER orders_door_changed AFTER UPDATE OF status ON orders
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION orders_door_changed();

-- (check_ins_offline_once, a scan made offline recorded once, is made
-- with the scans' environment, in migration 24.)

-- A door list reads an event's orders.
CREATE INDEX orders_event ON orders (event_id);

-- Orders find their seats by order_id (pay, cancel, delete) while holding
-- the order's lock: keep that lookup an index probe.
CREATE INDEX event_seats_order ON event_seats (order_id) WHERE order_id IS NOT NULL;

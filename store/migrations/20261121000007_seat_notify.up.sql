-- Every change of what availability shows notifies the api instances, which
-- drop their cached copy: the cache is then served without a query.
CREATE FUNCTION notify_seat_changes() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE e bigint;
BEGIN
    FOR e IN SELECT DISTINCT event_id FROM changed LOOP
        PERFORM pg_notify('seat_changes', e::text);
    END LOOP;
    RETURN NULL;
END $$;

CREATE TRIGGER event_seats_notify_insert AFTER INSERT ON event_seats
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION notify_seat_changes();
CREATE TRIGGER event_seats_notify_update AFTER UPDATE ON event_seats
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION notify_seat_changes();
CREATE TRIGGER event_seats_notify_delete AFTER DELETE ON event_seats
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION notify_seat_changes();

CREATE FUNCTION notify_event_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('seat_changes', NEW.id::text);
    RETURN NULL;
END $$;

CREATE FUNCTION notify_category_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('seat_changes', NEW.event_id::text);
    RETURN NULL;
END $$;

-- Event status, GA sales (seat_version), prices and capacities change it too.
CREATE TRIGGER events_notify AFTER UPDATE ON events FOR EACH ROW EXECUTE FUNCTION notify_event_change();
CREATE TRIGGER categories_notify AFTER UPDATE ON ticket_categories FOR EACH ROW EXECUTE FUNCTION notify_category_change();

-- As for seats (0009): the api's own updates of events (general-admission
-- sales move seat_version) and categories (sold counts) are announced by
-- the api after commit, so its order commits take no notify lock either.
CREATE OR REPLACE FUNCTION notify_event_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('ticketsales.notify', true) = 'app' THEN
        RETURN NULL;
    END IF;
    PERFORM pg_notify('seat_changes', NEW.id::text);
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION notify_category_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('ticketsales.notify', true) = 'app' THEN
        RETURN NULL;
    END IF;
    PERFORM pg_notify('seat_changes', NEW.event_id::text);
    RETURN NULL;
END $$;

-- A transaction that notifies takes a cluster-wide lock at commit and holds
-- it through its WAL flush, so every hold committed one after another, with
-- no group commit. The api now announces its own seat changes after the
-- commit, batched (store.Notifier), and opens its connections with
-- ticketsales.notify = app; the worker's and ticketctl's changes still
-- notify from the trigger.
CREATE OR REPLACE FUNCTION notify_seat_changes() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE e bigint;
BEGIN
    IF current_setting('ticketsales.notify', true) = 'app' THEN
        RETURN NULL;
    END IF;
    FOR e IN SELECT DISTINCT event_id FROM changed LOOP
        PERFORM pg_notify('seat_changes', e::text);
    END LOOP;
    RETURN NULL;
END $$;

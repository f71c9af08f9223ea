-- The sweep's lookup of live holds without a recorded workflow start. Built
-- concurrently (alone in its file, outside a transaction) so holds go on
-- meanwhile.

-- Safe to run again after a build was cut short: a cancelled CONCURRENTLY
-- build leaves its index invalid, which IF NOT EXISTS would keep. Such an
-- index of this file is dropped first, to be built anew: a plain DROP (a
-- DO block runs in a transaction) that locks the table for a moment, and
-- only when there is one.
DO $$
DECLARE i regclass;
BEGIN
    -- Waiting for the table's lock would queue every write behind it:
    -- give up after 2 s, and the next run tries again.
    PERFORM set_config('lock_timeout', '2s', true);
    FOR i IN SELECT indexrelid::regclass FROM pg_index WHERE NOT indisvalid
        -- a build still running (its client gone) is left to finish
        AND indexrelid NOT IN (SELECT index_relid FROM pg_stat_progress_create_index)
        AND indexrelid IN (
        to_regclass('reservations_unstarted')) LOOP
        EXECUTE format('DROP INDEX %s', i);
    END LOOP;
END $$;
--bun:split
CREATE INDEX CONCURRENTLY IF NOT EXISTS reservations_unstarted ON reservations (created_at)
    WHERE status = 'reserved' AND NOT workflow_started;

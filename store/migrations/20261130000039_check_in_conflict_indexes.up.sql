-- Check-in conflicts (migration 37), outside a transaction, one statement
-- at a time, so scans at the door go on meanwhile.

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
        to_regclass('check_ins_conflict_with'),
        to_regclass('check_ins_event_conflicts')) LOOP
        EXECUTE format('DROP INDEX %s', i);
    END LOOP;
END $$;
--bun:split
-- The check of conflict kinds on the rows from before migration 37
-- (added NOT VALID there). VALIDATE locks out schema changes, not writes;
-- where 37 ran when it still checked at once, there is nothing to do.
ALTER TABLE check_ins VALIDATE CONSTRAINT check_ins_conflict_check;
--bun:split
-- conflict_with references check_ins: every check_ins row deleted (with
-- its ticket, as sandbox orders are after a day) looks for rows that
-- point at it, a scan of the whole table without this index. Few rows
-- point anywhere, hence partial.
CREATE INDEX CONCURRENTLY IF NOT EXISTS check_ins_conflict_with
    ON check_ins (conflict_with) WHERE conflict_with IS NOT NULL;
--bun:split
-- An event's conflicts in scanned_at order, page by page, and counted
-- (GET /v1/events/{id}/check-in/conflicts, the cabinet's check-in page),
-- without reading every scan of the event.
CREATE INDEX CONCURRENTLY IF NOT EXISTS check_ins_event_conflicts
    ON check_ins (event_id, scanned_at, id) WHERE conflict IS NOT NULL;

-- The sweep's lookup of live holds without a recorded workflow start. Built
-- concurrently (alone in its file, outside a transaction) so holds go on
-- meanwhile.
CREATE INDEX CONCURRENTLY IF NOT EXISTS reservations_unstarted ON reservations (created_at)
    WHERE status = 'reserved' AND NOT workflow_started;

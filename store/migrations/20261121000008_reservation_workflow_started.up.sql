-- Reservation workflows are started after the hold commits, off the request
-- path. The flag records that the start happened, so a start lost with a
-- crashed api is found and made by the worker's sweep.
ALTER TABLE reservations ADD COLUMN workflow_started boolean NOT NULL DEFAULT false;
UPDATE reservations SET workflow_started = true;
CREATE INDEX reservations_unstarted ON reservations (created_at) WHERE status = 'reserved' AND NOT workflow_started;

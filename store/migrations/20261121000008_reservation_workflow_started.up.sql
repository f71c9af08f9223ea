-- Reservation workflows are started after the hold commits, off the request
-- path. The flag records that the start happened, so a start lost with a
-- crashed api is found and made by the worker's sweep. Rows that exist
-- already had their workflows started before answering: true for them,
-- false for new rows (both metadata-only, no table rewrite).
ALTER TABLE reservations ADD COLUMN workflow_started boolean NOT NULL DEFAULT true;
ALTER TABLE reservations ALTER COLUMN workflow_started SET DEFAULT false;

-- A scan's record says which environment's door made it, so a sandbox
-- door's scans stay out of the organizer's real check-in figures; and it
-- outlives the ticket it names (a record of what happened at the door is
-- not deleted with anything).
ALTER TABLE check_ins ADD COLUMN is_test boolean NOT NULL DEFAULT false;
ALTER TABLE check_ins ADD COLUMN session_id bigint;
ALTER TABLE check_ins DROP CONSTRAINT check_ins_ticket_id_fkey;
ALTER TABLE check_ins ADD CONSTRAINT check_ins_ticket_id_fkey
    FOREIGN KEY (ticket_id) REFERENCES tickets (id) ON DELETE SET NULL;
-- Scans recorded before: their door's environment is their key's.
UPDATE check_ins c SET is_test = (a.environment = 'sandbox')
    FROM api_keys k JOIN applications a ON a.id = k.application_id
    WHERE k.id = c.api_key_id;

-- A scan made offline is recorded once: a device uploading its batch again
-- (it never saw the answer) finds its scans recorded. Per door environment:
-- the same device's scan uploaded with a sandbox key and then a real one is
-- two scans, each settled in its own environment.
CREATE UNIQUE INDEX check_ins_offline_once ON check_ins (company_id, is_test, event_id, device_id, barcode, scanned_at) WHERE offline;

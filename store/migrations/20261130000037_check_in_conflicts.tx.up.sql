-- A check-in conflict is decided once, when an offline scan settles, in
-- the scan's own transaction, and kept on its record: what the device says
-- it answered at the door (door_outcome; NULL: it did not say, and an
-- entry is taken as let in), the kind of conflict, and the recorded scan
-- it conflicts with (NULL for admitted_void: what the admission
-- contradicts is the ticket being void, not another scan).
ALTER TABLE check_ins ADD COLUMN door_outcome text;
ALTER TABLE check_ins ADD COLUMN conflict text;
-- NOT VALID: checking the rows would scan the whole table while this
-- transaction holds it locked against scans at the door. New rows are
-- checked; migration 39 validates the old ones without that lock. (The
-- foreign key is checked at once: a new column has nothing to check.)
ALTER TABLE check_ins ADD CONSTRAINT check_ins_conflict_check
    CHECK (conflict IN ('two_doors', 'admitted_while_inside', 'admitted_void')) NOT VALID;
ALTER TABLE check_ins ADD COLUMN conflict_with bigint REFERENCES check_ins (id);

-- The conflicts listed until now (an offline entry settled
-- already_checked_in whose ticket's last admission before it came from
-- another device, or from another gate when it named no device) stay
-- listed, as two_doors. The other kinds are decided from now on.
UPDATE check_ins c SET conflict = 'two_doors', conflict_with = x.admitted_id
FROM (SELECT s.id, a.id AS admitted_id
    FROM check_ins s
    JOIN LATERAL (SELECT a.id, a.gate, a.device_id FROM check_ins a
        WHERE a.ticket_id = s.ticket_id AND a.outcome = 'admitted' AND a.id < s.id
        ORDER BY a.id DESC LIMIT 1) a ON true
    WHERE s.offline AND s.direction = 'in' AND s.outcome = 'already_checked_in'
        AND (a.device_id <> '' AND a.device_id <> s.device_id OR a.device_id = '' AND a.gate <> s.gate)) x
WHERE c.id = x.id;

-- Best-available seats: each seat's place in its row (pos, 1-based) and
-- its rank, lower is better. The catalog import writes both from the file:
-- an explicit rank, or zones and rows in the file's order (the first
-- nearer the stage), then seats nearer the row's centre (see
-- catalogfile.SeatRank). A group "together" is consecutive pos in one row.
ALTER TABLE scheme_seats ADD COLUMN pos integer NOT NULL DEFAULT 0;
ALTER TABLE scheme_seats ADD COLUMN rank integer NOT NULL DEFAULT 0;
ALTER TABLE event_seats ADD COLUMN pos integer NOT NULL DEFAULT 0;
ALTER TABLE event_seats ADD COLUMN rank integer NOT NULL DEFAULT 0;
CREATE INDEX event_seats_rank ON event_seats (event_id, rank, seat_id);

-- Seats imported before: the same rule, with the file's order read back as
-- the number order (left-padded, so numbers sort as numbers) and zones in
-- id order, until the next import writes the file's own.
UPDATE scheme_seats s SET pos = r.pos, rank = r.rank
FROM (
    SELECT scheme_id, seat_id, row_number() OVER w AS pos,
        (dense_rank() OVER (PARTITION BY scheme_id ORDER BY zone_id) - 1) * 1000000
            + (dense_rank() OVER (PARTITION BY scheme_id, zone_id ORDER BY lpad(row, 12, '0')) - 1) * 1000
            + abs(2 * row_number() OVER w - (count(*) OVER (PARTITION BY scheme_id, zone_id, row) + 1)) AS rank
    FROM scheme_seats
    WINDOW w AS (PARTITION BY scheme_id, zone_id, row ORDER BY lpad(number, 12, '0'))
) r
WHERE s.scheme_id = r.scheme_id AND s.seat_id = r.seat_id;

UPDATE event_seats es SET pos = ss.pos, rank = ss.rank
FROM events e JOIN scheme_seats ss ON ss.scheme_id = e.scheme_id
WHERE es.event_id = e.id AND es.seat_id = ss.seat_id;

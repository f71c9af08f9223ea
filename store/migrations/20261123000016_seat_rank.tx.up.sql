-- Best-available seats: each seat's place in its row (pos, 1-based, in
-- seat-number order) and its rank, lower is better: rows nearer the stage
-- first (rows in row-number order, per zone), then seats nearer the row's
-- centre. A group "together" is consecutive pos in one row.
ALTER TABLE event_seats ADD COLUMN pos integer NOT NULL DEFAULT 0;
ALTER TABLE event_seats ADD COLUMN rank integer NOT NULL DEFAULT 0;
CREATE INDEX event_seats_rank ON event_seats (event_id, rank, seat_id);

-- rank_event_seats computes pos and rank of an event's seats; the catalog
-- import calls it after storing them. Numbers and rows sort as numbers when
-- they are (left-padded), else as text.
CREATE FUNCTION rank_event_seats(ev bigint) RETURNS void LANGUAGE sql AS $$
    UPDATE event_seats s SET pos = r.pos, rank = r.rank
    FROM (
        SELECT seat_id, row_number() OVER w AS pos,
            (dense_rank() OVER (PARTITION BY zone_id ORDER BY lpad(row, 12, '0')) - 1) * 1000
                + abs(2 * row_number() OVER w - (count(*) OVER (PARTITION BY zone_id, row) + 1)) AS rank
        FROM event_seats WHERE event_id = ev
        WINDOW w AS (PARTITION BY zone_id, row ORDER BY lpad(number, 12, '0'))
    ) r
    WHERE s.event_id = ev AND s.seat_id = r.seat_id AND (s.pos, s.rank) IS DISTINCT FROM (r.pos, r.rank);
$$;

SELECT rank_event_seats(id) FROM events WHERE scheme_id IS NOT NULL;

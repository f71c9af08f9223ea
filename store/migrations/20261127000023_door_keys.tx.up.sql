-- A door key's limits (one event, one gate) belong to door keys only: a
-- key limited to an event carries the checkin scope and nothing else.
ALTER TABLE api_keys ADD CONSTRAINT api_keys_door_limits
    CHECK ((checkin_event_id IS NULL AND checkin_gate IS NULL) OR scopes = ARRAY['checkin']::text[]);

-- A door key carries checkin alone, so it reads nothing of orders or
-- buyers. Keys made while checkin was among the default scopes carry it
-- with the partner scopes: they lose it (none was made to scan).
UPDATE api_keys SET scopes = array_remove(scopes, 'checkin')
    WHERE 'checkin' = ANY (scopes) AND cardinality(scopes) > 1;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_checkin_alone
    CHECK (NOT ('checkin' = ANY (scopes)) OR scopes = ARRAY['checkin']::text[]);

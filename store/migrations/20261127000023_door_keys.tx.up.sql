-- A door key's limits (one event, one gate) belong to door keys only: a
-- key limited to an event carries the checkin scope and nothing else.
ALTER TABLE api_keys ADD CONSTRAINT api_keys_door_limits
    CHECK ((checkin_event_id IS NULL AND checkin_gate IS NULL) OR scopes = ARRAY['checkin']::text[]);

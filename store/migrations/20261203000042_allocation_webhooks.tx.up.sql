-- allocation.changed webhooks (docs/api.md, "Webhooks"): an event about a
-- sales channel's allocation goes only to the endpoints of the channel's
-- applications, one row per environment that has such an endpoint.
-- channel_id NULL: the event goes to every endpoint of its environment, as
-- before. catalog_event_id is the event (of the catalog) the allocation is
-- on. No foreign keys, as order_id has none: outbox rows stay until their
-- retention ends, whatever becomes of what they name. IF NOT EXISTS: a
-- crash between the commit and its record runs it again.
ALTER TABLE webhook_events ADD COLUMN IF NOT EXISTS channel_id bigint;
ALTER TABLE webhook_events ADD COLUMN IF NOT EXISTS catalog_event_id bigint;

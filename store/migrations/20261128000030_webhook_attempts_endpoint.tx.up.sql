-- The cabinet shows a failing endpoint's last error: its latest attempt,
-- of whichever delivery, found without reading all of its attempts.
CREATE INDEX webhook_attempts_endpoint ON webhook_attempts (endpoint_id, attempted_at DESC, id DESC);

-- The test gateway, like a real provider, reports a taken payment until the
-- service acknowledges it: reported_at is set once a callback got a 2xx.
ALTER TABLE gateway_payments ADD COLUMN reported_at timestamptz;

-- How many times a delivery was asked to go out again (a redelivery). An
-- attempt records its outcome on the delivery only while the count is what
-- it read before its POST: a run that a redelivery replaced may still be
-- finishing its attempt, and its late "delivered" must not mark the
-- redelivery done before the new run has sent anything.
--
-- A constant default: instant, old rows read 0.
ALTER TABLE webhook_deliveries ADD COLUMN IF NOT EXISTS redeliveries integer NOT NULL DEFAULT 0;

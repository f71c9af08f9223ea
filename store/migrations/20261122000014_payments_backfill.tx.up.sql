-- Orders and test gateway payments from before payments were recorded:
-- gateway orders took the test gateway (the only one there was), and every
-- paid test payment had been reported already (its callback was answered,
-- or its money returned): nothing to report again.
UPDATE orders SET gateway = 'test' WHERE payment = 'gateway' AND gateway IS NULL;
UPDATE gateway_payments SET reported_at = updated_at WHERE status = 'paid' AND reported_at IS NULL;

-- The sweeps take turns over the rows they touch (round robin), so rows
-- that keep failing never starve the others.
ALTER TABLE payments ADD COLUMN swept_at timestamptz;
ALTER TABLE refunds ADD COLUMN swept_at timestamptz;
DROP INDEX payments_open;
CREATE INDEX payments_open ON payments (swept_at NULLS FIRST, received_at) WHERE status IN ('received', 'refund_due');
DROP INDEX refunds_open;
CREATE INDEX refunds_open ON refunds (swept_at NULLS FIRST, created_at) WHERE status IN ('pending', 'failed');

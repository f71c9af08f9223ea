-- An order's partner reference and metadata (docs/api.md, "Reconciling
-- your orders"): the partner's own order id, and string pairs of its own,
-- kept as sent and echoed on every order the API returns, and the lookups
-- GET /v1/orders gains by them.
--
-- Outside a transaction, one statement at a time, as migrations 27 and 39:
-- the indexes are built CONCURRENTLY, so sales go on meanwhile. The new
-- columns are instant (no default to write into old rows but a constant);
-- their checks are added NOT VALID and validated apart, which locks out
-- schema changes only, not writes.
--
-- The lookups and their indexes, all within the company (the environment,
-- is_test, is a filter over the few rows found):
--   * filter.payment_id: orders_company_payment_id (migration 27) already;
--   * filter.email, lower(customer_email) = lower(...): orders_company_email
--     (migration 27; text_pattern_ops serves = as well as a prefix);
--   * filter.reference: orders_company_reference below, partial (most
--     orders have none). Not unique: a partner may order a cart again with
--     the same reference after its first order expired;
--   * filter.metadata, metadata @> '{"key": "value"}': orders_metadata
--     below, a GIN index (jsonb_path_ops: containment only, smaller than
--     the default). It cannot lead with company_id (a GIN index of a plain
--     column needs btree_gin, an extension): a pair is the partner's own,
--     nearly always selective, and the company and environment filter the
--     few rows it finds. Partial on metadata <> '{}', which the query
--     states too, so orders without metadata cost it nothing.

-- Safe to run again after a build was cut short: a cancelled CONCURRENTLY
-- build leaves its index invalid, which IF NOT EXISTS would keep. Such an
-- index of this file is dropped first, to be built anew: a plain DROP (a
-- DO block runs in a transaction) that locks the table for a moment, and
-- only when there is one.
DO $$
DECLARE i regclass;
BEGIN
    -- Waiting for the table's lock would queue every write behind it:
    -- give up after 2 s, and the next run tries again.
    PERFORM set_config('lock_timeout', '2s', true);
    FOR i IN SELECT indexrelid::regclass FROM pg_index WHERE NOT indisvalid
        -- a build still running (its client gone) is left to finish
        AND indexrelid NOT IN (SELECT index_relid FROM pg_stat_progress_create_index)
        AND indexrelid IN (
        to_regclass('orders_company_reference'),
        to_regclass('orders_metadata')) LOOP
        EXECUTE format('DROP INDEX %s', i);
    END LOOP;
END $$;
--bun:split
-- The bounds are internal/orders' (reference.go), checked there with a
-- 422 naming the member; the checks keep any other writer inside them.
DO $$
BEGIN
    -- A moment's lock of the table each: give up rather than queue every
    -- write behind a long transaction; the next run tries again.
    PERFORM set_config('lock_timeout', '2s', true);
    ALTER TABLE orders ADD COLUMN IF NOT EXISTS reference text,
        ADD COLUMN IF NOT EXISTS metadata jsonb NOT NULL DEFAULT '{}';
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = 'orders'::regclass AND conname = 'orders_reference_check') THEN
        ALTER TABLE orders ADD CONSTRAINT orders_reference_check
            CHECK (char_length(reference) BETWEEN 1 AND 64) NOT VALID;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = 'orders'::regclass AND conname = 'orders_metadata_check') THEN
        ALTER TABLE orders ADD CONSTRAINT orders_metadata_check
            CHECK (jsonb_typeof(metadata) = 'object') NOT VALID;
    END IF;
END $$;
--bun:split
ALTER TABLE orders VALIDATE CONSTRAINT orders_reference_check;
--bun:split
ALTER TABLE orders VALIDATE CONSTRAINT orders_metadata_check;
--bun:split
CREATE INDEX CONCURRENTLY IF NOT EXISTS orders_company_reference
    ON orders (company_id, reference) WHERE reference IS NOT NULL;
--bun:split
CREATE INDEX CONCURRENTLY IF NOT EXISTS orders_metadata
    ON orders USING gin (metadata jsonb_path_ops) WHERE metadata <> '{}';

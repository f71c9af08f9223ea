-- The cabinet's order search (store/cabinet_orders.go): each kind of
-- search is an index range scan within the company. Built concurrently,
-- one statement at a time outside a transaction, so sales go on meanwhile.
-- An order id is the primary key; a ticket's barcode and number are unique
-- already.

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
        to_regclass('orders_company_email'),
        to_regclass('orders_company_name'),
        to_regclass('orders_company_name_last'),
        to_regclass('orders_company_payment_id'),
        to_regclass('orders_sandbox_created')) LOOP
        EXECUTE format('DROP INDEX %s', i);
    END LOOP;
END $$;
--bun:split
-- A buyer's e-mail, and their name either way round ("anna pavlova",
-- "pavlova anna"), by prefix: lower(...) LIKE 'prefix%'.
CREATE INDEX CONCURRENTLY IF NOT EXISTS orders_company_email
    ON orders (company_id, lower(customer_email) text_pattern_ops);
--bun:split
CREATE INDEX CONCURRENTLY IF NOT EXISTS orders_company_name
    ON orders (company_id, lower(customer_first_name || ' ' || customer_last_name) text_pattern_ops);
--bun:split
CREATE INDEX CONCURRENTLY IF NOT EXISTS orders_company_name_last
    ON orders (company_id, lower(customer_last_name || ' ' || customer_first_name) text_pattern_ops);
--bun:split
-- The payment's id: a partner's external payment id, or the gateway's.
CREATE INDEX CONCURRENTLY IF NOT EXISTS orders_company_payment_id
    ON orders (company_id, payment_id) WHERE payment_id IS NOT NULL;
--bun:split
-- The sandbox list, newest first: production orders (orders_company_created)
-- would otherwise be skipped one by one to reach the few sandbox ones (they
-- are deleted after a day).
CREATE INDEX CONCURRENTLY IF NOT EXISTS orders_sandbox_created
    ON orders (company_id, created_at DESC) WHERE is_test;

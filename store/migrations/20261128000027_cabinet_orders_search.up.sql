-- The cabinet's order search (store/cabinet_orders.go): each kind of
-- search is an index range scan within the company. Built concurrently,
-- one statement at a time outside a transaction, so sales go on meanwhile.
-- An order id is the primary key; a ticket's barcode and number are unique
-- already.

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

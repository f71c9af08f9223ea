-- The cabinet's create form carries a one-time token; the endpoint it made
-- claims it here, in the insert's own transaction, so two submissions of
-- one form (a double click) make one endpoint even when they race.
ALTER TABLE webhook_endpoints ADD COLUMN creation_token text;
CREATE UNIQUE INDEX webhook_endpoints_creation_token ON webhook_endpoints (company_id, creation_token);

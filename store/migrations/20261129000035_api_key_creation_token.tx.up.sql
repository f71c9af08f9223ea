-- The cabinet's key form carries a one-time token; the key it made claims
-- it here, in the insert's own transaction, so two submissions of one form
-- (a double click, a resent POST) make one key even when they race.
ALTER TABLE api_keys ADD COLUMN creation_token text;
CREATE UNIQUE INDEX api_keys_creation_token ON api_keys (creation_token);

-- The cabinet's key form carries a one-time token. The key it made claims
-- the token's hash here, in the insert's own transaction, so two
-- submissions of one form (a double click, a resent POST) make one key
-- even when they race; reveal holds the key's plaintext sealed under the
-- token (which is not stored) until the created page takes it, once.
ALTER TABLE api_keys ADD COLUMN creation_token bytea, ADD COLUMN reveal bytea;
CREATE UNIQUE INDEX api_keys_creation_token ON api_keys (creation_token);

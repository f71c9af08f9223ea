-- A retry that serialises the same JSON another way (whitespace, member
-- order) is the same request: its canonical JSON's hash is kept beside the
-- body's byte hash. body_hash keeps its meaning (the bytes), so an
-- instance of the version before, during a rolling deploy or after a
-- rollback, still matches a byte-identical retry. NULL: the body is not
-- JSON (compared by its bytes only).
ALTER TABLE idempotency_keys ADD COLUMN body_hash_canonical bytea;

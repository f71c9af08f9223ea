-- Per-key rate limits; NULL takes the service default (20/s, burst 40).
ALTER TABLE api_keys ADD COLUMN rate_limit_rps real CHECK (rate_limit_rps > 0),
                     ADD COLUMN rate_limit_burst integer CHECK (rate_limit_burst > 0);

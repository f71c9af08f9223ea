-- The client addresses each cabinet user signed in from (an IPv4 address or
-- an IPv6 /64, as the sign-in limits group them), with the latest time.
-- Someone failing passwords for a user's e-mail from elsewhere does not
-- keep the user out from these (see docs/decisions.md). Rows go 90 days
-- after the last sign-in from the address; setting a password through a
-- link keeps only the address it was set from.
CREATE TABLE cabinet_known_addresses (
    user_id      bigint NOT NULL REFERENCES cabinet_users (id) ON DELETE CASCADE,
    address      text NOT NULL,
    signed_in_at timestamptz NOT NULL,
    PRIMARY KEY (user_id, address)
);
CREATE INDEX cabinet_known_addresses_signed_in ON cabinet_known_addresses (signed_in_at);

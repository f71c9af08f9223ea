-- A second factor for signing in to the cabinet (docs/cabinet.md,
-- "Two-factor sign-in"): a TOTP authenticator (RFC 6238) and ten one-time
-- recovery codes, of the person (an e-mail address: one password, one
-- authenticator, whatever the companies).
--
-- The TOTP secret is kept sealed (AES-256-GCM under a key derived from the
-- order token secret, as events' signing keys are), never in the clear.
-- confirmed_at NULL: enrolment begun, not confirmed with a code yet (it
-- asks for nothing at sign-in). last_step is the last time step (30 s) a
-- code was accepted for: a code, or any older one, is refused after it
-- (no replay within its window). IF NOT EXISTS: a crash between the commit
-- and its record runs it again.
CREATE TABLE IF NOT EXISTS cabinet_two_factor (
    email         text PRIMARY KEY REFERENCES cabinet_people (email) ON DELETE CASCADE,
    sealed_secret bytea NOT NULL,
    confirmed_at  timestamptz,
    last_step     bigint NOT NULL DEFAULT 0,
    created_at    timestamptz NOT NULL DEFAULT now()
);

-- Recovery codes, SHA-256 of each (random, 50 bits: not guessable within
-- the sign-in limits), each spent once.
CREATE TABLE IF NOT EXISTS cabinet_recovery_codes (
    email     text NOT NULL REFERENCES cabinet_two_factor (email) ON DELETE CASCADE,
    code_hash bytea NOT NULL,
    used_at   timestamptz,
    PRIMARY KEY (email, code_hash)
);

-- The company's policy: owners and finance (who move money and manage the
-- team) must sign in with a second factor. Off for every company until its
-- owner turns it on (docs/cabinet.md says why and recommends it).
ALTER TABLE companies ADD COLUMN IF NOT EXISTS two_factor_required boolean NOT NULL DEFAULT false;

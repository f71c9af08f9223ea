-- An e-mail address is one person, who may belong to the teams of several
-- companies. cabinet_users.email was unique across every company, so an
-- address one company used could join no other, and inviting it told the
-- inviting owner that it was a user elsewhere. Now each cabinet_users row
-- is the person's membership of one company (its role, invitation,
-- removal and sessions), unique per company, and the person's password is
-- one, in cabinet_people: one sign-in, whatever the companies.
CREATE TABLE cabinet_people (
    email         text PRIMARY KEY CHECK (email = lower(email) AND email LIKE '%_@_%'),
    password_hash text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
-- Each address had one user until now: its password becomes the person's.
INSERT INTO cabinet_people (email, password_hash, created_at, updated_at)
    SELECT email, password_hash, created_at, updated_at FROM cabinet_users;

-- A membership is joined once its link was used (before, a password set
-- said so, but a person invited by a second company has one already):
-- until then it is an invitation, and neither signs in nor counts as an
-- active owner. updated_at is the best the old rows know of when.
ALTER TABLE cabinet_users ADD COLUMN joined_at timestamptz;
UPDATE cabinet_users SET joined_at = updated_at WHERE password_hash IS NOT NULL;

-- The team page's last sign-in is the membership's own: the addresses
-- below are the person's and would show one company the person's
-- sign-ins to another.
ALTER TABLE cabinet_users ADD COLUMN last_sign_in_at timestamptz;
UPDATE cabinet_users u SET last_sign_in_at = k.at
    FROM (SELECT user_id, max(signed_in_at) AS at FROM cabinet_known_addresses GROUP BY user_id) k
    WHERE k.user_id = u.id;

ALTER TABLE cabinet_users DROP COLUMN password_hash;
ALTER TABLE cabinet_users DROP CONSTRAINT cabinet_users_email_key;
ALTER TABLE cabinet_users ADD CONSTRAINT cabinet_users_company_email UNIQUE (company_id, email);
ALTER TABLE cabinet_users ADD CONSTRAINT cabinet_users_person FOREIGN KEY (email) REFERENCES cabinet_people (email);
-- Signing in reads a person's memberships.
CREATE INDEX cabinet_users_email ON cabinet_users (email);

-- The addresses a person signed in from exempt the person from the
-- per-e-mail sign-in budget (the budget is the address's, so is this).
ALTER TABLE cabinet_known_addresses ADD COLUMN email text REFERENCES cabinet_people (email) ON DELETE CASCADE;
UPDATE cabinet_known_addresses k SET email = u.email FROM cabinet_users u WHERE u.id = k.user_id;
ALTER TABLE cabinet_known_addresses ALTER COLUMN email SET NOT NULL;
ALTER TABLE cabinet_known_addresses DROP CONSTRAINT cabinet_known_addresses_pkey;
ALTER TABLE cabinet_known_addresses DROP COLUMN user_id;
ALTER TABLE cabinet_known_addresses ADD PRIMARY KEY (email, address);

-- A link the operator issues to set a new password (ticketctl user link
-- --reset) sets one even for a membership not joined yet, whose link would
-- otherwise ask for the password the person has: a person whose only
-- membership is an invitation (removed and invited back) and who forgot
-- that password had no way in. Links made before are what they were.
-- IF NOT EXISTS: a crash between the commit and its record runs it again.
ALTER TABLE cabinet_signin_links ADD COLUMN IF NOT EXISTS resets_password boolean NOT NULL DEFAULT false;

-- The cabinet's team page: the owner invites people, changes their roles
-- and removes them. invited_by is who invited a user (NULL: made by
-- ticketctl, or before invitations). The index serves the team page and
-- the count of a company's active owners, which every role change and
-- removal makes under a lock of the company's row.
ALTER TABLE cabinet_users ADD COLUMN invited_by bigint REFERENCES cabinet_users (id) ON DELETE SET NULL;
CREATE INDEX cabinet_users_company ON cabinet_users (company_id, role);

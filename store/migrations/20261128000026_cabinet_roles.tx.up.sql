-- A company's cabinet is used by a team: each user has one role, and the
-- cabinet decides every page and action by it. Users made before roles
-- were their company's only user, so they become its owners.
ALTER TABLE cabinet_users
    ADD COLUMN role text NOT NULL DEFAULT 'owner'
        CHECK (role IN ('owner', 'finance', 'support', 'door', 'developer'));

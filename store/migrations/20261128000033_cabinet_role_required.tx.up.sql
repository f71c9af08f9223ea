-- The owner default only filled in the users made before roles. From now
-- on every user is made with the role someone chose: a forgotten role is
-- an error, never an owner.
ALTER TABLE cabinet_users ALTER COLUMN role DROP DEFAULT;

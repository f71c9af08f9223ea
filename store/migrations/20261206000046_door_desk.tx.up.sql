-- The door desk (docs/cabinet.md, "The door desk"): a cabinet user admits
-- a ticket by hand, or undoes its admission, each with a reason. Both are
-- rows of check_ins beside the scanners' scans, so the door's figures,
-- arrivals, conflicts and offline uploads read one record:
--
--   * a manual admission is a scan without a key (api_key_id NULL), made by
--     the user (cabinet_user_id) for the reason given; store.CheckIn
--     decides it as it decides a scanner's;
--   * an undo is a row of outcome 'undone' by the user for the reason
--     given; the admissions it withdrew point to it (undone_by).
--
-- IF NOT EXISTS and DROP … IF EXISTS: a crash between the commit and its
-- record runs it again.
ALTER TABLE check_ins ALTER COLUMN api_key_id DROP NOT NULL;
ALTER TABLE check_ins ADD COLUMN IF NOT EXISTS cabinet_user_id bigint REFERENCES cabinet_users (id);
ALTER TABLE check_ins ADD COLUMN IF NOT EXISTS reason text;
ALTER TABLE check_ins ADD COLUMN IF NOT EXISTS undone_by bigint REFERENCES check_ins (id);

-- A row is a scanner's (its key) or a person's (who, and why: at most 500
-- characters). NOT VALID: every row before has its key.
ALTER TABLE check_ins DROP CONSTRAINT IF EXISTS check_ins_by_check;
ALTER TABLE check_ins ADD CONSTRAINT check_ins_by_check CHECK (
    api_key_id IS NOT NULL AND cabinet_user_id IS NULL AND reason IS NULL
    OR api_key_id IS NULL AND cabinet_user_id IS NOT NULL AND char_length(reason) BETWEEN 1 AND 500) NOT VALID;

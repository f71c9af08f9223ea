-- A company's report days are its own local days: the IANA time zone the
-- organizer works in. Companies made before it keep UTC days, as before.
-- Postgres refuses a name it does not know when the check converts a time
-- with it (the application also refuses names Go cannot load).
ALTER TABLE companies
    ADD COLUMN timezone text NOT NULL DEFAULT 'UTC'
        CHECK (timezone <> '' AND ('2000-01-01 00:00:00+00'::timestamptz AT TIME ZONE timezone) IS NOT NULL);

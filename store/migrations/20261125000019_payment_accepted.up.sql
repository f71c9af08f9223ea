-- A partner's external payment is accepted by its confirm request in
-- Postgres before the order's workflow applies it: the order keeps the
-- payment id and when it was accepted, and from then on its payment window
-- no longer applies (the seats stay the order's, held without a deadline,
-- until the order is paid). See store.AcceptExternalPayment.
ALTER TABLE orders ADD COLUMN payment_accepted_at timestamptz;

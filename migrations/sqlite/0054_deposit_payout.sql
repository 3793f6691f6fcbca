-- What a final bill leaves of a deposit goes back to the card it was paid with: the processor's
-- payment that paid it (`processor_payment_id`, for `charged_cents`), and what was refunded of
-- it (`paid_out_cents`, when). The processor's customers are found by their id too, for the
-- cards it reports saved.

ALTER TABLE deposits ADD COLUMN processor_payment_id TEXT;
ALTER TABLE deposits ADD COLUMN charged_cents INTEGER NOT NULL DEFAULT 0;
ALTER TABLE deposits ADD COLUMN paid_out_cents INTEGER NOT NULL DEFAULT 0;
ALTER TABLE deposits ADD COLUMN paid_out_at TEXT;

CREATE INDEX processor_customers_customer ON processor_customers (app_uuid, customer_id);

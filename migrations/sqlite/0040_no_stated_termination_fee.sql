-- The product charges no early termination fee (its Terms of Service say so), so no priced
-- plan or contract states one: plans priced before carried their group's fee.
UPDATE plans SET early_termination_fee_cents = 0 WHERE early_termination_fee_cents <> 0;
UPDATE contracts SET rates = json_set(rates, '$.early_termination_fee_cents', 0)
WHERE json_extract(rates, '$.early_termination_fee_cents') <> 0;

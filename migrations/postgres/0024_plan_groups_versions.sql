-- Plan groups edited in the dashboard, and live apps that partners request. A group carries the
-- number of its current version and every version's values are kept, with who made it and
-- when; a priced plan notes the version it was priced with (its rates are its own copy either
-- way). Groups that exist already become their version 1. An app has at most one
-- month-to-month default. A partner's request for a live app waits for the operator, who
-- approves it (the app is created) or declines it (with a reason the partner sees).
ALTER TABLE plan_groups ADD COLUMN version BIGINT NOT NULL DEFAULT 1;
ALTER TABLE plans ADD COLUMN plan_group_version BIGINT NOT NULL DEFAULT 1;
CREATE UNIQUE INDEX plan_groups_month_to_month_default ON plan_groups (app_uuid)
    WHERE is_month_to_month_default;

CREATE TABLE plan_group_versions (
    plan_group_uuid UUID NOT NULL REFERENCES plan_groups (uuid),
    version BIGINT NOT NULL,
    name TEXT NOT NULL,
    plan_type TEXT NOT NULL CHECK (plan_type IN ('fixed', 'month_to_month')),
    term_months BIGINT NOT NULL,
    base_charge_cents_per_month BIGINT NOT NULL,
    energy_margin_cents_per_kwh TEXT NOT NULL,
    partner_commission_cents_per_month BIGINT NOT NULL,
    solar_buyback_cents_per_kwh TEXT NOT NULL,
    early_termination_fee_cents BIGINT NOT NULL,
    renewable_percent BIGINT NOT NULL,
    tos_version TEXT NOT NULL,
    is_month_to_month_default BOOLEAN NOT NULL,
    position BIGINT NOT NULL,
    -- Who: a user's e-mail, or `cli` / `system`.
    changed_by TEXT NOT NULL,
    changed_by_user_uuid UUID REFERENCES dashboard_users (uuid),
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (plan_group_uuid, version)
);
CREATE INDEX plan_group_versions_tos ON plan_group_versions (tos_version);

INSERT INTO plan_group_versions (plan_group_uuid, version, name, plan_type, term_months,
    base_charge_cents_per_month, energy_margin_cents_per_kwh, partner_commission_cents_per_month,
    solar_buyback_cents_per_kwh, early_termination_fee_cents, renewable_percent, tos_version,
    is_month_to_month_default, position, changed_by, changed_by_user_uuid, created_at)
SELECT uuid, 1, name, plan_type, term_months, base_charge_cents_per_month,
    energy_margin_cents_per_kwh, partner_commission_cents_per_month, solar_buyback_cents_per_kwh,
    early_termination_fee_cents, renewable_percent, tos_version, is_month_to_month_default,
    position, 'system', NULL, created_at
FROM plan_groups;

CREATE TABLE live_app_requests (
    uuid UUID PRIMARY KEY,
    organisation_uuid UUID NOT NULL REFERENCES organisations (uuid),
    -- The member who asked: their e-mail, and who they are while they exist.
    requested_by TEXT NOT NULL,
    requested_by_user_uuid UUID REFERENCES dashboard_users (uuid),
    display_name TEXT NOT NULL,
    slug TEXT NOT NULL,
    reason TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'declined')),
    -- Why the operator declined (shown to the partner).
    decision_reason TEXT,
    decided_by TEXT,
    decided_at TIMESTAMPTZ,
    -- The live app an approval created.
    app_uuid UUID REFERENCES apps (uuid),
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX live_app_requests_organisation ON live_app_requests (organisation_uuid, created_at);
CREATE INDEX live_app_requests_status ON live_app_requests (status, created_at);
-- Two pending requests may not ask for one slug.
CREATE UNIQUE INDEX live_app_requests_pending_slug ON live_app_requests (slug)
    WHERE status = 'pending';

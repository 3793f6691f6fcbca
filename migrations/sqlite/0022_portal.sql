-- The customer portal: the short text an app's hosted landing page (/go/<slug>) shows, set in
-- the dashboard or with `apps set-landing-text`; and the portal's sign-in, which finds every
-- account of an e-mail address across apps.
ALTER TABLE apps ADD COLUMN landing_text TEXT;
CREATE INDEX accounts_email ON accounts (email, created_at DESC);

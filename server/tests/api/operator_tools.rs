//! The operator's tools in the dashboard: keys have names; revoking a key, disabling a webhook
//! endpoint and rotating its secret ask first, naming what they affect; a form that makes a
//! secret answers with a redirect and the secret is shown once after it (a reload makes
//! nothing twice and shows nothing twice); a refused value stays in its field with the reason
//! beside it; the audit log filters, pages and links.

use reqwest::StatusCode;
use server::{domain::users::Role, store::audit::AuditRow};
use uuid::Uuid;

use crate::dashboard::{create_sandbox_app, signed_in, Browser, Page};

/// A token's display prefix: its kind and the first 8 characters of its secret.
fn prefix_of(token: &str) -> &str {
    assert!(token.starts_with("swb_sandbox_"), "{token}");
    &token[.."swb_sandbox_".len() + 8]
}

/// The text of the element with `id`'s `value` attribute (an input's typed value).
fn value_of(page: &Page, id: &str) -> String {
    let at = page
        .text
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id} in {}", page.text));
    let tag_end = at + page.text[at..].find('>').unwrap();
    let tag = &page.text[at..tag_end];
    tag.find("value=\"")
        .map(|v| {
            let rest = &tag[v + 7..];
            rest[..rest.find('"').unwrap()].to_owned()
        })
        .unwrap_or_default()
}

/// Whether the field `id` is marked invalid and points at its message.
fn marked_invalid(page: &Page, id: &str) -> bool {
    let at = page.text.find(&format!("id=\"{id}\"")).unwrap();
    let tag_end = at + page.text[at..].find('>').unwrap();
    let tag = &page.text[at..tag_end];
    tag.contains("aria-invalid=\"true\"")
        && tag.contains(&format!("aria-describedby=\"{id}-error\""))
}

async fn rows(app: &crate::helpers::TestApp, sql: &str) -> usize {
    app.query_texts(sql).await.len()
}

async fn endpoint_of(browser: &Browser, page: &str, url: &str) -> String {
    let r = browser
        .submit(page, &format!("{page}/webhooks"), &[("url", url)])
        .await;
    browser.shown(&r).await;
    let listed = browser.get(page).await;
    let at =
        listed.text.find(&format!("{page}/webhooks/")).unwrap() + page.len() + "/webhooks/".len();
    format!("{page}/webhooks/{}", &listed.text[at..at + 36])
}

both_engines! {
    async fn a_key_is_named_and_revoked_only_after_a_confirmation_that_names_it(app) {
        let browser = signed_in(&app, "member@example.com", Role::Partner, Some("Acme")).await;
        let (uuid, first) = create_sandbox_app(&browser, "Acme Energy").await;
        let page = format!("/dashboard/apps/{uuid}");
        assert!(browser.get(&page).await.text.contains("First key"), "the first key has a name");

        // A key needs a name: refused, said beside the field, and no key is made.
        let keys = "SELECT prefix FROM app_tokens WHERE app_uuid IN (SELECT uuid FROM apps WHERE display_name = 'Acme Energy')";
        let r = browser.submit(&page, &format!("{page}/tokens"), &[("name", "   ")]).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
        assert!(r.text.contains("id=\"key_name-error\""), "{}", r.text);
        assert!(r.text.contains("Give the key a name"), "{}", r.text);
        assert!(marked_invalid(&r, "key_name"));
        assert_eq!(rows(&app, keys).await, 1);

        let r = browser.submit(&page, &format!("{page}/tokens"), &[("name", "Billing server")]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "a redirect, so a reload makes no second key");
        let shown = browser.shown(&r).await;
        let second = shown.shown_token();
        assert!(shown.text.contains("Billing server"), "{}", shown.text);
        assert!(!r.location.contains(&second), "never in the address");
        assert_eq!(app.get("/v1/app", &second).await.status, StatusCode::OK);
        assert_eq!(rows(&app, keys).await, 2);

        let listed = browser.get(&page).await;
        assert!(listed.text.contains("<td>Billing server</td>"), "{}", listed.text);
        let prefix = prefix_of(&second);
        let confirm_href = format!("{page}/tokens/revoke?prefix={prefix}");
        assert!(listed.text.contains(&confirm_href), "Revoke leads to its confirmation");

        // The confirmation names the key, its app and what stops working; nothing changes yet.
        let confirm = browser.get(&confirm_href).await;
        assert_eq!(confirm.status, StatusCode::OK, "{}", confirm.text);
        for said in ["Revoke the key “Billing server”?", prefix, "Acme Energy", "stops working at once", "other active key keeps working", "cannot be undone"] {
            assert!(confirm.text.contains(said), "{said}: {}", confirm.text);
        }
        assert!(confirm.text.contains("name=\"confirm\" value=\"yes\""));
        assert_eq!(app.get("/v1/app", &second).await.status, StatusCode::OK, "asking revokes nothing");

        // A post without the confirmation asks the same, and revokes nothing.
        let r = browser.submit(&page, &format!("{page}/tokens/revoke"), &[("prefix", prefix)]).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert!(r.text.contains("Revoke the key “Billing server”?"));
        assert_eq!(app.get("/v1/app", &second).await.status, StatusCode::OK);

        let r = browser.submit(&confirm_href, &format!("{page}/tokens/revoke"), &[("prefix", prefix), ("confirm", "yes")]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        assert!(browser.follow(&r).await.text.contains("The key was revoked."));
        assert_eq!(app.get("/v1/app", &second).await.status, StatusCode::UNAUTHORIZED);
        assert_eq!(app.get("/v1/app", &first).await.status, StatusCode::OK);
        let logged = app
            .query_texts("SELECT detail FROM audit_log WHERE action = 'token.revoked'")
            .await;
        assert_eq!(logged.len(), 1);
        assert!(logged[0].as_deref().unwrap().contains("Billing server"), "{logged:?}");

        // The last active key's confirmation says the app's calls all stop.
        let first_prefix = prefix_of(&first);
        let last = browser.get(&format!("{page}/tokens/revoke?prefix={first_prefix}")).await;
        assert!(last.text.contains("only active key"), "{}", last.text);
        // A revoked key has no confirmation any more.
        assert_eq!(browser.get(&confirm_href).await.status, StatusCode::NOT_FOUND);
    }

    async fn a_secret_is_shown_once_after_the_redirect_and_never_again(app) {
        let browser = signed_in(&app, "member@example.com", Role::Partner, Some("Acme")).await;
        let r = browser
            .submit("/dashboard", "/dashboard/apps", &[("name", "Acme Energy"), ("environment", "sandbox")])
            .await;
        assert_eq!((r.status, r.location.as_str()), (StatusCode::SEE_OTHER, "/dashboard/shown"), "{}", r.text);
        // Until it is shown, the session keeps it sealed, never as written.
        let hex_sql = match app.engine() {
            crate::helpers::Engine::Sqlite => "SELECT hex(data) FROM web_sessions",
            crate::helpers::Engine::Postgres => "SELECT upper(encode(data, 'hex')) FROM web_sessions",
        };
        let waiting = app.query_texts(hex_sql).await;
        assert!(!waiting.is_empty());
        let shown = browser.follow(&r).await;
        let token = shown.shown_token();
        assert!(token.starts_with("swb_sandbox_"), "{}", shown.text);
        let token_hex: String = token.bytes().map(|b| format!("{b:02X}")).collect();
        assert!(waiting.iter().flatten().all(|d| !d.contains(&token_hex)), "sealed in the session");
        assert!(shown.text.contains("Your app was created"));
        // A reload (or the back button) shows nothing, and made nothing.
        let again = browser.get("/dashboard/shown").await;
        assert_eq!(again.status, StatusCode::OK);
        assert!(again.text.contains("Nothing to show"), "{}", again.text);
        assert!(!again.text.contains(&token));
        assert_eq!(rows(&app, "SELECT slug FROM apps WHERE display_name = 'Acme Energy'").await, 1);
        // Another session never sees it.
        let other = signed_in(&app, "other@example.com", Role::Partner, Some("Acme")).await;
        assert!(!other.get("/dashboard/shown").await.text.contains(&token));
        // Signed out, the page sends you to sign in.
        assert_eq!(Browser::new(&app).get("/dashboard/shown").await.status, StatusCode::SEE_OTHER);
    }

    async fn disabling_an_endpoint_and_rotating_its_secret_ask_first(app) {
        let browser = signed_in(&app, "member@example.com", Role::Partner, Some("Acme")).await;
        let (uuid, _) = create_sandbox_app(&browser, "Acme Energy").await;
        let page = format!("/dashboard/apps/{uuid}");
        let endpoint = endpoint_of(&browser, &page, "https://hooks.example.com/in").await;
        let shown = browser.get(&endpoint).await;
        assert!(shown.text.contains(&format!("href=\"{endpoint}/enabled?disabled=true\"")), "{}", shown.text);
        assert!(shown.text.contains(&format!("href=\"{endpoint}/rotate\"")));

        let confirm = browser.get(&format!("{endpoint}/enabled?disabled=true")).await;
        assert_eq!(confirm.status, StatusCode::OK, "{}", confirm.text);
        for said in ["Disable the webhook endpoint https://hooks.example.com/in?", "Acme Energy", "stops receiving the events", "Recover failed deliveries"] {
            assert!(confirm.text.contains(said), "{said}: {}", confirm.text);
        }
        let r = browser.submit(&endpoint, &format!("{endpoint}/enabled"), &[("disabled", "true")]).await;
        assert_eq!(r.status, StatusCode::OK, "asks again: {}", r.text);
        assert!(r.text.contains("data-testid=\"confirm\""));
        assert!(browser.get(&endpoint).await.text.contains("State: enabled"), "nothing changed yet");
        let r = browser.submit(&endpoint, &format!("{endpoint}/enabled"), &[("disabled", "true"), ("confirm", "yes")]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        assert!(browser.follow(&r).await.text.contains("State: disabled"));
        // Enabling stops nothing, so it is done at once.
        let r = browser.submit(&endpoint, &format!("{endpoint}/enabled"), &[("disabled", "false")]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        assert!(browser.follow(&r).await.text.contains("State: enabled"));

        let rotations = "SELECT action FROM audit_log WHERE action = 'webhook_endpoint.secret_rotated'";
        let confirm = browser.get(&format!("{endpoint}/rotate")).await;
        assert_eq!(confirm.status, StatusCode::OK, "{}", confirm.text);
        for said in ["Rotate the signing secret of https://hooks.example.com/in?", "24 hours", "old secret"] {
            assert!(confirm.text.contains(said), "{said}: {}", confirm.text);
        }
        let r = browser.submit(&endpoint, &format!("{endpoint}/rotate"), &[]).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(rows(&app, rotations).await, 0, "not rotated without the confirmation");
        let r = browser.submit(&endpoint, &format!("{endpoint}/rotate"), &[("confirm", "yes")]).await;
        let shown = browser.shown(&r).await;
        let secret = shown.shown_token();
        assert!(secret.starts_with("whsec_") && shown.text.contains("Signing secret rotated"));
        assert_eq!(rows(&app, rotations).await, 1);
        assert!(!browser.get("/dashboard/shown").await.text.contains(&secret), "shown once");
    }

    async fn a_refused_value_stays_in_its_field_with_the_reason_beside_it(app) {
        let browser = signed_in(&app, "member@example.com", Role::Partner, Some("Acme")).await;
        let long = "A".repeat(101);
        let r = browser.submit("/dashboard", "/dashboard/apps", &[("name", &long), ("environment", "sandbox")]).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
        assert_eq!(value_of(&r, "name"), long, "what was typed is kept");
        assert!(marked_invalid(&r, "name"), "{}", r.text);
        assert!(r.text.contains("Give the app a name of 1 to 100 characters"));

        let (uuid, _) = create_sandbox_app(&browser, "Acme Energy").await;
        let page = format!("/dashboard/apps/{uuid}");
        let name = "K".repeat(61);
        let r = browser.submit(&page, &format!("{page}/tokens"), &[("name", &name)]).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(value_of(&r, "key_name"), name);
        assert!(r.text.contains("at most 60 characters"));

        let r = browser.submit(&page, &format!("{page}/webhooks"), &[("url", "ftp://hooks.example.com/in"), ("description", "Orders")]).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
        assert_eq!(value_of(&r, "webhook_url"), "ftp://hooks.example.com/in");
        assert!(marked_invalid(&r, "webhook_url"), "{}", r.text);
        assert!(r.text.contains("id=\"webhook_url-error\""));
        assert_eq!(rows(&app, "SELECT url FROM webhook_endpoints").await, 0, "nothing made");
    }

    async fn the_audit_log_filters_pages_and_links_its_targets(app) {
        let operator = signed_in(&app, "ops@example.com", Role::Operator, None).await;
        let now = app.clock.now();
        let target = format!("app:{}", app.app_uuid);
        let old = chrono::DateTime::parse_from_rfc3339("2020-01-15T18:00:00Z").unwrap().with_timezone(&chrono::Utc);
        let mut tx = app.state.db.begin().await.unwrap();
        for i in 0..120 {
            let row = AuditRow {
                uuid: Uuid::new_v4(),
                actor: "bulk@example.com".into(),
                user_uuid: None,
                action: "bulk.step".into(),
                target: target.clone(),
                detail: format!("{{\"step\":{i}}}"),
                created_at: now - chrono::Duration::minutes(i),
            };
            server::store::audit::insert_entry(&mut tx, &row).await.unwrap();
        }
        let row = AuditRow {
            uuid: Uuid::new_v4(),
            actor: "old@example.com".into(),
            user_uuid: None,
            action: "old.thing".into(),
            target: "user:8d0b4f3a-1c2e-4b5f-9a6d-7e8f9a0b1c2d".into(),
            detail: "{\"why\":\"long ago\"}".into(),
            created_at: old,
        };
        server::store::audit::insert_entry(&mut tx, &row).await.unwrap();
        tx.commit().await.unwrap();

        let count = |p: &Page, s: &str| p.text.matches(s).count();
        let first = operator.get("/dashboard/audit?actor=BULK").await;
        assert_eq!(first.status, StatusCode::OK);
        assert_eq!(count(&first, "<code>bulk.step</code>"), 50, "50 a page");
        assert!(first.text.contains("href=\"/dashboard/audit?actor=BULK&amp;page=2\""), "{}", first.text);
        assert!(!first.text.contains("rel=\"prev\""));
        assert!(first.text.contains(&format!("href=\"/dashboard/apps/{}\"", app.app_uuid)), "targets are links");
        assert!(first.text.contains("<details><summary>Detail</summary>"), "details fold");
        assert!(first.text.contains("value=\"BULK\""), "the filter keeps what was typed");
        let third = operator.get("/dashboard/audit?actor=BULK&page=3").await;
        assert_eq!(count(&third, "<code>bulk.step</code>"), 20);
        assert!(third.text.contains("rel=\"prev\"") && !third.text.contains("rel=\"next\""));

        let by_action = operator.get("/dashboard/audit?action=old.thing").await;
        assert_eq!(count(&by_action, "<code>old.thing</code>"), 1);
        assert_eq!(count(&by_action, "<code>bulk.step</code>"), 0);
        assert!(by_action.text.contains("<code>user:8d0b4f3a"), "a target without a page is shown as text");

        let by_target = operator.get(&format!("/dashboard/audit?target={}", app.app_uuid)).await;
        assert!(count(&by_target, "<code>bulk.step</code>") >= 49, "{}", by_target.text);
        assert_eq!(count(&by_target, "<code>old.thing</code>"), 0);
        let both = operator.get(&format!("/dashboard/audit?target={}&action=bulk&page=3", app.app_uuid)).await;
        assert_eq!(count(&both, "<code>bulk.step</code>"), 20, "filters combine");

        let by_day = operator.get("/dashboard/audit?from=2020-01-15&to=2020-01-15").await;
        assert_eq!(count(&by_day, "<code>old.thing</code>"), 1, "{}", by_day.text);
        assert_eq!(count(&by_day, "<code>bulk.step</code>"), 0);
        let none = operator.get("/dashboard/audit?from=2020-01-16&to=2020-01-31").await;
        assert!(none.text.contains("No entries match these filters."));

        let bad = operator.get("/dashboard/audit?from=15%2F01%2F2020").await;
        assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(value_of(&bad, "from"), "15/01/2020");
        assert!(marked_invalid(&bad, "from"), "{}", bad.text);
        assert!(bad.text.contains("YYYY-MM-DD"));

        let partner = signed_in(&app, "member@example.com", Role::Partner, Some("Acme")).await;
        assert_eq!(partner.get("/dashboard/audit?actor=bulk").await.status, StatusCode::NOT_FOUND);
    }
}

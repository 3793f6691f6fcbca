//! The dashboard's pages, rendered on the server to HTML strings with Leptos' `view!` (which
//! escapes every value). Plain forms, labelled inputs, no script: they work without
//! JavaScript and with the keyboard alone.

use leptos::prelude::*;

use crate::{
    http::html::textarea_text,
    store::{
        apps::{AppRow, AppTokenRow},
        users::OrganisationRow,
        webhooks::EndpointRow,
    },
};

/// Who is signed in, as the page header shows it.
pub struct Nav {
    pub email: String,
    pub organisation: Option<String>,
    pub operator: bool,
    pub csrf: String,
}

pub(super) fn document(title: &str, nav: Option<&Nav>, body: AnyView) -> String {
    let title = format!("{title} · Switchboard dashboard");
    let header = nav.map(|nav| {
        let who = match &nav.organisation {
            Some(org) => format!("{} ({org})", nav.email),
            None => format!("{} (operator)", nav.email),
        };
        let csrf = nav.csrf.clone();
        let audit = nav
            .operator
            .then(|| view! { <li><a href="/dashboard/audit">"Audit log"</a></li> });
        let utility = nav
            .operator
            .then(|| view! { <li><a href="/dashboard/utility">"Utility worklist"</a></li> });
        view! {
            <header class="top">
                <a class="brand" href="/dashboard">"Switchboard"</a>
                <nav aria-label="Dashboard">
                    <ul>
                        <li><a href="/dashboard">"Apps"</a></li>
                        <li><a href="/dashboard/accounts">"Accounts"</a></li>
                        <li><a href="/dashboard/live-app-requests">"Live app requests"</a></li>
                        <li><a href="/dashboard/credit-reviews">"Credit reviews"</a></li>
                        <li><a href="/dashboard/weather-emergencies">"Weather emergencies"</a></li>
                        {utility}
                        {audit}
                        <li><a href="/dashboard/password">"Password"</a></li>
                        <li><a href="/docs/api">"API reference"</a></li>
                    </ul>
                </nav>
                <form class="sign-out" method="post" action="/dashboard/sign-out">
                    <span class="who">{who}</span>
                    <input type="hidden" name="csrf" value=csrf/>
                    <button type="submit">"Sign out"</button>
                </form>
            </header>
        }
    });
    crate::http::html::document(view! {
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <title>{title}</title>
                <link rel="stylesheet" href="/dashboard/assets/dashboard.css"/>
                <script src="/dashboard/assets/copy.js" defer></script>
            </head>
            <body>
                {header}
                <main id="main">{body}</main>
            </body>
        </html>
    })
}

pub(super) fn messages(notice: Option<&str>, error: Option<&str>) -> impl IntoView {
    let notice = notice.map(|n| {
        let n = n.to_owned();
        view! { <p class="notice" role="status">{n}</p> }
    });
    let error = error.map(|e| {
        let e = e.to_owned();
        view! { <p class="error" role="alert">{e}</p> }
    });
    view! { {notice} {error} }
}

/// A value typed into a form that was refused, and why (in plain words), shown beside its
/// field so that nothing typed is lost.
#[derive(Default, Clone)]
pub struct Typed {
    pub value: String,
    pub error: Option<String>,
}

impl Typed {
    pub fn refused(value: &str, error: impl Into<String>) -> Typed {
        Typed {
            value: value.to_owned(),
            error: Some(error.into()),
        }
    }

    /// `aria-invalid` and `aria-describedby` of the field `id`.
    fn aria(&self, id: &str) -> (Option<&'static str>, Option<String>) {
        match self.error {
            Some(_) => (Some("true"), Some(format!("{id}-error"))),
            None => (None, None),
        }
    }

    /// The message beside the field `id`, when its value was refused.
    fn message(&self, id: &str) -> impl IntoView {
        let id = format!("{id}-error");
        self.error
            .clone()
            .map(|m| view! { <p class="field-error" id=id>{m}</p> })
    }
}

/// What one form of the app page held when it was refused: its values by field name and why,
/// said at the top of that form; its fields show what was typed instead of what is stored.
#[derive(Default, Clone)]
pub struct Kept {
    pub form: &'static str,
    pub values: Vec<(&'static str, String)>,
    pub error: String,
}

/// What the app page writes back into its forms after a refusal.
#[derive(Default, Clone)]
pub struct Refill {
    pub key_name: Typed,
    pub webhook_url: Typed,
    pub kept: Option<Kept>,
}

/// The value of the field `field` of the form `form`: as typed when that form was refused,
/// else as stored.
fn field_value(kept: Option<&Kept>, form: &str, field: &str, stored: Option<&str>) -> String {
    kept.filter(|k| k.form == form)
        .and_then(|k| k.values.iter().find(|(f, _)| *f == field))
        .map(|(_, v)| v.clone())
        .or_else(|| stored.map(str::to_owned))
        .unwrap_or_default()
}

/// Why the form `form` was refused, at its top, with the id its fields point to.
fn form_error(kept: Option<&Kept>, form: &str) -> impl IntoView {
    kept.filter(|k| k.form == form).map(|k| {
        let id = format!("{form}-error");
        let message = k.error.clone();
        view! { <p class="field-error" id=id role="alert">{message}</p> }
    })
}

/// `aria-invalid` and `aria-describedby` of the fields of the form `form`.
fn form_aria(kept: Option<&Kept>, form: &str) -> (Option<&'static str>, Option<String>) {
    match kept.filter(|k| k.form == form) {
        Some(_) => (Some("true"), Some(format!("{form}-error"))),
        None => (None, None),
    }
}

pub(super) fn csrf_field(csrf: &str) -> impl IntoView {
    let csrf = csrf.to_owned();
    view! { <input type="hidden" name="csrf" value=csrf/> }
}

pub(super) fn time(t: chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%d %H:%M UTC").to_string()
}

pub fn sign_in(csrf: &str, email: &str, notice: Option<&str>, error: Option<&str>) -> String {
    let email = email.to_owned();
    let body = view! {
        <section class="card narrow">
            <h1>"Sign in"</h1>
            {messages(notice, error)}
            <form method="post" action="/dashboard/sign-in">
                {csrf_field(csrf)}
                <label for="email">"E-mail"</label>
                <input id="email" name="email" type="email" autocomplete="username" required value=email/>
                <label for="password">"Password"</label>
                <input id="password" name="password" type="password" autocomplete="current-password" required/>
                <button type="submit">"Sign in"</button>
            </form>
            <p><a href="/dashboard/forgot">"Forgot your password?"</a></p>
        </section>
    }
    .into_any();
    document("Sign in", None, body)
}

pub fn password(nav: &Nav, error: Option<&str>) -> String {
    let body = view! {
        <section class="card narrow">
            <h1>"Change your password"</h1>
            {messages(None, error)}
            <form method="post" action="/dashboard/password">
                {csrf_field(&nav.csrf)}
                <label for="current">"Current password"</label>
                <input id="current" name="current" type="password" autocomplete="current-password" required/>
                <label for="new">"New password (at least 12 characters)"</label>
                <input id="new" name="new" type="password" autocomplete="new-password" minlength="12" required/>
                <button type="submit">"Change password"</button>
            </form>
        </section>
    }
    .into_any();
    document("Password", Some(nav), body)
}

pub fn apps(
    nav: &Nav,
    apps: &[AppRow],
    organisations: &[OrganisationRow],
    typed: &Typed,
    notice: Option<&str>,
    error: Option<&str>,
) -> String {
    let rows = apps
        .iter()
        .map(|a| {
            let href = format!("/dashboard/apps/{}", a.uuid);
            let name = a.display_name.clone();
            let env = a.environment.clone();
            let created = time(a.created_at);
            view! {
                <tr>
                    <td><a href=href>{name}</a></td>
                    <td>{env}</td>
                    <td>{created}</td>
                </tr>
            }
        })
        .collect_view();
    let empty = apps
        .is_empty()
        .then(|| view! { <p>"No apps yet: create a sandbox app below."</p> });
    let operator = nav.operator;
    let live_option = operator.then(|| view! { <option value="live">"Live"</option> });
    let owner = operator.then(|| {
        let options = organisations
            .iter()
            .map(|o| {
                let value = o.uuid.to_string();
                let name = o.name.clone();
                view! { <option value=value>{name}</option> }
            })
            .collect_view();
        view! {
            <label for="organisation">"Organisation"</label>
            <select id="organisation" name="organisation">
                <option value="">"None (the platform's own)"</option>
                {options}
            </select>
        }
    });
    let name_aria = typed.aria("name");
    let body = view! {
        <h1>"Apps"</h1>
        {messages(notice, error)}
        {empty}
        <div class="table-wrap">
            <table>
                <thead><tr><th scope="col">"App"</th><th scope="col">"Environment"</th><th scope="col">"Created"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
        <section class="card">
            <h2>"Create an app"</h2>
            <form method="post" action="/dashboard/apps">
                {csrf_field(&nav.csrf)}
                <label for="name">"Name"</label>
                <input id="name" name="name" type="text" maxlength="100" required value=typed.value.clone()
                    aria-invalid=name_aria.0 aria-describedby=name_aria.1/>
                {typed.message("name")}
                <label for="environment">"Environment"</label>
                <select id="environment" name="environment">
                    <option value="sandbox">"Sandbox"</option>
                    {live_option}
                </select>
                {owner}
                <button type="submit">"Create app"</button>
            </form>
        </section>
    }
    .into_any();
    document("Apps", Some(nav), body)
}

/// A change that cannot be taken back, asked about first: what it is done to, what stops
/// working, and the one button that does it (the form posts `confirm=yes`).
pub struct Confirm {
    pub title: String,
    /// What the change affects, a sentence each.
    pub effects: Vec<String>,
    pub action: String,
    /// The form's other hidden fields.
    pub fields: Vec<(&'static str, String)>,
    pub button: &'static str,
    /// Where "Cancel" goes back to.
    pub cancel: String,
}

pub fn confirm(nav: &Nav, c: Confirm) -> String {
    let effects = c
        .effects
        .into_iter()
        .map(|e| view! { <li>{e}</li> })
        .collect_view();
    let fields = c
        .fields
        .into_iter()
        .map(|(name, value)| view! { <input type="hidden" name=name value=value/> })
        .collect_view();
    let title = c.title.clone();
    let body = view! {
        <section class="card confirm" data-testid="confirm">
            <h1>{title}</h1>
            <ul>{effects}</ul>
            <form method="post" action=c.action>
                {csrf_field(&nav.csrf)}
                {fields}
                <input type="hidden" name="confirm" value="yes"/>
                <div class="actions">
                    <button type="submit" class="danger">{c.button}</button>
                    <a href=c.cancel>"Cancel"</a>
                </div>
            </form>
        </section>
    }
    .into_any();
    document(&c.title, Some(nav), body)
}

/// A button that copies the shown-once field `id` (hidden until the page's script runs), and
/// the place that says it did.
pub(super) fn copy_button(id: &'static str) -> impl IntoView {
    view! {
        <div class="copy">
            <button type="button" data-copy=id hidden>"Copy"</button>
            <span id=format!("{id}-copied") role="status"></span>
        </div>
    }
}

/// What the app page shows.
pub struct AppPage<'a> {
    pub app: &'a AppRow,
    /// The late fee, percent of a past-due bill's unpaid amount; none when off.
    pub late_fee_percent: Option<String>,
    pub tokens: &'a [AppTokenRow],
    pub endpoints: &'a [EndpointRow],
    pub flow_url: &'a str,
    /// Whether the app has the signing secret of the processor's webhooks.
    pub webhook_secret_set: bool,
    /// Where the processor sends the app's payment events.
    pub processor_webhook_url: &'a str,
    pub operator: bool,
    /// A live app's checklist before customers may start.
    pub readiness: &'a crate::services::apps::Readiness,
    /// The new key's name, kept after a refusal.
    pub key_name: &'a Typed,
    /// The new webhook endpoint's URL, kept after a refusal.
    pub webhook_url: &'a Typed,
    /// Another form of the page, kept after a refusal.
    pub kept: Option<&'a Kept>,
    pub notice: Option<&'a str>,
    pub error: Option<&'a str>,
}

/// One checkbox per event type an endpoint may subscribe to.
fn event_type_choices() -> impl IntoView {
    crate::domain::events::EVENT_DOCS
        .iter()
        .filter(|d| d.kind != crate::domain::events::TEST_EVENT_TYPE)
        .enumerate()
        .map(|(i, d)| {
            let id = format!("webhook_event_{i}");
            let label_for = id.clone();
            view! {
                <label class="check" for=label_for>
                    <input type="checkbox" id=id name="event_types" value=d.kind/>
                    <code>{d.kind}</code> " · " {d.about}
                </label>
            }
        })
        .collect_view()
}

/// A live app's checklist: each item done or missing, and what being ready opens.
fn readiness(app: &AppRow, r: &crate::services::apps::Readiness) -> impl IntoView {
    use crate::domain::apps::ReadinessItem;
    let live = r.live;
    let summary = if r.is_open() {
        format!(
            "Ready for customers: the sign-up page /go/{} is public, enrollment flows open and credit checks are taken.",
            app.slug
        )
    } else {
        format!(
            "Not open to customers yet: the sign-up page /go/{} stays unpublished, and no enrollment flow opens or credit check is taken, until every item below is done.",
            app.slug
        )
    };
    let items = ReadinessItem::ALL
        .into_iter()
        .map(|item| {
            let done = !r.missing.contains(&item);
            let state = if done { "Done" } else { "Missing" };
            view! {
                <li data-item=item.code() data-done=done.to_string()>
                    <strong>{state}</strong> " · " {item.label()}
                </li>
            }
        })
        .collect_view();
    live.then(|| {
        view! {
            <section class="card" data-testid="readiness">
                <h2>"Going live"</h2>
                <p>{summary}</p>
                <ul>{items}</ul>
            </section>
        }
    })
}

pub fn app(nav: &Nav, page: &AppPage<'_>) -> String {
    let a = page.app;
    let base = format!("/dashboard/apps/{}", a.uuid);
    let origins = a.origins();
    let kept = page.kept;
    let brand_aria = form_aria(kept, "branding");
    let origins_aria = form_aria(kept, "origins");
    let support_aria = form_aria(kept, "support");
    let renewal_aria = form_aria(kept, "renewal");
    let landing_aria = form_aria(kept, "landing");
    let tokens = page
        .tokens
        .iter()
        .map(|t| {
            let prefix = t.prefix.clone();
            let created = time(t.created_at);
            let used = t.last_used_at.map_or_else(|| "never".to_owned(), time);
            let state = match t.revoked_at {
                Some(at) => format!("revoked {}", time(at)),
                None => "active".to_owned(),
            };
            let revoke = t.revoked_at.is_none().then(|| {
                let query: String = form_urlencoded::byte_serialize(prefix.as_bytes()).collect();
                let href = format!("{base}/tokens/revoke?prefix={query}");
                let label = format!("Revoke the key {}", t.name);
                view! {
                    <a class="button danger" href=href aria-label=label>"Revoke…"</a>
                }
            });
            let name = t.name.clone();
            view! {
                <tr>
                    <td>{name}</td>
                    <td><code>{prefix}"…"</code></td>
                    <td>{created}</td>
                    <td>{used}</td>
                    <td>{state}</td>
                    <td>{revoke}</td>
                </tr>
            }
        })
        .collect_view();
    let late_fee_now = page
        .late_fee_percent
        .as_ref()
        .map_or_else(|| "Off".to_owned(), |p| format!("{p}%"));
    let late_fee_form = page.operator.then(|| {
        let action = format!("{base}/late-fee");
        let kept = page.kept;
        let current = field_value(
            kept,
            "late_fee",
            "late_fee_percent",
            page.late_fee_percent.as_deref(),
        );
        let (invalid, described) = form_aria(kept, "late_fee");
        view! {
            <form method="post" action=action>
                {csrf_field(&nav.csrf)}
                {form_error(kept, "late_fee")}
                <label for="late_fee_percent">"Late fee, percent (blank: off)"</label>
                <input id="late_fee_percent" name="late_fee_percent" type="text" value=current
                    aria-invalid=invalid aria-describedby=described/>
                <button type="submit">"Save late fee"</button>
            </form>
        }
    });
    let late_fee = view! {
        <section class="card">
            <h2>"Late fee"</h2>
            <p>"A one-time fee on a bill still unpaid after its due date, charged as its own line of the next bill: at most 5% of the unpaid amount, never on an amount already charged a late fee, never to an account marked exempt."</p>
            <p>"Now: " {late_fee_now}</p>
            {late_fee_form}
        </section>
    };
    let keys_form = (page.operator && a.environment == "live").then(|| {
        let action = format!("{base}/payment-keys");
        let current = field_value(
            kept,
            "keys",
            "publishable_key",
            Some(&a.payment_publishable_key),
        );
        let (keys_invalid, keys_described) = form_aria(kept, "keys");
        let (secret_invalid, secret_described) = form_aria(kept, "webhook_secret");
        let webhook_action = format!("{base}/payment-webhook-secret");
        let webhook_url = page.processor_webhook_url.to_owned();
        let webhook_state = if page.webhook_secret_set {
            "Signing secret: set (stored sealed, never shown again)."
        } else {
            "Signing secret: not set. The processor's events about this app's payments are refused until it is."
        };
        view! {
            <section class="card">
                <h2>"Payment keys"</h2>
                <p>"The card processor's keys of this live app. The secret key is stored sealed and never shown again."</p>
                <form method="post" action=action>
                    {csrf_field(&nav.csrf)}
                    {form_error(kept, "keys")}
                    <label for="publishable_key">"Publishable key"</label>
                    <input id="publishable_key" name="publishable_key" type="text" value=current required
                        aria-invalid=keys_invalid aria-describedby=keys_described.clone()/>
                    <label for="secret_key">"Secret key"</label>
                    <input id="secret_key" name="secret_key" type="password" autocomplete="off" required
                        aria-invalid=keys_invalid aria-describedby=keys_described/>
                    <button type="submit">"Save keys"</button>
                </form>
                <h3>"Processor webhooks"</h3>
                <p>
                    "Register this endpoint at the card processor for the events payment_intent.succeeded, payment_intent.payment_failed, charge.refunded, charge.dispute.created and setup_intent.succeeded: "
                    <code data-testid="processor-webhook-url">{webhook_url}</code>
                </p>
                <p data-testid="webhook-secret-state">{webhook_state}</p>
                <form method="post" action=webhook_action>
                    {csrf_field(&nav.csrf)}
                    {form_error(kept, "webhook_secret")}
                    <label for="webhook_secret">"Signing secret (whsec_...)"</label>
                    <input id="webhook_secret" name="webhook_secret" type="password" autocomplete="off" required
                        aria-invalid=secret_invalid aria-describedby=secret_described/>
                    <button type="submit">"Save signing secret"</button>
                </form>
            </section>
        }
    });
    let endpoints = page
        .endpoints
        .iter()
        .map(|e| {
            let href = format!("{base}/webhooks/{}", e.uuid);
            let url = e.url.clone();
            let state = if e.disabled { "disabled" } else { "enabled" };
            view! {
                <li><a href=href>{url}</a> " · " {state}</li>
            }
        })
        .collect_view();
    let title = a.display_name.clone();
    let meta = format!("{} app · slug {} · id {}", a.environment, a.slug, a.uuid);
    let flow_url = page.flow_url.to_owned();
    let key_aria = page.key_name.aria("key_name");
    let url_aria = page.webhook_url.aria("webhook_url");
    let body = view! {
        <h1>{title}</h1>
        <p class="muted">{meta}</p>
        {messages(page.notice, page.error)}
        {readiness(a, page.readiness)}
        <section class="card">
            <h2>"API keys"</h2>
            <div class="table-wrap">
                <table>
                    <thead><tr>
                        <th scope="col">"Name"</th><th scope="col">"Key"</th><th scope="col">"Created"</th>
                        <th scope="col">"Last used"</th><th scope="col">"State"</th><th scope="col"><span class="sr-only">"Actions"</span></th>
                    </tr></thead>
                    <tbody>{tokens}</tbody>
                </table>
            </div>
            <form method="post" action=format!("{base}/tokens")>
                {csrf_field(&nav.csrf)}
                <label for="key_name">"Name of the new key"</label>
                <span class="muted" id="key_name-hint">"Which program will use it, e.g. “Billing server”: the list and the revoke confirmation show it."</span>
                <input id="key_name" name="name" type="text" maxlength="60" required value=page.key_name.value.clone()
                    aria-invalid=key_aria.0 aria-describedby=key_aria.1.unwrap_or_else(|| "key_name-hint".to_owned())/>
                {page.key_name.message("key_name")}
                <button type="submit">"Create a key"</button>
            </form>
        </section>
        <section class="card">
            <h2>"Plan groups"</h2>
            <p>"The rules the pricing model reads for this app's plans, and each group's versions."</p>
            <p><a href=format!("{base}/plan-groups")>"Plan groups"</a></p>
        </section>
        <section class="card">
            <h2>"Flow funnel"</h2>
            <p>"How customers move through each embedded flow: sessions started, the share reaching each step, completion and the median time."</p>
            <p><a href=format!("{base}/funnel")>"Flow funnel"</a></p>
        </section>
        <section class="card">
            <h2>"Brand"</h2>
            <form method="post" action=format!("{base}/branding")>
                {csrf_field(&nav.csrf)}
                {form_error(kept, "branding")}
                <label for="display_name">"Display name"</label>
                <input id="display_name" name="display_name" type="text" maxlength="100" required
                    value=field_value(kept, "branding", "display_name", Some(&a.display_name))
                    aria-invalid=brand_aria.0 aria-describedby=brand_aria.1.clone()/>
                <label for="primary_color">"Colour (e.g. #1b4d3e)"</label>
                <input id="primary_color" name="primary_color" type="text"
                    value=field_value(kept, "branding", "primary_color", a.primary_color.as_deref())
                    aria-invalid=brand_aria.0 aria-describedby=brand_aria.1.clone()/>
                <label for="logo_url">"Logo URL (https)"</label>
                <input id="logo_url" name="logo_url" type="url"
                    value=field_value(kept, "branding", "logo_url", a.logo_url.as_deref())
                    aria-invalid=brand_aria.0 aria-describedby=brand_aria.1.clone()/>
                <button type="submit">"Save brand"</button>
            </form>
            <form method="post" action=format!("{base}/logo") enctype="multipart/form-data">
                {csrf_field(&nav.csrf)}
                <label for="logo">"Upload a logo"</label>
                <p class="muted" id="logo-hint">"A PNG, up to 512 KB, 16 to 2,000 pixels a side. It is served from this service and printed on bills."</p>
                <input id="logo" name="logo" type="file" accept="image/png" required aria-describedby="logo-hint"/>
                <button type="submit">"Upload logo"</button>
            </form>
        </section>
        <section class="card">
            <h2>"Allowed origins"</h2>
            <p>"The sites that may embed this app's flows (e.g. https://partner.example), one per line. "
               "They set the flow pages' frame-ancestors and where flows post their close message."</p>
            <p class="muted">"Flow page: " <code>{flow_url}</code></p>
            <form method="post" action=format!("{base}/origins")>
                {csrf_field(&nav.csrf)}
                {form_error(kept, "origins")}
                <label for="origins">"Origins"</label>
                <textarea id="origins" name="origins" rows="4"
                    aria-invalid=origins_aria.0 aria-describedby=origins_aria.1>
                    {textarea_text(&field_value(kept, "origins", "origins", Some(&origins.join("\n"))))}
                </textarea>
                <button type="submit">"Save origins"</button>
            </form>
        </section>
        <section class="card">
            <h2>"Support contacts"</h2>
            <p>"What customers are told to contact for anything but outages (support-info)."</p>
            <form method="post" action=format!("{base}/support")>
                {csrf_field(&nav.csrf)}
                {form_error(kept, "support")}
                <label for="support_name">"Name"</label>
                <input id="support_name" name="name" type="text"
                    value=field_value(kept, "support", "name", a.support_name.as_deref())
                    aria-invalid=support_aria.0 aria-describedby=support_aria.1.clone()/>
                <label for="support_phone">"Phone"</label>
                <input id="support_phone" name="phone" type="tel"
                    value=field_value(kept, "support", "phone", a.support_phone.as_deref())
                    aria-invalid=support_aria.0 aria-describedby=support_aria.1.clone()/>
                <label for="support_email">"E-mail"</label>
                <input id="support_email" name="email" type="email"
                    value=field_value(kept, "support", "email", a.support_email.as_deref())
                    aria-invalid=support_aria.0 aria-describedby=support_aria.1.clone()/>
                <label for="support_hours">"Hours"</label>
                <input id="support_hours" name="hours" type="text"
                    value=field_value(kept, "support", "hours", a.support_hours.as_deref())
                    aria-invalid=support_aria.0 aria-describedby=support_aria.1.clone()/>
                <label for="support_url">"Web page (https)"</label>
                <input id="support_url" name="url" type="url"
                    value=field_value(kept, "support", "url", a.support_url.as_deref())
                    aria-invalid=support_aria.0 aria-describedby=support_aria.1.clone()/>
                <button type="submit">"Save support contacts"</button>
            </form>
        </section>
        <section class="card">
            <h2>"Renewal link"</h2>
            <p>"Where renewal notices send customers whose account has no link of its own (blank: our hosted renewal page)."</p>
            <form method="post" action=format!("{base}/renewal")>
                {csrf_field(&nav.csrf)}
                {form_error(kept, "renewal")}
                <label for="renewals_url">"Renewal link (https)"</label>
                <input id="renewals_url" name="renewals_url" type="url"
                    value=field_value(kept, "renewal", "renewals_url", a.renewals_url.as_deref())
                    aria-invalid=renewal_aria.0 aria-describedby=renewal_aria.1/>
                <button type="submit">"Save renewal link"</button>
            </form>
        </section>
        {late_fee}
        <section class="card">
            <h2>"Sign-up page"</h2>
            <p>"The short text above the sign-up form of this app's hosted page (/go/" {a.slug.clone()} "), at most 600 characters."</p>
            <form method="post" action=format!("{base}/landing")>
                {csrf_field(&nav.csrf)}
                {form_error(kept, "landing")}
                <label for="landing_text">"Landing text"</label>
                <textarea id="landing_text" name="landing_text" rows="4" maxlength="600"
                    aria-invalid=landing_aria.0 aria-describedby=landing_aria.1>
                    {textarea_text(&field_value(kept, "landing", "landing_text", a.landing_text.as_deref()))}
                </textarea>
                <button type="submit">"Save landing text"</button>
            </form>
        </section>
        <section class="card">
            <h2>"Webhooks"</h2>
            <ul class="plain">{endpoints}</ul>
            <form method="post" action=format!("{base}/webhooks")>
                {csrf_field(&nav.csrf)}
                <label for="webhook_url">"Endpoint URL"</label>
                <input id="webhook_url" name="url" type="url" required value=page.webhook_url.value.clone()
                    aria-invalid=url_aria.0 aria-describedby=url_aria.1/>
                {page.webhook_url.message("webhook_url")}
                <fieldset class="event-types">
                    <legend>"Event types (none ticked: every event)"</legend>
                    {event_type_choices()}
                </fieldset>
                <label for="webhook_description">"Description"</label>
                <input id="webhook_description" name="description" type="text"/>
                <button type="submit">"Add endpoint"</button>
            </form>
        </section>
        {keys_form}
    }
    .into_any();
    document(&a.display_name, Some(nav), body)
}

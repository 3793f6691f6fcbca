//! Hosted pages and the customer portal: the single-use links e-mails carry (made in the
//! e-mail's own transaction; looked at without being spent, so that a mail scanner fetching
//! one leaves it working; spent by the customer's one click into the flow of their purpose;
//! replaced by e-mail when spent or expired), the one-time codes that confirm an address (hosted
//! sign-up, portal sign-in, both within one app), the account a hosted sign-up creates (or the
//! accounts it finds: an address already a customer of the app signs in instead), and the flow
//! sessions hosted pages open full-page.

use app::api::CreateAccountIn;
use chrono::Duration;
use uuid::Uuid;

use super::Error;
use crate::{
    domain::{
        account::{parse_email, parse_name},
        flows::FlowScope,
        hosted::{
            check_code, code_hash, hosted_flow_location, link_state, may_resend_link,
            may_send_code, new_code, CodePurpose, CodeRefusal, LinkPurpose, LinkState, ReturnTo,
            CODE_TTL, LIMIT_WINDOW,
        },
        tokens, FieldError,
    },
    mail::{self, templates::Action, Brand, NewEmail, Template},
    state::Core,
    store::{
        self, accounts::AccountRow, apps::AppRow, flows::FlowLoginRow, hosted_links::NewHostedCode,
        Tx,
    },
};

/// How long the flow session a hosted page opens lives.
const FLOW_SESSION_TTL: Duration = Duration::minutes(60);

/// Why a hosted page's request was not carried out. Nothing is written unless said.
#[derive(Debug)]
pub enum HostedRefused {
    Field(FieldError),
    /// Too many codes or links asked for lately (the request is counted all the same).
    TooMany,
    /// The code typed is not the one sent; another guess is allowed (the guess is counted).
    CodeWrong,
    /// The code is too old, used, or out of guesses; a new one must be asked for.
    CodeVoid,
    /// No such app, account or link.
    NotFound,
}

impl From<FieldError> for Error<HostedRefused> {
    fn from(e: FieldError) -> Self {
        Error::Refused(HostedRefused::Field(e))
    }
}

fn refused<T>(why: HostedRefused) -> Result<T, Error<HostedRefused>> {
    Err(Error::Refused(why))
}

/// What opening an e-mail's link led to.
pub enum OpenedLink {
    /// The flow of the link's purpose, opened full-page: where to send the browser.
    Flow { location: String },
    /// The frozen-credit page, for this account.
    CreditFrozen {
        app_uuid: Uuid,
        account_uuid: Uuid,
        unfreeze_url: Option<String>,
    },
    /// The page of the deposit the credit review asked of this account.
    Deposit { account_uuid: Uuid },
    /// The page where the customer confirms a payment of theirs with their bank.
    AuthenticatePayment {
        account_uuid: Uuid,
        payment_uuid: Uuid,
    },
    /// Spent or expired: a fresh one can be asked for with the same token. With the app the
    /// link was for, whose brand the page wears.
    Stale { app: Option<Box<AppRow>> },
    /// Not a link of ours.
    Unknown,
}

/// What an e-mail's link is, looked at without spending it.
pub enum LinkView {
    /// It still opens: its page asks for one click, which spends it (`open_link`).
    Open {
        app: Box<AppRow>,
        purpose: LinkPurpose,
    },
    /// Spent or expired, with the app it was for.
    Stale { app: Option<Box<AppRow>> },
    /// Not a link of ours.
    Unknown,
}

/// Looks at an e-mail's link without spending it: what a GET of the link shows, so that a
/// mail scanner or a browser's prefetch leaves the link working for the customer.
pub async fn look_at_link(core: &Core, token: &str) -> store::Result<LinkView> {
    if !tokens::is_hosted_link_token(token) {
        return Ok(LinkView::Unknown);
    }
    let hash = tokens::hash_token(token);
    let Some(link) = store::hosted_links::hosted_link(&core.db, &hash).await? else {
        return Ok(LinkView::Unknown);
    };
    let Some(purpose) = LinkPurpose::parse(&link.purpose) else {
        return Ok(LinkView::Unknown);
    };
    let app = store::apps::app_by_uuid(&core.db, link.app_uuid)
        .await?
        .map(Box::new);
    let clock = core.clock.for_account(&core.db, link.account_uuid).await?;
    Ok(
        match (link_state(link.expires_at, link.used_at, clock.now()), app) {
            (LinkState::Open, Some(app)) => LinkView::Open { app, purpose },
            (_, app) => LinkView::Stale { app },
        },
    )
}

/// Spends an e-mail's link and opens what it is for: the customer's click on the link's page
/// (a POST), never the GET of the link itself.
pub async fn open_link(core: &Core, token: &str) -> store::Result<OpenedLink> {
    if !tokens::is_hosted_link_token(token) {
        return Ok(OpenedLink::Unknown);
    }
    let hash = tokens::hash_token(token);
    let mut tx = core.db.begin().await?;
    let Some(link) = store::hosted_links::hosted_link(&mut tx, &hash).await? else {
        return Ok(OpenedLink::Unknown);
    };
    let Some(purpose) = LinkPurpose::parse(&link.purpose) else {
        return Ok(OpenedLink::Unknown);
    };
    // Links expire on the account's clock (a sandbox account's clock may run ahead).
    let clock = core.clock.for_account(&core.db, link.account_uuid).await?;
    let now = clock.now();
    // Two tabs opening one link: only the first spends it.
    if link_state(link.expires_at, link.used_at, now) != LinkState::Open
        || !store::hosted_links::use_hosted_link(&mut tx, &hash, now).await?
    {
        drop(tx);
        return Ok(OpenedLink::Stale {
            app: store::apps::app_by_uuid(&core.db, link.app_uuid)
                .await?
                .map(Box::new),
        });
    }
    let opened = match (purpose, purpose.scope()) {
        (LinkPurpose::AuthenticatePayment, _) => {
            let Some(payment_uuid) = link.target.as_deref().and_then(|t| t.parse().ok()) else {
                return Ok(OpenedLink::Unknown);
            };
            OpenedLink::AuthenticatePayment {
                account_uuid: link.account_uuid,
                payment_uuid,
            }
        }
        (LinkPurpose::Deposit, _) => OpenedLink::Deposit {
            account_uuid: link.account_uuid,
        },
        (_, Some(scope)) => {
            let location = open_flow_session(
                &mut tx,
                core,
                link.app_uuid,
                link.account_uuid,
                scope,
                ReturnTo::Done,
            )
            .await?;
            OpenedLink::Flow { location }
        }
        (_, None) => OpenedLink::CreditFrozen {
            app_uuid: link.app_uuid,
            account_uuid: link.account_uuid,
            unfreeze_url: link.target.clone(),
        },
    };
    tx.commit().await?;
    Ok(opened)
}

/// Opens a flow session of `scope` for the account, in `tx`; answers where the browser goes
/// (the flow, full-page, with the session in the address's fragment).
async fn open_flow_session(
    tx: &mut Tx,
    core: &Core,
    app_uuid: Uuid,
    account_uuid: Uuid,
    scope: FlowScope,
    back: ReturnTo,
) -> store::Result<String> {
    let now = core.clock.now();
    let session = tokens::issue_flow_session_token();
    let login = FlowLoginRow {
        app_uuid,
        account_uuid,
        scope: scope.as_str().to_owned(),
        plan_group_uuid: None,
        expires_at: now,
        used_at: Some(now),
    };
    super::flows::start_session(tx, core, &session.hash, &login, now + FLOW_SESSION_TTL, now)
        .await?;
    Ok(hosted_flow_location(scope, app_uuid, &session.plain, back))
}

/// Opens the flow of `scope` full-page for a signed-in portal customer (closing it returns to
/// the portal).
pub async fn open_portal_flow(
    core: &Core,
    account_uuid: Uuid,
    scope: FlowScope,
) -> Result<String, Error<HostedRefused>> {
    let Some(account) = store::accounts::account_by_uuid(&core.db, account_uuid).await? else {
        return refused(HostedRefused::NotFound);
    };
    let mut tx = core.db.begin().await?;
    let location = open_flow_session(
        &mut tx,
        core,
        account.app_uuid,
        account.uuid,
        scope,
        ReturnTo::Portal,
    )
    .await?;
    tx.commit().await?;
    Ok(location)
}

/// Sends a fresh link in place of a spent or expired one (the same purpose, to the account's
/// address), unless too many were sent lately. Answers the address it went to and the app whose
/// brand the page wears.
pub async fn resend_link(
    core: &Core,
    token: &str,
) -> Result<(String, AppRow), Error<HostedRefused>> {
    if !tokens::is_hosted_link_token(token) {
        return refused(HostedRefused::NotFound);
    }
    let hash = tokens::hash_token(token);
    let mut tx = core.db.begin().await?;
    let Some(link) = store::hosted_links::hosted_link(&mut tx, &hash).await? else {
        return refused(HostedRefused::NotFound);
    };
    let Some(purpose) = LinkPurpose::parse(&link.purpose) else {
        return refused(HostedRefused::NotFound);
    };
    let (Some(app), Some(account)) = (
        store::apps::app_in(&mut tx, link.app_uuid).await?,
        store::accounts::account_by_uuid(&core.db, link.account_uuid).await?,
    ) else {
        return refused(HostedRefused::NotFound);
    };
    let clock = core.clock.for_account(&core.db, account.uuid).await?;
    let resent =
        store::hosted_links::count_resent_links(&mut tx, account.uuid, clock.now() - LIMIT_WINDOW)
            .await?;
    if !may_resend_link(resent) {
        return refused(HostedRefused::TooMany);
    }
    let url = super::follow_up::issue_link(
        &mut tx,
        core,
        &clock,
        app.uuid,
        account.uuid,
        purpose,
        link.target.as_deref(),
        Some(&hash),
    )
    .await?;
    mail::queue_to_account(
        &mut tx,
        &clock,
        &app,
        &account,
        &Template::Notice {
            subject: "Your new link".to_owned(),
            first_name: account.first_name.clone(),
            paragraphs: vec![
                "You asked for a new link: here it is. It works once, for 7 days.".to_owned(),
            ],
            action: Some(Action {
                label: purpose.call_to_action().to_owned(),
                url,
            }),
        },
    )
    .await?;
    tx.commit().await?;
    Ok((account.email, app))
}

/// Asks the bureau again at once for an account whose credit file was frozen (the customer
/// says the freeze is lifted). Nothing happens unless the check is still waiting for an answer.
pub async fn retry_credit_check(
    core: &Core,
    account_uuid: Uuid,
) -> Result<(), Error<HostedRefused>> {
    let clock = core.clock.for_account(&core.db, account_uuid).await?;
    let mut tx = core.db.begin().await?;
    let Some(account) = store::accounts::account_by_uuid(&core.db, account_uuid).await? else {
        return refused(HostedRefused::NotFound);
    };
    store::accounts::account_of_app_for_update(&mut tx, account.app_uuid, account.uuid).await?;
    super::follow_up::schedule_credit_check(&mut tx, &account, &clock).await?;
    tx.commit().await?;
    Ok(())
}

/// A sign-up started on an app's hosted page: the name and address given, not yet confirmed.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PendingSignUp {
    pub app_uuid: Uuid,
    pub first_name: String,
    pub last_name: String,
    pub email: String,
}

/// The app whose hosted pages answer at `/go/<slug>`.
pub async fn app_of_slug(core: &Core, slug: &str) -> store::Result<Option<AppRow>> {
    match store::hosted_links::app_by_slug(&core.db, slug).await? {
        Some(uuid) => store::apps::app_by_uuid(&core.db, uuid).await,
        None => Ok(None),
    }
}

/// The app whose hosted sign-up answers at `/go/<slug>`: none until a live app passes its
/// readiness checklist (`apps::readiness`), so that nobody signs up where the steps after
/// could not succeed.
pub async fn sign_up_app_of_slug(core: &Core, slug: &str) -> store::Result<Option<AppRow>> {
    let Some(app) = app_of_slug(core, slug).await? else {
        return Ok(None);
    };
    let open = super::apps::readiness(&core.db, &app).await?.is_open();
    Ok(open.then_some(app))
}

/// Starts a hosted sign-up: checks the name and address and e-mails a one-time code to it
/// (within the per-address and per-client limits).
pub async fn start_sign_up(
    core: &Core,
    app: &AppRow,
    first_name: &str,
    last_name: &str,
    email: &str,
    ip: &str,
) -> Result<PendingSignUp, Error<HostedRefused>> {
    let pending = PendingSignUp {
        app_uuid: app.uuid,
        first_name: parse_name("first_name", first_name)?,
        last_name: parse_name("last_name", last_name)?,
        email: parse_email("email", email)?,
    };
    // An address that is already a customer of the app is told, in the e-mail only, that the
    // code signs it in: the page answers the same either way, telling nobody who is a customer.
    let known =
        !store::hosted_links::accounts_with_email_in_app(&core.db, app.uuid, &pending.email)
            .await?
            .is_empty();
    send_code(
        core,
        CodePurpose::SignUp,
        Some((app, None)),
        &pending.email,
        &pending.first_name,
        ip,
        known,
    )
    .await?;
    Ok(pending)
}

/// Records a code request and, when it is for someone, e-mails the code. A request for nobody
/// (a portal sign-in with an unknown address) is recorded all the same, so that it counts
/// against the limits, and looks the same from outside. `known`: the address already has an
/// account in the app, which the code signs in to.
async fn send_code(
    core: &Core,
    purpose: CodePurpose,
    to: Option<(&AppRow, Option<Uuid>)>,
    email: &str,
    first_name: &str,
    ip: &str,
    known: bool,
) -> Result<(), Error<HostedRefused>> {
    let clock = core.clock.with_offset(Duration::zero());
    let now = clock.now();
    let mut tx = core.db.begin().await?;
    let (to_email, from_ip) =
        store::hosted_links::count_codes(&mut tx, email, ip, now - LIMIT_WINDOW).await?;
    if !may_send_code(to_email, from_ip) {
        return refused(HostedRefused::TooMany);
    }
    let uuid = Uuid::new_v4();
    let code = new_code();
    store::hosted_links::insert_hosted_code(
        &mut tx,
        &NewHostedCode {
            uuid,
            app_uuid: to.map(|(app, _)| app.uuid),
            account_uuid: to.and_then(|(_, account)| account),
            purpose: purpose.as_str(),
            email,
            code_hash: &code_hash(uuid, &code),
            ip,
            expires_at: now + CODE_TTL,
            now,
        },
    )
    .await?;
    if let Some((app, account)) = to {
        let subject = match (purpose, known) {
            (CodePurpose::SignUp, false) => {
                format!("Your {} sign-up code: {code}", app.display_name)
            }
            _ => format!("Your {} sign-in code: {code}", app.display_name),
        };
        let mut paragraphs = Vec::with_capacity(3);
        if purpose == CodePurpose::SignUp && known {
            paragraphs.push(format!(
                "You already have an account with {}: this code signs you in to it, no second \
                 account is made.",
                app.display_name
            ));
        }
        paragraphs.push(format!(
            "Your code is {code}. It works once, for 10 minutes."
        ));
        paragraphs.push("If you did not ask for it, you can ignore this message.".to_owned());
        mail::queue(
            &mut tx,
            &clock,
            &NewEmail {
                app_uuid: app.uuid,
                account_uuid: account,
                to: email,
                template: &Template::Notice {
                    subject,
                    first_name: first_name.to_owned(),
                    paragraphs,
                    action: None,
                },
                brand: &Brand::of_app(app),
                send_at: None,
                event_on_send: None,
            },
        )
        .await?;
    }
    tx.commit().await?;
    Ok(())
}

/// Checks a typed code against the latest one sent for `purpose` to `email`, and spends it.
/// A wrong guess is counted. A code sent from another app's page does not count here: each
/// app's pages confirm only their own codes. Answers the account the code was for, if any.
async fn confirm_code(
    core: &Core,
    purpose: CodePurpose,
    app_uuid: Uuid,
    email: &str,
    typed: &str,
) -> Result<Option<Uuid>, Error<HostedRefused>> {
    let now = core.clock.now();
    let mut tx = core.db.begin().await?;
    let Some(code) =
        store::hosted_links::latest_hosted_code(&mut tx, purpose.as_str(), app_uuid, email).await?
    else {
        return refused(HostedRefused::CodeVoid);
    };
    match check_code(
        &code.code_hash,
        code.uuid,
        typed,
        code.attempts,
        code.expires_at,
        code.used_at,
        now,
    ) {
        Ok(()) => {}
        Err(CodeRefusal::Void) => return refused(HostedRefused::CodeVoid),
        Err(CodeRefusal::Wrong) => {
            store::hosted_links::add_code_attempt(&mut tx, code.uuid).await?;
            tx.commit().await?;
            return refused(HostedRefused::CodeWrong);
        }
    }
    // A code sent for nobody never matches (`send_code` stores it anyway); and two tabs typing
    // one code: only the first spends it.
    if code.app_uuid != Some(app_uuid)
        || !store::hosted_links::use_hosted_code(&mut tx, code.uuid, now).await?
    {
        return refused(HostedRefused::CodeVoid);
    }
    tx.commit().await?;
    Ok(code.account_uuid)
}

/// What a confirmed hosted sign-up led to.
pub enum SignedUp {
    /// A new account, and where the browser goes: its enrollment flow, full-page.
    Created {
        account: Box<AccountRow>,
        location: String,
    },
    /// The address already has these accounts in the app (newest first): the customer signs in
    /// to them, and no second account is made.
    Existing(Vec<Uuid>),
}

/// Finishes a hosted sign-up once its code is confirmed: an address that already has an
/// account in the app is signed in to it; otherwise the account is created exactly as
/// `POST /v1/app/accounts` creates it, and its enrollment flow opens full-page.
pub async fn finish_sign_up(
    core: &Core,
    pending: &PendingSignUp,
    typed: &str,
) -> Result<SignedUp, Error<HostedRefused>> {
    confirm_code(
        core,
        CodePurpose::SignUp,
        pending.app_uuid,
        &pending.email,
        typed,
    )
    .await?;
    let Some(app) = store::apps::app_by_uuid(&core.db, pending.app_uuid).await? else {
        return refused(HostedRefused::NotFound);
    };
    let existing =
        store::hosted_links::accounts_with_email_in_app(&core.db, app.uuid, &pending.email).await?;
    if !existing.is_empty() {
        return Ok(SignedUp::Existing(existing));
    }
    let environment = app.environment_kind();
    let account = super::accounts::create_account(
        core,
        app.uuid,
        environment,
        CreateAccountIn {
            email: pending.email.clone(),
            first_name: pending.first_name.clone(),
            last_name: pending.last_name.clone(),
            phone: None,
            date_of_birth: None,
            preliminary_address: None,
            renewals_url: None,
            metadata: None,
        },
    )
    .await
    .map_err(|e| match e {
        Error::Refused(super::accounts::AccountRefused::Field(f)) => {
            Error::Refused(HostedRefused::Field(f))
        }
        Error::Refused(super::accounts::AccountRefused::AccountNotFound) => {
            Error::Refused(HostedRefused::NotFound)
        }
        // Only recording a client agent refuses so; creating an account never does.
        Error::Refused(why @ super::accounts::AccountRefused::PlanAcceptedFirst) => {
            Error::Failed(anyhow::anyhow!("creating an account refused: {why:?}"))
        }
        Error::Failed(e) => Error::Failed(e),
    })?;
    let mut tx = core.db.begin().await?;
    let location = open_flow_session(
        &mut tx,
        core,
        app.uuid,
        account.uuid,
        FlowScope::Enrollment,
        ReturnTo::Portal,
    )
    .await?;
    tx.commit().await?;
    Ok(SignedUp::Created {
        account: Box::new(account),
        location,
    })
}

/// Sends a portal sign-in code for `app` to the newest of its accounts with this address: the
/// portal signs in per app, so an address's accounts at other apps play no part. An unknown
/// address gets the same answer (and counts against the same limits), so that the page tells
/// nobody who is a customer. Answers the address as parsed.
pub async fn start_portal_sign_in(
    core: &Core,
    app: &AppRow,
    email: &str,
    ip: &str,
) -> Result<String, Error<HostedRefused>> {
    let email = parse_email("email", email)?;
    let newest = store::hosted_links::accounts_with_email_in_app(&core.db, app.uuid, &email)
        .await?
        .into_iter()
        .next();
    let account = match newest {
        Some(uuid) => store::accounts::account_by_uuid(&core.db, uuid).await?,
        None => None,
    };
    let first_name = account
        .as_ref()
        .map(|a| a.first_name.clone())
        .unwrap_or_default();
    let to = account.as_ref().map(|a| (app, Some(a.uuid)));
    send_code(core, CodePurpose::Portal, to, &email, &first_name, ip, true).await?;
    Ok(email)
}

/// Confirms a portal sign-in code sent from `app`'s page: answers the accounts of that app the
/// confirmed address may open, newest first (the one the code was sent for when the address
/// has no other).
pub async fn finish_portal_sign_in(
    core: &Core,
    app_uuid: Uuid,
    email: &str,
    typed: &str,
) -> Result<Vec<Uuid>, Error<HostedRefused>> {
    let Some(account) = confirm_code(core, CodePurpose::Portal, app_uuid, email, typed).await?
    else {
        return refused(HostedRefused::CodeVoid);
    };
    let all = store::hosted_links::accounts_with_email_in_app(&core.db, app_uuid, email).await?;
    Ok(if all.is_empty() { vec![account] } else { all })
}

/// An account a person may choose after signing in, with its app and first service address.
pub struct PortalChoice {
    pub account: AccountRow,
    pub app: AppRow,
    pub address: Option<String>,
}

/// The accounts among `uuids` that still exist, in that order, for the chooser.
pub async fn portal_choices(core: &Core, uuids: &[Uuid]) -> store::Result<Vec<PortalChoice>> {
    let mut choices = Vec::with_capacity(uuids.len());
    for uuid in uuids {
        let Some(account) = store::accounts::account_by_uuid(&core.db, *uuid).await? else {
            continue;
        };
        let Some(app) = store::apps::app_by_uuid(&core.db, account.app_uuid).await? else {
            continue;
        };
        let address = store::enrollment::locations_of_account(&core.db, account.uuid)
            .await?
            .first()
            .map(|l| format!("{}, {}", l.address_1, l.city));
        choices.push(PortalChoice {
            account,
            app,
            address,
        });
    }
    Ok(choices)
}

/// What the portal's home shows: the account, its app, and the bill to pay next.
pub struct PortalHome {
    pub account: AccountRow,
    pub app: AppRow,
    pub next_bill: Option<store::billing::InvoiceRow>,
}

/// The portal home of a signed-in customer; `None` when the account is gone.
pub async fn portal_home(core: &Core, account_uuid: Uuid) -> store::Result<Option<PortalHome>> {
    let Some(account) = store::accounts::account_by_uuid(&core.db, account_uuid).await? else {
        return Ok(None);
    };
    let Some(app) = store::apps::app_by_uuid(&core.db, account.app_uuid).await? else {
        return Ok(None);
    };
    let next_bill = store::billing::latest_unpaid_invoice(&core.db, account.uuid).await?;
    Ok(Some(PortalHome {
        account,
        app,
        next_bill,
    }))
}

//! What the dashboard reads of customers' accounts: searching them within the apps a member may
//! see, one account's whole story on one page (status and its history, locations and
//! contracts, invoices and payments, documents, e-mails, events), an e-mail's preview, and an
//! invoice's or a document's PDF. Every read first finds the account among those the member may
//! see, and every look at a customer's data writes an audit entry naming who looked, at whose
//! account and at what (never the data itself). An e-mail's preview shows its links inert: the
//! customer's single-use links stay the customer's.

use uuid::Uuid;

use super::{
    audit::{self, Actor},
    documents::DocumentRefused,
    invoices::{InvoicePdf, InvoiceRefused},
    Error,
};
use crate::{
    domain::{documents::LocationDocument, market::YRAC_VERSION, users::Member},
    state::Core,
    store::{
        self,
        accounts::{AccountRow, StatusChange},
        apps::AppRow,
        billing::{InvoiceRow, PaymentRow},
        emails::EmailRow,
        enrollment::{ContractRow, LocationRow},
        events::EventRow,
        Db,
    },
};

/// The most accounts a search lists.
const SEARCH_LIMIT: i64 = 50;

/// Accounts of the member's apps matching `query`: exactly by e-mail, account number or ESI ID,
/// or by part of the e-mail or the full name. A search that lists accounts is audited with the
/// accounts it listed.
pub async fn search_accounts(
    core: &Core,
    actor: &Actor,
    member: Member,
    query: &str,
) -> store::Result<Vec<AccountRow>> {
    let found = find_accounts(&core.db, member, query).await?;
    if !found.is_empty() {
        let listed: Vec<String> = found.iter().map(|a| a.uuid.to_string()).collect();
        audit_view(
            core,
            actor,
            "accounts.searched",
            "accounts",
            serde_json::json!({ "accounts": listed }),
        )
        .await?;
    }
    Ok(found)
}

async fn find_accounts(db: &Db, member: Member, query: &str) -> store::Result<Vec<AccountRow>> {
    let query = query.trim();
    if query.is_empty() || query.chars().count() > 200 {
        return Ok(Vec::new());
    }
    let organisation = match (member.is_operator(), member.organisation) {
        (true, _) => None,
        (false, Some(org)) => Some(org),
        // A partner member without an organisation sees nothing.
        (false, None) => return Ok(Vec::new()),
    };
    let lower = query.to_lowercase();
    store::accounts::search_accounts(db, organisation, &lower, &lower, SEARCH_LIMIT).await
}

/// One account as its dashboard page shows it.
pub struct AccountOverview {
    pub app: AppRow,
    pub account: AccountRow,
    pub history: Vec<StatusChange>,
    pub locations: Vec<LocationRow>,
    pub contracts: Vec<ContractRow>,
    pub invoices: Vec<InvoiceRow>,
    /// Newest first.
    pub payments: Vec<PaymentRow>,
    /// Each location's documents.
    pub documents: Vec<(Uuid, Vec<LocationDocument>)>,
    pub emails: Vec<EmailRow>,
    pub events: Vec<EventRow>,
    /// The operator marked the account exempt from late fees.
    pub late_fee_exempt: bool,
    /// Its disconnection notices with their bills' numbers, newest first.
    pub disconnections: Vec<(store::disconnections::DisconnectionRow, String)>,
    /// The latest deposit asked of it.
    pub deposit: Option<store::credit_reviews::DepositRow>,
}

/// The most payments an account's page lists.
const PAYMENTS_LISTED: i64 = 100;

/// The account `uuid` and its app, if the member may see the app; `None` for any other.
pub async fn visible_account(
    db: &Db,
    member: Member,
    uuid: Uuid,
) -> store::Result<Option<(AppRow, AccountRow)>> {
    let Some(account) = store::accounts::account_by_uuid(db, uuid).await? else {
        return Ok(None);
    };
    Ok(store::apps::app_by_uuid(db, account.app_uuid)
        .await?
        .filter(|a| member.may_see(a.organisation_uuid))
        .map(|app| (app, account)))
}

/// The account's page for a member who may see its app (`None` for any other), audited as
/// `account.viewed`.
pub async fn view_account(
    core: &Core,
    actor: &Actor,
    member: Member,
    uuid: Uuid,
) -> store::Result<Option<AccountOverview>> {
    let Some(overview) = account_overview(&core.db, member, uuid).await? else {
        return Ok(None);
    };
    audit_view(
        core,
        actor,
        "account.viewed",
        &account_target(uuid),
        serde_json::json!({}),
    )
    .await?;
    Ok(Some(overview))
}

/// One e-mail sent to an account the member may see, as it reads, for the dashboard's preview:
/// its HTML with every link inert and any single-use token blotted out, so that nobody at the
/// dashboard can open, or spend, the customer's links. Audited as `account.email_viewed`;
/// `None` for another's account or e-mail.
pub async fn email_preview(
    core: &Core,
    actor: &Actor,
    member: Member,
    account: Uuid,
    email: Uuid,
) -> store::Result<Option<String>> {
    if visible_account(&core.db, member, account).await?.is_none() {
        return Ok(None);
    }
    let Some(row) = store::emails::email_by_uuid(&core.db, email)
        .await?
        .filter(|e| e.account_uuid == Some(account))
    else {
        return Ok(None);
    };
    audit_view(
        core,
        actor,
        "account.email_viewed",
        &account_target(account),
        serde_json::json!({ "email": email, "template": row.template }),
    )
    .await?;
    Ok(Some(crate::mail::preview_html(&row.html_body)))
}

/// An invoice of an account the member may see, as a PDF; audited as `account.invoice_viewed`.
/// Another's account or invoice is refused as missing.
pub async fn invoice_pdf(
    core: &Core,
    actor: &Actor,
    member: Member,
    account: Uuid,
    number: &str,
) -> Result<InvoicePdf, Error<InvoiceRefused>> {
    let Some((app, account)) = visible_account(&core.db, member, account).await? else {
        return Err(Error::Refused(InvoiceRefused::AccountMissing));
    };
    let pdf = super::invoices::invoice_pdf(core, &app, account.uuid, number).await?;
    audit_view(
        core,
        actor,
        "account.invoice_viewed",
        &account_target(account.uuid),
        serde_json::json!({ "invoice": pdf.number }),
    )
    .await?;
    Ok(pdf)
}

fn account_target(account: Uuid) -> String {
    format!("account:{account}")
}

/// The audit entry of a member's look at customers' data, in a transaction of its own (the
/// look changes nothing else).
async fn audit_view(
    core: &Core,
    actor: &Actor,
    action: &str,
    target: &str,
    detail: serde_json::Value,
) -> store::Result<()> {
    let mut tx = core.db.begin().await?;
    audit::record(&mut tx, actor, action, target, detail, core.clock.now()).await?;
    tx.commit().await
}

/// The account `uuid` if the member may see its app; `None` for any other. Not audited: the
/// callers that show it to a person are (`view_account`), a page re-shown after a sandbox
/// action's refusal too.
pub async fn account_overview(
    db: &Db,
    member: Member,
    uuid: Uuid,
) -> store::Result<Option<AccountOverview>> {
    let Some((app, account)) = visible_account(db, member, uuid).await? else {
        return Ok(None);
    };
    let locations = store::enrollment::locations_of_account(db, uuid).await?;
    let mut documents = Vec::with_capacity(locations.len());
    for l in &locations {
        let of_location = super::enrollment::documents_of_location(db, uuid, l.uuid, YRAC_VERSION)
            .await?
            .map(|(_, d)| d)
            .unwrap_or_default();
        documents.push((l.uuid, of_location));
    }
    let mut emails = store::emails::emails_of_app(db, app.uuid, Some(uuid), 100, 0).await?;
    emails.truncate(100);
    Ok(Some(AccountOverview {
        history: store::accounts::status_history(db, uuid).await?,
        contracts: store::enrollment::contracts_of_account(db, uuid).await?,
        invoices: store::billing::invoices_of_account(db, uuid, 100, 0).await?,
        payments: store::billing::payments_of_account(db, uuid, PAYMENTS_LISTED).await?,
        locations,
        documents,
        events: store::events::events_of_account(db, uuid).await?,
        late_fee_exempt: store::collections::is_late_fee_exempt(db, uuid).await?,
        disconnections: super::disconnection::notices(db, uuid).await?,
        deposit: store::credit_reviews::latest_deposit(db, uuid).await?,
        emails,
        app,
        account,
    }))
}

/// One document of an account the member may see, as a PDF (its file name without `.pdf`, and
/// its bytes): the same as the customer's portal serves; audited as `account.document_viewed`.
/// Another's account or document is `NotFound`.
pub async fn document_pdf(
    core: &Core,
    actor: &Actor,
    member: Member,
    account: Uuid,
    document: Uuid,
) -> Result<(String, Vec<u8>), Error<DocumentRefused>> {
    if visible_account(&core.db, member, account).await?.is_none() {
        return Err(Error::Refused(DocumentRefused::NotFound));
    }
    let pdf = super::portal::document_pdf(core, account, document).await?;
    audit_view(
        core,
        actor,
        "account.document_viewed",
        &account_target(account),
        serde_json::json!({ "document": document }),
    )
    .await?;
    Ok(pdf)
}

/// The audit entry of a sandbox action taken on an account from the dashboard (a clock moved,
/// an event simulated), written once the action is done: those run in transactions of their
/// own, with the account's clock held.
pub async fn audit_sandbox_action(
    core: &Core,
    actor: &Actor,
    account: Uuid,
    action: &str,
    detail: serde_json::Value,
) -> store::Result<()> {
    let mut tx = core.db.begin().await?;
    audit::record(
        &mut tx,
        actor,
        action,
        &format!("account:{account}"),
        detail,
        core.clock.now(),
    )
    .await?;
    tx.commit().await
}

//! What the dashboard reads of customers' accounts: searching them within the apps a member may
//! see, one account's whole story on one page (status and its history, locations and
//! contracts, invoices and payments, documents, e-mails, events), and a document's PDF. Every
//! read first finds the account among those the member may see.

use uuid::Uuid;

use super::{
    audit::{self, Actor},
    documents::DocumentRefused,
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
/// or by part of the e-mail or the full name.
pub async fn search_accounts(
    db: &Db,
    member: Member,
    query: &str,
) -> store::Result<Vec<AccountRow>> {
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

/// The account `uuid` if the member may see its app; `None` for any other.
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
        emails,
        app,
        account,
    }))
}

/// One document of an account the member may see, as a PDF (its file name without `.pdf`, and
/// its bytes): the same as the customer's portal serves. Another's account or document is
/// `NotFound`.
pub async fn document_pdf(
    core: &Core,
    member: Member,
    account: Uuid,
    document: Uuid,
) -> Result<(String, Vec<u8>), Error<DocumentRefused>> {
    if visible_account(&core.db, member, account).await?.is_none() {
        return Err(Error::Refused(DocumentRefused::NotFound));
    }
    super::portal::document_pdf(core, account, document).await
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

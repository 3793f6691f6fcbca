//! What the dashboard reads of customers' accounts: searching them within the apps a member may
//! see, and one account's whole story on one page (status and its history, locations and
//! contracts, invoices, e-mails, events).

use uuid::Uuid;

use crate::{
    domain::users::Member,
    store::{
        self,
        accounts::{AccountRow, StatusChange},
        apps::AppRow,
        billing::InvoiceRow,
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
    pub emails: Vec<EmailRow>,
    pub events: Vec<EventRow>,
}

/// The account `uuid` if the member may see its app; `None` for any other.
pub async fn account_overview(
    db: &Db,
    member: Member,
    uuid: Uuid,
) -> store::Result<Option<AccountOverview>> {
    let Some(account) = store::accounts::account_by_uuid(db, uuid).await? else {
        return Ok(None);
    };
    let Some(app) = store::apps::app_by_uuid(db, account.app_uuid)
        .await?
        .filter(|a| member.may_see(a.organisation_uuid))
    else {
        return Ok(None);
    };
    let mut emails = store::emails::emails_of_app(db, app.uuid, Some(uuid), 100, 0).await?;
    emails.truncate(100);
    Ok(Some(AccountOverview {
        history: store::accounts::status_history(db, uuid).await?,
        locations: store::enrollment::locations_of_account(db, uuid).await?,
        contracts: store::enrollment::contracts_of_account(db, uuid).await?,
        invoices: store::billing::invoices_of_account(db, uuid, 100, 0).await?,
        events: store::events::events_of_account(db, uuid).await?,
        emails,
        app,
        account,
    }))
}

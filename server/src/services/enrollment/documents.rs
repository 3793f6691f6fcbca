//! A location with its contracts, and the documents of its contracts (`documents_of_location`).

use uuid::Uuid;

use crate::{
    domain::documents::{
        location_documents, ContractTerms, DocumentKind, LocationDocument, NoticeTerms,
    },
    store::{
        self,
        enrollment::{ContractRow, LocationRow},
    },
};

/// The account's location with its contracts; `None` for another account's location.
pub async fn location_with_contracts(
    db: &store::Db,
    account: Uuid,
    location_uuid: Uuid,
) -> store::Result<Option<(LocationRow, Vec<ContractRow>)>> {
    let Some(location) = store::enrollment::location_of_account(db, account, location_uuid).await?
    else {
        return Ok(None);
    };
    let mut contracts = store::enrollment::contracts_of_account(db, account).await?;
    contracts.retain(|c| c.location_uuid == location_uuid);
    Ok(Some((location, contracts)))
}

/// The location's contracts and every document of them (`domain::documents`); `None` for
/// another account's location. A contract whose plan is gone names `default_yrac_version`.
pub async fn documents_of_location(
    db: &store::Db,
    account: Uuid,
    location_uuid: Uuid,
    default_yrac_version: &str,
) -> store::Result<Option<(Vec<ContractRow>, Vec<LocationDocument>)>> {
    let Some((_, contracts)) = location_with_contracts(db, account, location_uuid).await? else {
        return Ok(None);
    };
    let mut terms = Vec::with_capacity(contracts.len());
    for c in &contracts {
        let yrac_version = store::market::plan_by_uuid(db, c.plan_uuid)
            .await?
            .map(|p| p.yrac_version)
            .unwrap_or_else(|| default_yrac_version.to_owned());
        let has_loa =
            store::documents::contract_has_document(db, c.uuid, DocumentKind::Loa).await?;
        let notices = store::renewal::notices_of_contract(db, c.uuid)
            .await?
            .into_iter()
            .map(|n| NoticeTerms {
                uuid: n.uuid,
                sent_on: crate::domain::market::market_date(n.created_at),
                contract_end: n.contract_end,
            })
            .collect();
        terms.push(ContractTerms {
            uuid: c.uuid,
            plan_uuid: c.plan_uuid,
            tos_version: c.tos_version.clone(),
            yrac_version,
            start_date: c.start_date,
            status: c.status,
            has_loa,
            notices,
        });
    }
    Ok(Some((contracts, location_documents(&terms))))
}

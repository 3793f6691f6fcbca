//! The plan documents as PDFs: a priced plan's EFL and the versioned TOS and YRAC behind the
//! links plans carry; the documents a customer accepts with a contract, stored (bytes and
//! SHA-256) in the acceptance's own transaction and read back exactly as stored, so that a
//! later change of template or rates never changes what was agreed to; the Letter of
//! Authorization and the expiration notices stored the same way.

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::Error::{self, Refused};
use crate::{
    documents::{self, loa::LoaDocument, notice::NoticeDocument},
    domain::{documents::DocumentKind, market::YRAC_VERSION},
    state::Core,
    store::{
        self, apps::AppRow, documents::StoredDocumentRow, enrollment::ContractRow, market::PlanRow,
        Tx,
    },
};

/// Why a document cannot be given.
#[derive(Debug)]
pub enum DocumentRefused {
    NotFound,
}

type Result<T> = std::result::Result<T, Error<DocumentRefused>>;

const PDF: &str = "application/pdf";

/// The SHA-256 of a document's bytes, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

struct Owner {
    account: Uuid,
    contract: Option<Uuid>,
    notice: Option<Uuid>,
    email: Option<Uuid>,
}

async fn insert(
    tx: &mut Tx,
    owner: Owner,
    kind: DocumentKind,
    version: &str,
    bytes: Vec<u8>,
    now: DateTime<Utc>,
) -> store::Result<()> {
    store::documents::insert_document(
        tx,
        &StoredDocumentRow {
            uuid: Uuid::new_v4(),
            account_uuid: owner.account,
            contract_uuid: owner.contract,
            notice_uuid: owner.notice,
            email_uuid: owner.email,
            kind,
            version: version.to_owned(),
            content_type: PDF.to_owned(),
            sha256: sha256_hex(&bytes),
            bytes,
            created_at: now,
        },
    )
    .await
}

/// The display name of a utility, or its code when it is not known.
async fn utility_name(core: &Core, tdu: &str) -> store::Result<String> {
    Ok(store::market::tdus(&core.db)
        .await?
        .into_iter()
        .find(|t| t.name == tdu)
        .map_or_else(|| tdu.to_owned(), |t| t.display_name))
}

/// The EFL, TOS and YRAC a customer accepts with a contract, rendered (outside the
/// acceptance's transaction, which only stores them).
pub struct ContractDocuments([(DocumentKind, String, Vec<u8>); 3]);

/// The documents of a contract of `plan` under the Terms of Service `tos_version`, as they
/// are shown now.
pub async fn render_contract_documents(
    core: &Core,
    app: &AppRow,
    plan: &PlanRow,
    tos_version: &str,
) -> store::Result<ContractDocuments> {
    let provider = &core.config.provider;
    let efl = documents::efl_document(app, plan, &utility_name(core, &plan.tdu).await?, provider);
    let head = documents::letterhead(app, provider);
    Ok(ContractDocuments([
        (
            DocumentKind::Efl,
            plan.uuid.to_string(),
            documents::efl::render(&efl),
        ),
        (
            DocumentKind::Tos,
            tos_version.to_owned(),
            documents::terms::render_tos(&head, tos_version),
        ),
        (
            DocumentKind::Yrac,
            plan.yrac_version.clone(),
            documents::terms::render_yrac(&head, &plan.yrac_version),
        ),
    ]))
}

/// Stores, in `tx`, the documents a customer accepted with `contract`, exactly as rendered.
pub async fn store_contract_documents(
    tx: &mut Tx,
    contract: &ContractRow,
    rendered: ContractDocuments,
    now: DateTime<Utc>,
) -> store::Result<()> {
    for (kind, version, bytes) in rendered.0 {
        let owner = Owner {
            account: contract.account_uuid,
            contract: Some(contract.uuid),
            notice: None,
            email: None,
        };
        insert(tx, owner, kind, &version, bytes, now).await?;
    }
    Ok(())
}

/// Stores, in `tx`, the Letter of Authorization of a client agent enrollment's contract.
pub async fn store_loa(
    tx: &mut Tx,
    contract: &ContractRow,
    loa: &LoaDocument,
    now: DateTime<Utc>,
) -> store::Result<()> {
    let owner = Owner {
        account: contract.account_uuid,
        contract: Some(contract.uuid),
        notice: None,
        email: None,
    };
    let version = crate::domain::market::market_date(loa.accepted_at).to_string();
    insert(
        tx,
        owner,
        DocumentKind::Loa,
        &version,
        documents::loa::render(loa),
        now,
    )
    .await
}

/// Stores, in `tx`, an expiration notice as it was sent, attached to the e-mail `email_uuid`
/// that carries it.
pub async fn store_notice(
    tx: &mut Tx,
    account: Uuid,
    notice_uuid: Uuid,
    email_uuid: Uuid,
    notice: &NoticeDocument,
    now: DateTime<Utc>,
) -> store::Result<()> {
    let owner = Owner {
        account,
        contract: None,
        notice: Some(notice_uuid),
        email: Some(email_uuid),
    };
    let version = notice.contract_end.to_string();
    let bytes = documents::notice::render(notice);
    insert(tx, owner, DocumentKind::RenewalNotice, &version, bytes, now).await
}

/// A disconnection notice as a PDF, kept and attached to the e-mail `email_uuid` that
/// carries it, in `tx`.
pub async fn store_disconnection_notice(
    tx: &mut Tx,
    account: Uuid,
    email_uuid: Uuid,
    notice: &crate::documents::disconnection::DisconnectionNoticeDocument,
    now: DateTime<Utc>,
) -> store::Result<()> {
    let owner = Owner {
        account,
        contract: None,
        notice: None,
        email: Some(email_uuid),
    };
    let version = notice.notice_date.to_string();
    let bytes = crate::documents::disconnection::render(notice);
    insert(
        tx,
        owner,
        DocumentKind::DisconnectionNotice,
        &version,
        bytes,
        now,
    )
    .await
}

/// A priced plan's EFL as its link shows it (the plan's rates never change; the template may).
pub async fn plan_efl(core: &Core, plan_uuid: Uuid) -> Result<Vec<u8>> {
    let plan = store::market::plan_by_uuid(&core.db, plan_uuid)
        .await?
        .ok_or(Refused(DocumentRefused::NotFound))?;
    let app = store::apps::app_by_uuid(&core.db, plan.app_uuid)
        .await?
        .ok_or(Refused(DocumentRefused::NotFound))?;
    let efl = documents::efl_document(
        &app,
        &plan,
        &utility_name(core, &plan.tdu).await?,
        &core.config.provider,
    );
    Ok(documents::efl::render(&efl))
}

/// A version of the Terms of Service that some plan group uses, under the provider's name.
pub async fn tos(core: &Core, version: &str) -> Result<Vec<u8>> {
    if !store::market::tos_version_exists(&core.db, version).await? {
        return Err(Refused(DocumentRefused::NotFound));
    }
    Ok(documents::terms::render_tos(
        &neutral_letterhead(core),
        version,
    ))
}

/// Your Rights as a Customer, in its one version.
pub fn yrac(core: &Core, version: &str) -> Result<Vec<u8>> {
    if version != YRAC_VERSION {
        return Err(Refused(DocumentRefused::NotFound));
    }
    Ok(documents::terms::render_yrac(
        &neutral_letterhead(core),
        version,
    ))
}

/// The letterhead of a document no app brands: the provider's own.
fn neutral_letterhead(core: &Core) -> documents::terms::Letterhead {
    documents::terms::Letterhead {
        brand_name: core.config.provider.name.clone(),
        brand_color: None,
        provider_name: core.config.provider.name.clone(),
    }
}

/// A contract's document of `kind` as the customer accepted it: the stored bytes, or, for a
/// contract accepted before documents were stored, as it renders now.
pub async fn contract_document(
    core: &Core,
    contract_uuid: Uuid,
    kind: DocumentKind,
) -> Result<Vec<u8>> {
    if let Some(stored) =
        store::documents::document_of_contract(&core.db, contract_uuid, kind).await?
    {
        return Ok(stored.bytes);
    }
    let contract = store::enrollment::contract_by_uuid(&core.db, contract_uuid)
        .await?
        .ok_or(Refused(DocumentRefused::NotFound))?;
    let plan = store::market::plan_by_uuid(&core.db, contract.plan_uuid)
        .await?
        .ok_or(Refused(DocumentRefused::NotFound))?;
    let app = store::apps::app_by_uuid(&core.db, plan.app_uuid)
        .await?
        .ok_or(Refused(DocumentRefused::NotFound))?;
    render_contract_documents(core, &app, &plan, &contract.tos_version)
        .await?
        .0
        .into_iter()
        .find(|(k, _, _)| *k == kind)
        .map(|(_, _, bytes)| bytes)
        .ok_or(Refused(DocumentRefused::NotFound))
}

/// An expiration notice as it was sent.
pub async fn notice_document(core: &Core, notice_uuid: Uuid) -> Result<Vec<u8>> {
    store::documents::document_of_notice(&core.db, notice_uuid)
        .await?
        .map(|d| d.bytes)
        .ok_or(Refused(DocumentRefused::NotFound))
}

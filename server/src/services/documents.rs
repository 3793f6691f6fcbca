//! The plan documents as PDFs (and, for reading inside a flow, as HTML of the same text): a
//! priced plan's EFL and the versioned TOS and YRAC behind the
//! links plans carry; the documents a customer accepts with a contract, stored (bytes and
//! SHA-256) in the acceptance's own transaction and read back exactly as stored, so that a
//! later change of template or rates never changes what was agreed to; the Letter of
//! Authorization and the expiration notices stored the same way.

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::Error::{self, Refused};
use crate::{
    documents::{self, html::Laid, loa::LoaDocument, notice::NoticeDocument},
    domain::{documents::DocumentKind, market::YRAC_VERSION},
    state::Core,
    store::{
        self, apps::AppRow, documents::StoredDocumentRow, enrollment::ContractRow, market::PlanRow,
        Tx,
    },
};

/// How a document is asked for: its PDF (what is stored and sent), or the HTML rendition of
/// the same text, which a flow shows inside its own page where a PDF cannot open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Rendition {
    #[default]
    Pdf,
    Html,
}

impl Rendition {
    fn of(self, laid: Laid) -> Rendered {
        match self {
            Rendition::Pdf => Rendered::Pdf(laid.pdf()),
            Rendition::Html => Rendered::Html(laid.html()),
        }
    }
}

/// A document as asked for.
#[derive(Debug)]
pub enum Rendered {
    Pdf(Vec<u8>),
    Html(String),
}

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
    let laid = lay_out_contract_documents(core, app, plan, tos_version).await?;
    Ok(ContractDocuments(
        laid.map(|(kind, version, laid)| (kind, version, laid.pdf())),
    ))
}

/// The EFL, TOS and YRAC of a contract of `plan`, laid out for their PDFs or their HTML.
async fn lay_out_contract_documents(
    core: &Core,
    app: &AppRow,
    plan: &PlanRow,
    tos_version: &str,
) -> store::Result<[(DocumentKind, String, Laid); 3]> {
    let provider = &core.config.provider;
    let efl = documents::efl_document(app, plan, &utility_name(core, &plan.tdu).await?, provider);
    let head = documents::letterhead(app, provider);
    Ok([
        (
            DocumentKind::Efl,
            plan.uuid.to_string(),
            documents::efl::laid(&efl),
        ),
        (
            DocumentKind::Tos,
            tos_version.to_owned(),
            documents::terms::tos(&head, tos_version),
        ),
        (
            DocumentKind::Yrac,
            plan.yrac_version.clone(),
            documents::terms::yrac(&head, &plan.yrac_version),
        ),
    ])
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
pub async fn plan_efl(core: &Core, plan_uuid: Uuid, rendition: Rendition) -> Result<Rendered> {
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
    Ok(rendition.of(documents::efl::laid(&efl)))
}

/// A version of the Terms of Service that some plan group uses, under the provider's name.
pub async fn tos(core: &Core, version: &str, rendition: Rendition) -> Result<Rendered> {
    if !store::market::tos_version_exists(&core.db, version).await? {
        return Err(Refused(DocumentRefused::NotFound));
    }
    Ok(rendition.of(documents::terms::tos(&neutral_letterhead(core), version)))
}

/// Your Rights as a Customer, in its one version.
pub fn yrac(core: &Core, version: &str, rendition: Rendition) -> Result<Rendered> {
    if version != YRAC_VERSION {
        return Err(Refused(DocumentRefused::NotFound));
    }
    Ok(rendition.of(documents::terms::yrac(&neutral_letterhead(core), version)))
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
/// contract accepted before documents were stored, as it renders now. Its HTML rendition is
/// written from the same plan and versions; the PDF stays the record of what was agreed.
pub async fn contract_document(
    core: &Core,
    contract_uuid: Uuid,
    kind: DocumentKind,
    rendition: Rendition,
) -> Result<Rendered> {
    if rendition == Rendition::Pdf {
        if let Some(stored) =
            store::documents::document_of_contract(&core.db, contract_uuid, kind).await?
        {
            return Ok(Rendered::Pdf(stored.bytes));
        }
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
    lay_out_contract_documents(core, &app, &plan, &contract.tos_version)
        .await?
        .into_iter()
        .find(|(k, _, _)| *k == kind)
        .map(|(_, _, laid)| rendition.of(laid))
        .ok_or(Refused(DocumentRefused::NotFound))
}

/// A contract's document of `kind` as the PDF the customer accepted.
pub async fn contract_pdf(core: &Core, contract_uuid: Uuid, kind: DocumentKind) -> Result<Vec<u8>> {
    match contract_document(core, contract_uuid, kind, Rendition::Pdf).await? {
        Rendered::Pdf(bytes) => Ok(bytes),
        Rendered::Html(_) => Err(Refused(DocumentRefused::NotFound)),
    }
}

/// An expiration notice as it was sent.
pub async fn notice_document(core: &Core, notice_uuid: Uuid) -> Result<Vec<u8>> {
    store::documents::document_of_notice(&core.db, notice_uuid)
        .await?
        .map(|d| d.bytes)
        .ok_or(Refused(DocumentRefused::NotFound))
}

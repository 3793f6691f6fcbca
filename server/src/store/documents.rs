//! Documents as the customer was given them: the bytes of each plan document accepted with a
//! contract (and of each expiration notice), with their SHA-256, written once and never
//! changed.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{on_conn, on_tx, Conn, Result, Tx};
use crate::domain::documents::DocumentKind;

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct StoredDocumentRow {
    pub uuid: Uuid,
    pub account_uuid: Uuid,
    /// The contract it was accepted with (EFL, TOS, YRAC, LOA).
    pub contract_uuid: Option<Uuid>,
    /// The expiration notice it is.
    pub notice_uuid: Option<Uuid>,
    /// The e-mail that carries it as an attachment.
    pub email_uuid: Option<Uuid>,
    pub kind: DocumentKind,
    pub version: String,
    pub content_type: String,
    /// Lowercase hex.
    pub sha256: String,
    pub bytes: Vec<u8>,
    pub created_at: DateTime<Utc>,
}

const COLUMNS: &str = "uuid, account_uuid, contract_uuid, notice_uuid, email_uuid, kind, \
    version, content_type, sha256, bytes, created_at";

pub async fn insert_document(tx: &mut Tx, d: &StoredDocumentRow) -> Result<()> {
    let sql = format!(
        "INSERT INTO stored_documents ({COLUMNS}) VALUES \
         ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
    );
    on_tx!(tx, c => sqlx::query(&sql)
        .bind(d.uuid)
        .bind(d.account_uuid)
        .bind(d.contract_uuid)
        .bind(d.notice_uuid)
        .bind(d.email_uuid)
        .bind(d.kind)
        .bind(&d.version)
        .bind(&d.content_type)
        .bind(&d.sha256)
        .bind(&d.bytes)
        .bind(d.created_at)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// The document of `kind` stored with a contract.
pub async fn document_of_contract(
    conn: impl Into<Conn<'_>>,
    contract_uuid: Uuid,
    kind: DocumentKind,
) -> Result<Option<StoredDocumentRow>> {
    let sql =
        format!("SELECT {COLUMNS} FROM stored_documents WHERE contract_uuid = $1 AND kind = $2");
    on_conn!(conn.into(), c => sqlx::query_as::<_, StoredDocumentRow>(&sql)
        .bind(contract_uuid)
        .bind(kind)
        .fetch_optional(c)
        .await)
}

/// Whether a document of `kind` is stored with a contract (without reading its bytes).
pub async fn contract_has_document(
    conn: impl Into<Conn<'_>>,
    contract_uuid: Uuid,
    kind: DocumentKind,
) -> Result<bool> {
    let sql = "SELECT COUNT(*) FROM stored_documents WHERE contract_uuid = $1 AND kind = $2";
    let count: i64 = on_conn!(conn.into(), c => sqlx::query_scalar(sql)
        .bind(contract_uuid)
        .bind(kind)
        .fetch_one(c)
        .await)?;
    Ok(count > 0)
}

/// The stored document of an expiration notice.
pub async fn document_of_notice(
    conn: impl Into<Conn<'_>>,
    notice_uuid: Uuid,
) -> Result<Option<StoredDocumentRow>> {
    let sql = format!("SELECT {COLUMNS} FROM stored_documents WHERE notice_uuid = $1");
    on_conn!(conn.into(), c => sqlx::query_as::<_, StoredDocumentRow>(&sql)
        .bind(notice_uuid)
        .fetch_optional(c)
        .await)
}

/// The documents an e-mail carries as attachments.
pub async fn attachments_of_email(
    conn: impl Into<Conn<'_>>,
    email_uuid: Uuid,
) -> Result<Vec<StoredDocumentRow>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM stored_documents WHERE email_uuid = $1 ORDER BY created_at, uuid"
    );
    on_conn!(conn.into(), c => sqlx::query_as::<_, StoredDocumentRow>(&sql)
        .bind(email_uuid)
        .fetch_all(c)
        .await)
}

/// What an e-mail's attachment is, without its bytes.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct AttachmentSummaryRow {
    pub uuid: Uuid,
    pub email_uuid: Uuid,
    pub kind: DocumentKind,
    pub version: String,
    pub content_type: String,
    pub sha256: String,
    pub size_bytes: i64,
}

/// The attachments of the given e-mails (their bytes' length, not the bytes), in the order
/// they were stored.
pub async fn attachment_summaries_of_emails(
    conn: impl Into<Conn<'_>>,
    email_uuids: &[Uuid],
) -> Result<Vec<AttachmentSummaryRow>> {
    if email_uuids.is_empty() {
        return Ok(Vec::new());
    }
    let placeholders = (1..=email_uuids.len())
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ");
    let sql = format!(
        "SELECT uuid, email_uuid, kind, version, content_type, sha256, \
         CAST(LENGTH(bytes) AS BIGINT) AS size_bytes \
         FROM stored_documents WHERE email_uuid IN ({placeholders}) ORDER BY created_at, uuid"
    );
    on_conn!(conn.into(), c => {
        let mut q = sqlx::query_as::<_, AttachmentSummaryRow>(&sql);
        for uuid in email_uuids {
            q = q.bind(*uuid);
        }
        q.fetch_all(c).await
    })
}

/// One attachment of an e-mail, with its bytes.
pub async fn attachment_of_email(
    conn: impl Into<Conn<'_>>,
    email_uuid: Uuid,
    uuid: Uuid,
) -> Result<Option<StoredDocumentRow>> {
    let sql = format!("SELECT {COLUMNS} FROM stored_documents WHERE email_uuid = $1 AND uuid = $2");
    on_conn!(conn.into(), c => sqlx::query_as::<_, StoredDocumentRow>(&sql)
        .bind(email_uuid)
        .bind(uuid)
        .fetch_optional(c)
        .await)
}

/// The kinds of the documents of `contract` that no e-mail carries yet, in storing order.
pub async fn unsent_documents_of_contract(
    conn: impl Into<Conn<'_>>,
    contract_uuid: Uuid,
) -> Result<Vec<DocumentKind>> {
    let sql = "SELECT kind FROM stored_documents WHERE contract_uuid = $1 AND email_uuid IS NULL \
        ORDER BY created_at, uuid";
    on_conn!(conn.into(), c => sqlx::query_scalar::<_, DocumentKind>(sql)
        .bind(contract_uuid)
        .fetch_all(c)
        .await)
}

/// Attaches the documents of `contract` that no e-mail carries yet to the e-mail `email_uuid`.
pub async fn attach_contract_documents(
    tx: &mut Tx,
    contract_uuid: Uuid,
    email_uuid: Uuid,
) -> Result<u64> {
    let sql = "UPDATE stored_documents SET email_uuid = $1 \
        WHERE contract_uuid = $2 AND email_uuid IS NULL";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(email_uuid)
        .bind(contract_uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))
}

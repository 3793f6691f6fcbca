//! Which documents a location has: the EFL, TOS and YRAC of every contract it had or will have,
//! each active (the contract in force), queued (a contract that starts later, such as an
//! accepted renewal) or superseded (a contract that ended or was replaced).

use chrono::NaiveDate;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::enrollment::ContractStatus;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocumentKind {
    Efl,
    Tos,
    Yrac,
}

impl DocumentKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DocumentKind::Efl => "efl",
            DocumentKind::Tos => "tos",
            DocumentKind::Yrac => "yrac",
        }
    }
}

super::text_enum! {
    /// A document's place among a location's: in force, replaced, or waiting for its contract.
    pub enum DocumentStatus {
        Active = "active",
        Superseded = "superseded",
        Queued = "queued",
    }
}

/// What the documents of one contract depend on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContractTerms {
    pub uuid: Uuid,
    pub plan_uuid: Uuid,
    pub tos_version: String,
    pub yrac_version: String,
    pub start_date: NaiveDate,
    pub status: ContractStatus,
}

/// One document of a location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocationDocument {
    /// Stable: the same contract and kind always give the same id.
    pub uuid: Uuid,
    pub kind: DocumentKind,
    /// The EFL's version is the priced plan it describes; TOS and YRAC carry their own.
    pub version: String,
    pub contract_uuid: Uuid,
    pub plan_uuid: Uuid,
    pub effective_date: NaiveDate,
    pub status: DocumentStatus,
}

/// The contract in force at a location: the active one, else the pending one, else the most
/// recent (a cancelled or ended location still shows what it had).
pub fn contract_in_force<C>(
    contracts: &[C],
    status: impl Fn(&C) -> ContractStatus,
    start: impl Fn(&C) -> NaiveDate,
) -> Option<&C> {
    contracts.iter().max_by_key(|c| {
        (
            status(c) == ContractStatus::Active,
            status(c) == ContractStatus::Pending,
            start(c),
        )
    })
}

/// Every document of a location's contracts, those in force first, then the queued ones, then
/// the superseded, each group newest first.
pub fn location_documents(contracts: &[ContractTerms]) -> Vec<LocationDocument> {
    let in_force = contract_in_force(contracts, |c| c.status, |c| c.start_date);
    let mut documents: Vec<LocationDocument> = contracts
        .iter()
        .flat_map(|c| {
            let status = if Some(c) == in_force {
                DocumentStatus::Active
            } else if c.status == ContractStatus::Pending
                && in_force.is_some_and(|f| f.start_date < c.start_date)
            {
                DocumentStatus::Queued
            } else {
                DocumentStatus::Superseded
            };
            [
                (DocumentKind::Efl, c.plan_uuid.to_string()),
                (DocumentKind::Tos, c.tos_version.clone()),
                (DocumentKind::Yrac, c.yrac_version.clone()),
            ]
            .into_iter()
            .map(move |(kind, version)| LocationDocument {
                uuid: document_uuid(c.uuid, kind),
                kind,
                version,
                contract_uuid: c.uuid,
                plan_uuid: c.plan_uuid,
                effective_date: c.start_date,
                status,
            })
        })
        .collect();
    let rank = |s: DocumentStatus| match s {
        DocumentStatus::Active => 0,
        DocumentStatus::Queued => 1,
        DocumentStatus::Superseded => 2,
    };
    documents.sort_by(|a, b| {
        rank(a.status)
            .cmp(&rank(b.status))
            .then(b.effective_date.cmp(&a.effective_date))
    });
    documents
}

/// Documents are not stored rows: their id is derived from what they belong to, so that it
/// stays the same from one request to the next.
fn document_uuid(contract_uuid: Uuid, kind: DocumentKind) -> Uuid {
    let digest = Sha256::new()
        .chain_update(contract_uuid.as_bytes())
        .chain_update(kind.as_str().as_bytes())
        .finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_custom_bytes(bytes).into_uuid()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    fn contract(status: &str, start: &str, tos: &str) -> ContractTerms {
        ContractTerms {
            uuid: Uuid::new_v4(),
            plan_uuid: Uuid::new_v4(),
            tos_version: tos.to_owned(),
            yrac_version: "2024.1".to_owned(),
            start_date: date(start),
            status: ContractStatus::parse(status).unwrap(),
        }
    }

    #[test]
    fn a_new_location_has_its_three_documents_active() {
        let c = contract("pending", "2026-03-10", "3.0");
        let docs = location_documents(std::slice::from_ref(&c));
        let kinds: Vec<_> = docs
            .iter()
            .map(|d| (d.kind, d.version.as_str(), d.status))
            .collect();
        let plan = c.plan_uuid.to_string();
        assert_eq!(
            kinds,
            [
                (DocumentKind::Efl, plan.as_str(), DocumentStatus::Active),
                (DocumentKind::Tos, "3.0", DocumentStatus::Active),
                (DocumentKind::Yrac, "2024.1", DocumentStatus::Active),
            ]
        );
        assert!(docs.iter().all(|d| d.effective_date == date("2026-03-10")));
        // The ids are stable and distinct.
        assert_eq!(docs, location_documents(std::slice::from_ref(&c)));
        assert_ne!(docs[0].uuid, docs[1].uuid);
    }

    #[test]
    fn a_renewal_is_queued_and_an_ended_contract_superseded() {
        let ended = contract("ended", "2025-03-10", "2.0");
        let active = contract("active", "2025-09-10", "3.0");
        let renewal = contract("pending", "2026-09-10", "3.1");
        let docs = location_documents(&[ended.clone(), renewal.clone(), active.clone()]);
        let of = |c: &ContractTerms| {
            docs.iter()
                .filter(|d| d.contract_uuid == c.uuid)
                .map(|d| d.status)
                .collect::<Vec<_>>()
        };
        assert_eq!(of(&active), [DocumentStatus::Active; 3]);
        assert_eq!(of(&renewal), [DocumentStatus::Queued; 3]);
        assert_eq!(of(&ended), [DocumentStatus::Superseded; 3]);
        let order: Vec<_> = docs.iter().map(|d| d.status).collect();
        assert!(order.windows(2).all(|w| {
            let r = |s| match s {
                DocumentStatus::Active => 0,
                DocumentStatus::Queued => 1,
                DocumentStatus::Superseded => 2,
            };
            r(w[0]) <= r(w[1])
        }));
    }

    #[test]
    fn a_cancelled_location_keeps_its_last_contract_in_force() {
        let cancelled = contract("cancelled", "2026-01-05", "3.0");
        let docs = location_documents(std::slice::from_ref(&cancelled));
        assert!(docs.iter().all(|d| d.status == DocumentStatus::Active));
        assert!(location_documents(&[]).is_empty());
    }
}

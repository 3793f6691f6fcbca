//! Which documents a location has: the EFL, TOS and YRAC of every contract it had or will have
//! (with the LOA of a client agent enrollment and the expiration notices sent), each active
//! (the contract in force), queued (a contract that starts later, such as an accepted renewal)
//! or superseded (a contract that ended or was replaced); the provider every document names,
//! and the text of Your Rights as a Customer.

use chrono::NaiveDate;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::enrollment::ContractStatus;

super::text_enum! {
    /// What a document is: a plan's Electricity Facts Label, the Terms of Service, Your Rights
    /// as a Customer, a client agent enrollment's Letter of Authorization, or an expiration
    /// notice.
    pub enum DocumentKind {
        Efl = "efl",
        Tos = "tos",
        Yrac = "yrac",
        Loa = "loa",
        RenewalNotice = "renewal_notice",
    }
}

impl DocumentKind {
    /// What a customer calls the document.
    pub fn title(self) -> &'static str {
        match self {
            DocumentKind::Efl => "Electricity Facts Label",
            DocumentKind::Tos => "Terms of Service",
            DocumentKind::Yrac => "Your Rights as a Customer",
            DocumentKind::Loa => "Letter of Authorization",
            DocumentKind::RenewalNotice => "Contract expiration notice",
        }
    }
}

/// The documents' titles in the order a contract lists them (EFL, TOS, YRAC, LOA, notices),
/// whatever order they were stored in.
pub fn titles_in_contract_order(kinds: &[DocumentKind]) -> Vec<String> {
    let rank = |k: &DocumentKind| match k {
        DocumentKind::Efl => 0,
        DocumentKind::Tos => 1,
        DocumentKind::Yrac => 2,
        DocumentKind::Loa => 3,
        DocumentKind::RenewalNotice => 4,
    };
    let mut kinds = kinds.to_vec();
    kinds.sort_by_key(rank);
    kinds.iter().map(|k| k.title().to_owned()).collect()
}

/// The file name of a stored document attached to an e-mail, e.g.
/// `renewal-notice-2027-11-30.pdf`: what the message calls it and what the sandbox outbox shows.
pub fn attachment_file_name(kind: DocumentKind, version: &str) -> String {
    format!("{}-{version}.pdf", kind.as_str().replace('_', "-"))
}

/// The retail electric provider of record that every plan document and bill names: its legal
/// name and its certificate number with the regulator. A deployment sets its own
/// (`provider.name`, `provider.certificate`); the defaults are a sandbox's.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Provider {
    pub name: String,
    pub certificate: String,
}

impl Default for Provider {
    fn default() -> Self {
        Provider {
            name: "Switchboard Energy LLC".to_owned(),
            certificate: "PUCT Certificate No. 10000".to_owned(),
        }
    }
}

/// The Commission's customer contacts: where a customer whose complaint the provider did not
/// resolve may turn. Every bill prints them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommissionContacts {
    pub name: &'static str,
    pub mail: &'static str,
    pub phone: &'static str,
    pub toll_free: &'static str,
    pub email: &'static str,
    pub website: &'static str,
}

pub const COMMISSION: CommissionContacts = CommissionContacts {
    name: "Public Utility Commission of Texas, Customer Protection Division",
    mail: "P.O. Box 13326, Austin, TX 78711-3326",
    phone: "(512) 936-7120",
    toll_free: "(888) 782-8477",
    email: "customer@puc.texas.gov",
    website: "www.puc.texas.gov",
};

impl CommissionContacts {
    /// The sentence a bill prints after the provider's own contacts.
    pub fn complaint_sentence(&self) -> String {
        format!(
            "A complaint we do not resolve may go to the {}, {}; {}, toll-free {}; {}; {}.",
            self.name, self.mail, self.phone, self.toll_free, self.email, self.website
        )
    }
}

/// One section of a boilerplate document (TOS, YRAC).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub heading: &'static str,
    pub text: String,
}

/// Your Rights as a Customer: the regulator's customer protections, the same for every plan
/// (its version is `market::YRAC_VERSION`).
pub fn yrac_sections() -> Vec<Section> {
    [
        (
            "Switching",
            "Nobody may switch your electricity provider without your authorization. If you \
             were switched without it, you may return to your former provider at no cost.",
        ),
        (
            "Disputes",
            "You may dispute a bill with us first; if we cannot resolve it, you may file a \
             complaint with the regulator. You need not pay the disputed part while it is \
             investigated.",
        ),
        (
            "Privacy",
            "Your information is not released to anyone without your consent, except as the \
             law requires.",
        ),
        (
            "Deposits",
            "A deposit may be asked only on the grounds the rules allow, and is returned with \
             interest when service ends or after a year of timely payments.",
        ),
        (
            "Disconnection",
            "Service is not disconnected without at least 10 days' written notice, and never \
             during extreme weather or when a critical care customer is at the address.",
        ),
    ]
    .into_iter()
    .map(|(heading, text)| Section {
        heading,
        text: text.to_owned(),
    })
    .collect()
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
    /// A client agent enrollment's contract carries its Letter of Authorization.
    pub has_loa: bool,
    /// The expiration notices sent for the contract.
    pub notices: Vec<NoticeTerms>,
}

/// An expiration notice sent for a contract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoticeTerms {
    pub uuid: Uuid,
    pub sent_on: NaiveDate,
    pub contract_end: NaiveDate,
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
            let loa = c
                .has_loa
                .then(|| (DocumentKind::Loa, c.start_date.to_string()));
            let plan_documents = [
                Some((DocumentKind::Efl, c.plan_uuid.to_string())),
                Some((DocumentKind::Tos, c.tos_version.clone())),
                Some((DocumentKind::Yrac, c.yrac_version.clone())),
                loa,
            ]
            .into_iter()
            .flatten()
            .map(move |(kind, version)| LocationDocument {
                uuid: document_uuid(c.uuid, kind),
                kind,
                version,
                contract_uuid: c.uuid,
                plan_uuid: c.plan_uuid,
                effective_date: c.start_date,
                status,
            });
            let notices = c.notices.iter().map(move |n| LocationDocument {
                uuid: n.uuid,
                kind: DocumentKind::RenewalNotice,
                version: n.contract_end.to_string(),
                contract_uuid: c.uuid,
                plan_uuid: c.plan_uuid,
                effective_date: n.sent_on,
                status,
            });
            plan_documents.chain(notices)
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
            has_loa: false,
            notices: Vec::new(),
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
    fn a_client_agent_contract_has_its_loa_and_notices_follow_their_contract() {
        let mut ended = contract("ended", "2025-03-10", "2.0");
        ended.notices = vec![NoticeTerms {
            uuid: Uuid::new_v4(),
            sent_on: date("2026-02-08"),
            contract_end: date("2026-03-09"),
        }];
        let mut active = contract("active", "2026-03-10", "3.0");
        active.has_loa = true;
        let docs = location_documents(&[ended.clone(), active.clone()]);
        let active_kinds: Vec<_> = docs
            .iter()
            .filter(|d| d.status == DocumentStatus::Active)
            .map(|d| d.kind)
            .collect();
        assert_eq!(
            active_kinds,
            [
                DocumentKind::Efl,
                DocumentKind::Tos,
                DocumentKind::Yrac,
                DocumentKind::Loa
            ]
        );
        let notice = docs
            .iter()
            .find(|d| d.kind == DocumentKind::RenewalNotice)
            .unwrap();
        assert_eq!(notice.uuid, ended.notices[0].uuid);
        assert_eq!(notice.status, DocumentStatus::Superseded);
        assert_eq!(notice.effective_date, date("2026-02-08"));
        assert_eq!(notice.version, "2026-03-09");
    }

    #[test]
    fn a_cancelled_location_keeps_its_last_contract_in_force() {
        let cancelled = contract("cancelled", "2026-01-05", "3.0");
        let docs = location_documents(std::slice::from_ref(&cancelled));
        assert!(docs.iter().all(|d| d.status == DocumentStatus::Active));
        assert!(location_documents(&[]).is_empty());
    }
}

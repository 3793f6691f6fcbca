//! What the browser flows read of v1 answers: the fields they show or decide on, nothing else
//! (the rest is never read). Same names and shapes as `api`, fewer fields: every field parsed in
//! the browser is code a partner's page downloads. The browser reads each by hand
//! (`json::Read`, at the end); the serde derives serve the server's tests. Dates stay the API's `YYYY-MM-DD` text
//! (which sorts as the dates do): the flows only compare and show them.

use crate::{
    api::{
        enrollment::BillingAddressOut,
        market::{Address, AveragePrices, PlanDocuments, PlanRatesOut, Utility},
        Enrollment, PostalAddress,
    },
    json::{Read, Value},
};
use serde::Deserialize;

/// Of `api::Account`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Account {
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    pub phone: Option<String>,
    pub date_of_birth: Option<String>,
    pub preliminary_address: Option<PostalAddress>,
    /// The account's status and its reason, as the API names them.
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub status_reason: String,
    pub enrollment: Enrollment,
    pub locations: Vec<Location>,
    pub app: AccountApp,
    /// The enrollment's last screen offers to pay a deposit still due.
    #[cfg(any(feature = "ssr", feature = "enrollment"))]
    #[serde(default)]
    pub deposit: Option<Deposit>,
}

/// Of `api::Deposit`.
#[cfg(any(feature = "ssr", feature = "enrollment"))]
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Deposit {
    pub amount_cents: i64,
    pub status: String,
}

/// Of `api::AccountApp`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct AccountApp {
    pub payment_public_key: String,
}

/// Of `api::Location`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Location {
    /// Passed back in paths as it came (only the flows that call location paths read it).
    #[cfg(any(feature = "ssr", feature = "documents", feature = "renewal"))]
    pub uuid: String,
    pub esi_id: String,
    pub address_1: String,
    pub address_2: Option<String>,
    pub city: String,
    pub state: String,
    pub postal_code: String,
    pub service_start_date: Option<String>,
    pub plan_name: Option<String>,
    pub contract_start: Option<String>,
    #[cfg(any(feature = "ssr", feature = "renewal"))]
    pub contract_end: Option<String>,
}

/// Of `api::market::Plan`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Plan {
    /// Passed back as it came: the browser never needs it as a UUID.
    pub plan_uuid: String,
    pub name: String,
    pub plan_type: String,
    pub term_months: u32,
    pub earliest_start_date: String,
    pub latest_start_date: String,
    pub earliest_switch_start_date: String,
    pub rates: PlanRatesOut,
    pub average_price_cents_per_kwh: AveragePrices,
    pub renewable_percent: u8,
    pub documents: PlanDocuments,
    /// What the plan would cost over a year: the home's own last year for a renewal, a
    /// typical home's for enrollment.
    #[cfg(any(feature = "ssr", feature = "enrollment", feature = "renewal"))]
    #[serde(default)]
    pub estimated_annual_cost_cents: Option<i64>,
    #[cfg(any(feature = "ssr", feature = "enrollment", feature = "renewal"))]
    #[serde(default)]
    pub estimate_basis: Option<EstimateBasis>,
}

/// Of `api::market::EstimateBasis`: what an estimate rests on, in the server's words.
#[cfg(any(feature = "ssr", feature = "enrollment", feature = "renewal"))]
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct EstimateBasis {
    pub description: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Plans {
    pub plans: Vec<Plan>,
}

/// Of `api::enrollment::EnrollmentSummary`: what the enrollment's review shows.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Summary {
    pub plan: Option<Plan>,
    pub payment_method: Option<PaymentMethod>,
    pub billing_address: Option<BillingAddressOut>,
}

/// Of `api::PaymentSession`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PaymentSession {
    pub client_secret: String,
    pub publishable_key: String,
}

/// Of `api::PaymentMethod`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PaymentMethod {
    pub card_brand: String,
    pub card_last4: String,
}

/// Of `api::PaymentMethod`, as the payment method flow shows the card on file.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CardOnFile {
    pub card_brand: String,
    pub card_last4: String,
    pub card_exp_month: u32,
    pub card_exp_year: i32,
}

/// Of `api::billing::Invoice`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Invoice {
    pub number: String,
    pub invoice_date: String,
    pub payment_due_date: String,
    pub billing_period_start: String,
    pub billing_period_end: String,
    pub total_cents: i64,
    pub total_kwh: String,
    /// `open`, `paid`, `past_due` or `voided`.
    pub status: String,
    pub pdf: String,
}

/// A page of invoices (`api::List<Invoice>`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Invoices {
    pub data: Vec<Invoice>,
    pub has_more: bool,
}

/// Of `api::billing::InvoiceDetail`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct InvoiceDetail {
    #[serde(flatten)]
    pub invoice: Invoice,
    pub charges_groups: Vec<ChargesGroup>,
    pub usage: InvoiceUsage,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ChargesGroup {
    pub name: String,
    pub total_cents: i64,
    pub charges: Vec<Charge>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Charge {
    pub description: String,
    pub amount_cents: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct InvoiceUsage {
    pub daily: Vec<UsageDay>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct UsageDay {
    pub date: String,
    pub consumption: String,
}

/// `GET /v1/account/billing/payment-plan`: the plan offered now (null when none) and the
/// account's plans, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PaymentPlans {
    pub offer: Option<PlanOffer>,
    pub plans: Vec<PaymentPlan>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PlanOffer {
    pub unpaid_cents: i64,
    pub months: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PaymentPlan {
    /// `active`, `completed` or `defaulted`.
    pub status: String,
    pub total_cents: i64,
    pub instalments: Vec<PlanInstalment>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PlanInstalment {
    pub amount_cents: i64,
    /// The bill carrying it; null until billed.
    pub invoice_uuid: Option<String>,
}

/// Of `api::billing::Payment`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Payment {
    pub amount_cents: i64,
    pub status: String,
}

/// Of `api::enrollment::LocationDocuments`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ActiveDocuments {
    pub efl: String,
    pub tos: String,
    pub yrac: String,
    #[serde(default)]
    pub loa: Option<String>,
    pub contract_start: String,
    pub contract_end: Option<String>,
}

/// Of `api::enrollment::Document`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Document {
    pub kind: String,
    pub version: String,
    pub url: String,
    pub effective_date: String,
    pub status: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Documents {
    pub data: Vec<Document>,
}

/// Of `api::enrollment::Contract`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Contract {
    pub plan_name: String,
    pub start_date: String,
    pub end_date: Option<String>,
}

// How the browser reads each of these out of an answer (`json::Read`): the fields above, by
// name, as serde reads them (the tests below check each against its serde shape).

impl Read for Account {
    fn read(v: &Value) -> Option<Self> {
        Some(Account {
            email: v.str("email")?,
            first_name: v.str("first_name")?,
            last_name: v.str("last_name")?,
            phone: v.str("phone"),
            date_of_birth: v.str("date_of_birth"),
            preliminary_address: v.read("preliminary_address"),
            status: v.str("status").unwrap_or_default(),
            status_reason: v.str("status_reason").unwrap_or_default(),
            enrollment: v.read("enrollment")?,
            locations: v.list("locations")?,
            app: AccountApp {
                payment_public_key: v.get("app")?.str("payment_public_key")?,
            },
            #[cfg(any(feature = "ssr", feature = "enrollment"))]
            deposit: match v.get("deposit") {
                Some(d) => Some(Deposit {
                    amount_cents: d.int("amount_cents")?,
                    status: d.str("status")?,
                }),
                None => None,
            },
        })
    }
}

impl Read for Enrollment {
    fn read(v: &Value) -> Option<Self> {
        Some(Enrollment {
            can_finalize_enrollment: v.bool("can_finalize_enrollment")?,
            missing: v.list("missing")?,
            has_confirmed_address: v.bool("has_confirmed_address")?,
            has_accepted_plan: v.bool("has_accepted_plan")?,
            is_identity_complete: v.bool("is_identity_complete")?,
            is_identity_verified: v.bool("is_identity_verified")?,
            has_credit_check: v.bool("has_credit_check")?,
            has_payment_method: v.bool("has_payment_method")?,
            is_billing_address_confirmed: v.bool("is_billing_address_confirmed")?,
            is_enrollment_finalized: v.bool("is_enrollment_finalized")?,
            is_service_active: v.bool("is_service_active")?,
        })
    }
}

impl Read for PostalAddress {
    fn read(v: &Value) -> Option<Self> {
        Some(PostalAddress {
            address_1: v.str("address_1")?,
            address_2: v.str("address_2"),
            city: v.str("city")?,
            state: v.str("state")?,
            postal_code: v.str("postal_code")?,
        })
    }
}

impl Read for Location {
    fn read(v: &Value) -> Option<Self> {
        Some(Location {
            #[cfg(any(feature = "ssr", feature = "documents", feature = "renewal"))]
            uuid: v.str("uuid")?,
            esi_id: v.str("esi_id")?,
            address_1: v.str("address_1")?,
            address_2: v.str("address_2"),
            city: v.str("city")?,
            state: v.str("state")?,
            postal_code: v.str("postal_code")?,
            service_start_date: v.str("service_start_date"),
            plan_name: v.str("plan_name"),
            contract_start: v.str("contract_start"),
            #[cfg(any(feature = "ssr", feature = "renewal"))]
            contract_end: v.str("contract_end"),
        })
    }
}

impl Read for Address {
    fn read(v: &Value) -> Option<Self> {
        let utility = v.get("utility")?;
        Some(Address {
            address_1: v.str("address_1")?,
            address_2: v.str("address_2"),
            city: v.str("city")?,
            state: v.str("state")?,
            postal_code: v.str("postal_code")?,
            esi_id: v.str("esi_id")?,
            utility: Utility {
                name: utility.str("name")?,
                display_name: utility.str("display_name")?,
            },
        })
    }
}

impl Read for Plan {
    fn read(v: &Value) -> Option<Self> {
        let rates = v.get("rates")?;
        let average = v.get("average_price_cents_per_kwh")?;
        let documents = v.get("documents")?;
        Some(Plan {
            plan_uuid: v.str("plan_uuid")?,
            name: v.str("name")?,
            plan_type: v.str("plan_type")?,
            term_months: v.u32("term_months")?,
            earliest_start_date: v.str("earliest_start_date")?,
            latest_start_date: v.str("latest_start_date")?,
            earliest_switch_start_date: v.str("earliest_switch_start_date")?,
            rates: PlanRatesOut {
                energy_cents_per_kwh: rates.str("energy_cents_per_kwh")?,
                base_charge_cents_per_month: rates.int("base_charge_cents_per_month")?,
                tdu_fixed_cents_per_month: rates.int("tdu_fixed_cents_per_month")?,
                tdu_cents_per_kwh: rates.str("tdu_cents_per_kwh")?,
                solar_buyback_cents_per_kwh: rates.str("solar_buyback_cents_per_kwh")?,
                early_termination_fee_cents: rates.int("early_termination_fee_cents")?,
            },
            average_price_cents_per_kwh: AveragePrices {
                kwh_500: average.str("kwh_500")?,
                kwh_1000: average.str("kwh_1000")?,
                kwh_2000: average.str("kwh_2000")?,
            },
            renewable_percent: u8::try_from(v.int("renewable_percent")?).ok()?,
            documents: PlanDocuments {
                efl: documents.str("efl")?,
                tos: documents.str("tos")?,
                yrac: documents.str("yrac")?,
            },
            #[cfg(any(feature = "ssr", feature = "enrollment", feature = "renewal"))]
            estimated_annual_cost_cents: v.int("estimated_annual_cost_cents"),
            #[cfg(any(feature = "ssr", feature = "enrollment", feature = "renewal"))]
            estimate_basis: match v.get("estimate_basis") {
                Some(b) => Some(EstimateBasis {
                    description: b.str("description")?,
                }),
                None => None,
            },
        })
    }
}

impl Read for Plans {
    fn read(v: &Value) -> Option<Self> {
        Some(Plans {
            plans: v.list("plans")?,
        })
    }
}

impl Read for Summary {
    fn read(v: &Value) -> Option<Self> {
        Some(Summary {
            plan: v.read("plan"),
            payment_method: v.read("payment_method"),
            billing_address: v.read("billing_address"),
        })
    }
}

impl Read for BillingAddressOut {
    fn read(v: &Value) -> Option<Self> {
        Some(BillingAddressOut {
            same_as_service_address: v.bool("same_as_service_address")?,
            address_1: v.str("address_1"),
            address_2: v.str("address_2"),
            city: v.str("city"),
            state: v.str("state"),
            postal_code: v.str("postal_code"),
        })
    }
}

impl Read for PaymentSession {
    fn read(v: &Value) -> Option<Self> {
        Some(PaymentSession {
            client_secret: v.str("client_secret")?,
            publishable_key: v.str("publishable_key")?,
        })
    }
}

impl Read for PaymentMethod {
    fn read(v: &Value) -> Option<Self> {
        Some(PaymentMethod {
            card_brand: v.str("card_brand")?,
            card_last4: v.str("card_last4")?,
        })
    }
}

impl Read for CardOnFile {
    fn read(v: &Value) -> Option<Self> {
        Some(CardOnFile {
            card_brand: v.str("card_brand")?,
            card_last4: v.str("card_last4")?,
            card_exp_month: v.u32("card_exp_month")?,
            card_exp_year: i32::try_from(v.int("card_exp_year")?).ok()?,
        })
    }
}

impl Read for Invoice {
    fn read(v: &Value) -> Option<Self> {
        Some(Invoice {
            number: v.str("number")?,
            invoice_date: v.str("invoice_date")?,
            payment_due_date: v.str("payment_due_date")?,
            billing_period_start: v.str("billing_period_start")?,
            billing_period_end: v.str("billing_period_end")?,
            total_cents: v.int("total_cents")?,
            total_kwh: v.str("total_kwh")?,
            status: v.str("status")?,
            pdf: v.str("pdf")?,
        })
    }
}

impl Read for Invoices {
    fn read(v: &Value) -> Option<Self> {
        Some(Invoices {
            data: v.list("data")?,
            has_more: v.bool("has_more")?,
        })
    }
}

impl Read for InvoiceDetail {
    fn read(v: &Value) -> Option<Self> {
        Some(InvoiceDetail {
            invoice: Invoice::read(v)?,
            charges_groups: v.list("charges_groups")?,
            usage: InvoiceUsage {
                daily: v.get("usage")?.list("daily")?,
            },
        })
    }
}

impl Read for ChargesGroup {
    fn read(v: &Value) -> Option<Self> {
        Some(ChargesGroup {
            name: v.str("name")?,
            total_cents: v.int("total_cents")?,
            charges: v.list("charges")?,
        })
    }
}

impl Read for Charge {
    fn read(v: &Value) -> Option<Self> {
        Some(Charge {
            description: v.str("description")?,
            amount_cents: v.int("amount_cents")?,
        })
    }
}

impl Read for UsageDay {
    fn read(v: &Value) -> Option<Self> {
        Some(UsageDay {
            date: v.str("date")?,
            consumption: v.str("consumption")?,
        })
    }
}

impl Read for PaymentPlans {
    fn read(v: &Value) -> Option<Self> {
        Some(PaymentPlans {
            offer: match v.get("offer") {
                Some(o) => Some(PlanOffer {
                    unpaid_cents: o.int("unpaid_cents")?,
                    months: o.u32("months")?,
                }),
                None => None,
            },
            plans: v.list("plans")?,
        })
    }
}

impl Read for PaymentPlan {
    fn read(v: &Value) -> Option<Self> {
        Some(PaymentPlan {
            status: v.str("status")?,
            total_cents: v.int("total_cents")?,
            instalments: v.list("instalments")?,
        })
    }
}

impl Read for PlanInstalment {
    fn read(v: &Value) -> Option<Self> {
        Some(PlanInstalment {
            amount_cents: v.int("amount_cents")?,
            invoice_uuid: v.str("invoice_uuid"),
        })
    }
}

impl Read for Payment {
    fn read(v: &Value) -> Option<Self> {
        Some(Payment {
            amount_cents: v.int("amount_cents")?,
            status: v.str("status")?,
        })
    }
}

impl Read for ActiveDocuments {
    fn read(v: &Value) -> Option<Self> {
        Some(ActiveDocuments {
            efl: v.str("efl")?,
            tos: v.str("tos")?,
            yrac: v.str("yrac")?,
            loa: v.str("loa"),
            contract_start: v.str("contract_start")?,
            contract_end: v.str("contract_end"),
        })
    }
}

impl Read for Documents {
    fn read(v: &Value) -> Option<Self> {
        Some(Documents {
            data: v.list("data")?,
        })
    }
}

impl Read for Document {
    fn read(v: &Value) -> Option<Self> {
        Some(Document {
            kind: v.str("kind")?,
            version: v.str("version")?,
            url: v.str("url")?,
            effective_date: v.str("effective_date")?,
            status: v.str("status")?,
        })
    }
}

impl Read for Contract {
    fn read(v: &Value) -> Option<Self> {
        Some(Contract {
            plan_name: v.str("plan_name")?,
            start_date: v.str("start_date")?,
            end_date: v.str("end_date"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::DeserializeOwned;
    use serde_json::json;

    /// `value` read by hand as serde reads it.
    fn same<T: Read + DeserializeOwned + PartialEq + std::fmt::Debug>(value: serde_json::Value) {
        let text = value.to_string();
        let by_serde: T = serde_json::from_value(value).expect("serde reads it");
        let by_hand: T = crate::json::from_str(&text).expect("read by hand");
        assert_eq!(by_hand, by_serde);
    }

    /// What neither reads.
    fn refused<T: Read + DeserializeOwned>(value: serde_json::Value) {
        let text = value.to_string();
        assert!(serde_json::from_value::<T>(value).is_err());
        assert!(crate::json::from_str::<T>(&text).is_err());
    }

    fn plan(estimate: bool) -> serde_json::Value {
        let mut p = json!({
            "plan_uuid": "p1", "plan_group_uuid": "g", "name": "Saver 12", "plan_type": "fixed",
            "term_months": 12, "earliest_start_date": "2026-01-05",
            "latest_start_date": "2026-03-01", "earliest_switch_start_date": "2026-01-08",
            "expires_at": "2026-01-01T00:00:00Z",
            "rates": {
                "energy_cents_per_kwh": "12.3", "base_charge_cents_per_month": 995,
                "tdu_fixed_cents_per_month": 0, "tdu_cents_per_kwh": "5.1",
                "solar_buyback_cents_per_kwh": "0", "early_termination_fee_cents": 15000
            },
            "average_price_cents_per_kwh": {"kwh_500": "18.0", "kwh_1000": "16.1", "kwh_2000": "15.2"},
            "renewable_percent": 24,
            "documents": {"efl": "/d/efl", "tos": "/d/tos", "yrac": "/d/yrac"},
            "estimated_annual_cost_cents": null, "estimate_basis": null
        });
        if estimate {
            p["estimated_annual_cost_cents"] = json!(181_234);
            p["estimate_basis"] =
                json!({"kind": "home_profile", "description": "estimated for a typical home"});
        }
        p
    }

    fn account() -> serde_json::Value {
        json!({
            "uuid": "u", "email": "ana@example.com", "first_name": "Ana", "last_name": "Díaz \"A\"",
            "phone": "+15125550100", "date_of_birth": null,
            "preliminary_address": {"address_1": "1 Main", "address_2": null, "city": "Austin", "state": "TX", "postal_code": "78701"},
            "status": "not_enrolled", "status_reason": "unresolved",
            "enrollment": {
                "can_finalize_enrollment": false, "missing": ["plan", "identity"], "has_confirmed_address": true,
                "has_accepted_plan": false, "is_identity_complete": false, "is_identity_verified": false,
                "has_credit_check": false, "has_payment_method": false, "is_billing_address_confirmed": false,
                "is_enrollment_finalized": false, "is_service_active": false
            },
            "locations": [{
                "uuid": "l1", "esi_id": "1044", "address_1": "1 Main", "address_2": "Apt 2", "city": "Austin",
                "state": "TX", "postal_code": "78701", "utility": "ONCOR", "service_start_date": "2026-01-08",
                "plan_name": null, "contract_start": null, "contract_end": null
            }],
            "app": {"uuid": "a", "name": "A", "payment_public_key": "pk_test_x"},
            "deposit": {"amount_cents": 10000, "status": "due"}
        })
    }

    #[test]
    fn readers_read_as_serde_does() {
        same::<Account>(account());
        let mut without = account();
        let a = without.as_object_mut().expect("object");
        for field in [
            "status",
            "status_reason",
            "deposit",
            "phone",
            "preliminary_address",
        ] {
            a.remove(field);
        }
        same::<Account>(without);
        same::<Plans>(json!({"plans": [plan(true), plan(false)]}));
        same::<Plans>(json!({"plans": []}));
        same::<Summary>(
            json!({"plan": plan(true), "payment_method": {"card_brand": "visa", "card_last4": "4242"},
            "billing_address": {"same_as_service_address": true, "address_1": null, "address_2": null,
                "city": null, "state": null, "postal_code": null}}),
        );
        same::<Summary>(json!({"plan": null, "payment_method": null, "billing_address": null}));
        same::<Vec<Address>>(
            json!([{"address_1": "1 Main", "address_2": null, "city": "Austin",
            "state": "TX", "postal_code": "78701", "esi_id": "1044",
            "utility": {"name": "ONCOR", "display_name": "Oncor Electric Delivery"}}]),
        );
        same::<PaymentSession>(json!({"client_secret": "seti_1", "publishable_key": "pk_test_x"}));
        same::<CardOnFile>(
            json!({"card_brand": "visa", "card_last4": "4242", "card_exp_month": 4, "card_exp_year": 2030}),
        );
        let invoice = json!({"number": "INV-1", "invoice_date": "2026-02-01", "payment_due_date": "2026-02-20",
            "billing_period_start": "2026-01-01", "billing_period_end": "2026-01-31", "total_cents": 12_345,
            "total_kwh": "1034.5", "status": "open", "pdf": "/i/1.pdf"});
        same::<Invoices>(json!({"data": [invoice.clone()], "has_more": false}));
        let mut detail = invoice;
        detail["charges_groups"] = json!([{"name": "Energy", "total_cents": 10_000,
            "charges": [{"description": "Energy charge", "amount_cents": 10_000}]}]);
        detail["usage"] = json!({"daily": [{"date": "2026-01-01", "consumption": "33.1"}]});
        same::<InvoiceDetail>(detail);
        same::<PaymentPlans>(json!({"offer": {"unpaid_cents": 30_000, "months": 3},
            "plans": [{"status": "active", "total_cents": 30_000,
                "instalments": [{"amount_cents": 10_000, "invoice_uuid": null}, {"amount_cents": 10_000, "invoice_uuid": "i"}]}]}));
        same::<PaymentPlans>(json!({"offer": null, "plans": []}));
        same::<Payment>(json!({"amount_cents": 500, "status": "succeeded"}));
        same::<ActiveDocuments>(
            json!({"efl": "e", "tos": "t", "yrac": "y", "contract_start": "2026-01-01", "contract_end": null}),
        );
        same::<Documents>(
            json!({"data": [{"kind": "efl", "version": "1", "url": "/d", "effective_date": "2026-01-01", "status": "active"}]}),
        );
        same::<Contract>(
            json!({"plan_name": "Saver 12", "start_date": "2026-01-01", "end_date": "2027-01-01"}),
        );
    }

    #[test]
    fn readers_refuse_what_serde_refuses() {
        let mut no_email = account();
        no_email.as_object_mut().expect("object").remove("email");
        refused::<Account>(no_email);
        let mut bad_deposit = account();
        bad_deposit["deposit"] = json!({"amount_cents": "100", "status": "due"});
        refused::<Account>(bad_deposit);
        let mut fraction = plan(false);
        fraction["term_months"] = json!(12.5);
        refused::<Plan>(fraction);
        let mut negative = plan(false);
        negative["term_months"] = json!(-1);
        refused::<Plan>(negative);
        let mut over = plan(false);
        over["renewable_percent"] = json!(300);
        refused::<Plan>(over);
        refused::<Plans>(json!({"plans": [plan(true), 1]}));
        refused::<Plans>(json!([]));
    }
}

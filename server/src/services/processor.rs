//! The built-in test-mode card processor: a sandbox app's card component turns card data into a
//! stored `pm_...` payment method against a payment session. Only brand, last four, expiry,
//! postal code and a fingerprint are kept.

use app::api::ProcessorPaymentMethodIn;

use super::Error;
use crate::{
    domain::{
        account::parse_postal_code,
        cards::{self, CardError, CardNumber, TestCardBehavior},
        tokens, FieldError,
    },
    state::Core,
    store::{self, payments::CardRow},
};

/// Why a payment method was not created. Nothing is written, and the session stays usable.
#[derive(Debug)]
pub enum PaymentMethodRefused {
    /// No sandbox app has this publishable key (live apps' cards never come here).
    KeyInvalid,
    Card(CardError),
    Field(FieldError),
    /// The client secret names no session of this app.
    SecretInvalid,
    SessionExpired,
    SessionUsed,
    /// A test card that declines, with its decline code.
    Declined(&'static str),
}

/// The card as created: its row (id, brand, last four, ...) and the expiry month as sent.
pub struct CreatedPaymentMethod {
    pub card: CardRow,
    pub exp_month: u32,
}

/// Checks the key, the card and the session, then stores the card and spends the session in one
/// transaction. The checks run in this order so that the first error a client sees is the same
/// as before: key, card number, expiry, CVC, postal code, session.
pub async fn create_payment_method(
    core: &Core,
    publishable_key: &str,
    input: &ProcessorPaymentMethodIn,
) -> Result<CreatedPaymentMethod, Error<PaymentMethodRefused>> {
    use PaymentMethodRefused as R;
    let refuse = |why| Error::Refused(why);
    let app = store::apps::app_by_publishable_key(&core.db, publishable_key)
        .await?
        .filter(|a| a.environment == app::api::Environment::Sandbox.as_str())
        .ok_or(refuse(R::KeyInvalid))?;
    let now = core.clock.now();

    let number = CardNumber::parse(&input.card.number).map_err(|e| refuse(R::Card(e)))?;
    let brand = number.brand();
    let (exp_month, exp_year) = cards::parse_expiry(
        input.card.exp_month,
        input.card.exp_year,
        core.clock.today(),
    )
    .map_err(|e| refuse(R::Card(e)))?;
    cards::parse_cvc(input.card.cvc.trim(), brand).map_err(|e| refuse(R::Card(e)))?;
    let postal_code = input
        .billing_details
        .postal_code
        .as_deref()
        .filter(|p| !p.trim().is_empty())
        .map(|p| parse_postal_code("billing_details.postal_code", p))
        .transpose()
        .map_err(|e| refuse(R::Field(e)))?;

    let mut tx = core.db.begin().await?;
    let session = store::payments::session_by_secret_hash(
        &mut tx,
        &tokens::hash_token(input.client_secret.trim()),
    )
    .await?
    .filter(|s| s.app_uuid == app.uuid)
    .ok_or(refuse(R::SecretInvalid))?;
    if session.expires_at <= now {
        return Err(refuse(R::SessionExpired));
    }
    if session.used_at.is_some() {
        return Err(refuse(R::SessionUsed));
    }
    let behavior = number.test_behavior();
    if let TestCardBehavior::Declined(decline_code) = behavior {
        // A declined card leaves the session usable, so the customer can try another card.
        return Err(refuse(R::Declined(decline_code)));
    }
    let card = CardRow {
        id: tokens::payment_method_id(),
        brand: brand.as_str().to_owned(),
        last4: number.last4().to_owned(),
        exp_month: i32::try_from(exp_month).unwrap_or_default(),
        exp_year,
        postal_code,
        fingerprint: number.fingerprint(&app.uuid.to_string()),
    };
    store::payments::insert_processor_payment_method(
        &mut tx,
        app.uuid,
        session.account_uuid,
        &card,
        behavior == TestCardBehavior::ChargesFail,
        now,
    )
    .await?;
    // Two requests racing for one session: the loser's insert rolls back with this refusal.
    if !store::payments::use_session(&mut tx, session.uuid, now).await? {
        return Err(refuse(R::SessionUsed));
    }
    tx.commit().await?;
    Ok(CreatedPaymentMethod { card, exp_month })
}

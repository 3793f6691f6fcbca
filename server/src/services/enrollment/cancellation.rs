//! Cancelling: a location's service ends, before or after its start (`cancel_location`, which the
//! pipeline's end of service and market events use too), and the customer's own request
//! (`cancel_service`).

use uuid::Uuid;

use crate::{
    domain::{
        enrollment::{check_cancellation, start_of_market_day, ContractStatus, LocationStatus},
        events::Event,
        status::Cancellation,
        FieldError,
    },
    outbox::{self, Job},
    services::{
        follow_up,
        Error::{self, Refused},
    },
    state::Core,
    store::{
        self,
        enrollment::{EnrollmentRow, LocationRow},
        events::NewEvent,
        Tx,
    },
};

/// Ends a location's service (or cancels it before it started) in `tx`: the enrollment's
/// cancellation (`post_start` when service had started, else `pre_start`), the location
/// cancelled with its final service date, its contracts ended or cancelled, and the event
/// `location.service_canceled`. The caller writes the enrollment and refreshes the status.
pub async fn cancel_location(
    tx: &mut Tx,
    app: Uuid,
    e: &mut EnrollmentRow,
    location: &mut LocationRow,
    final_service_date: chrono::NaiveDate,
    reason: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> store::Result<()> {
    let account = location.account_uuid;
    let started = location.is_service_active;
    e.cancellation = Some(if started {
        Cancellation::PostStart
    } else {
        Cancellation::PreStart
    });
    e.updated_at = now;
    location.is_service_active = false;
    location.status = LocationStatus::Cancelled;
    location.final_service_date = Some(final_service_date);
    location.updated_at = now;
    store::enrollment::update_location(tx, location).await?;
    store::enrollment::set_status_of_account_contracts(
        tx,
        account,
        ContractStatus::Active,
        ContractStatus::Ended,
    )
    .await?;
    super::cancel_pending_contracts(tx, account).await?;
    store::events::insert_event(
        tx,
        &NewEvent::of(
            app,
            &Event::ServiceCanceled {
                account_uuid: account,
                location_uuid: location.uuid,
                final_service_date: location.final_service_date,
                reason: reason.to_owned(),
            },
            now,
        ),
    )
    .await?;
    Ok(())
}

/// Why service could not be cancelled; nothing was written.
#[derive(Debug)]
pub enum CancelServiceRefused {
    /// The final service date or the reason (checked on the account's day).
    Invalid(FieldError),
    AccountNotFound,
    LocationNotFound,
    NotFinalized,
    /// Already cancelled, or its cancellation already scheduled.
    NotActive,
}

/// Cancels service at a location, in one transaction. Before service started it cancels at
/// once (`cancel_location`, final service date today); after, it sets the final service date
/// and schedules `service.end` for that day on the account's clock. Returns the location.
pub async fn cancel_service(
    state: &Core,
    app: Uuid,
    account: Uuid,
    location_uuid: Uuid,
    final_service_date: &str,
    reason: &str,
) -> Result<LocationRow, Error<CancelServiceRefused>> {
    let clock = state.clock.for_account(&state.db, account).await?;
    let (final_date, reason) = check_cancellation(final_service_date, reason, clock.today())
        .map_err(|e| Refused(CancelServiceRefused::Invalid(e)))?;
    let now = clock.now();
    let mut tx = state.db.begin().await?;
    store::accounts::account_of_app_for_update(&mut tx, app, account)
        .await?
        .ok_or(Refused(CancelServiceRefused::AccountNotFound))?;
    let mut location = store::enrollment::locations_of_account(&mut tx, account)
        .await?
        .into_iter()
        .find(|l| l.uuid == location_uuid)
        .ok_or(Refused(CancelServiceRefused::LocationNotFound))?;
    let Some(mut e) = store::enrollment::enrollment(&mut tx, account).await? else {
        return Err(Refused(CancelServiceRefused::NotFinalized));
    };
    if e.cancellation.is_some()
        || location.status == LocationStatus::Cancelled
        || location.final_service_date.is_some()
    {
        return Err(Refused(CancelServiceRefused::NotActive));
    }
    if location.is_service_active {
        location.final_service_date = Some(final_date);
        location.updated_at = now;
        store::enrollment::update_location(&mut tx, &location).await?;
        outbox::enqueue(
            &mut tx,
            &clock,
            &Job::ServiceEnd {
                app_uuid: app,
                location_uuid: location.uuid,
                reason: reason.as_str().to_owned(),
            },
            Some(account),
            start_of_market_day(final_date).max(now),
        )
        .await?;
    } else {
        cancel_location(
            &mut tx,
            app,
            &mut e,
            &mut location,
            clock.today(),
            reason.as_str(),
            now,
        )
        .await?;
        store::enrollment::update_enrollment(&mut tx, &e).await?;
        follow_up::refresh_status(&mut tx, clock.service(), app, account, now).await?;
    }
    tx.commit().await?;
    Ok(location)
}

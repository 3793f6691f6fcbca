//! Accounts as the partner's backend manages them: created with their first status, their
//! profile changed, the client agent authorization recorded, AccountTokens issued.

use app::api::{CreateAccountIn, Environment, UpdateAccountIn};
use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

use super::Error;
use crate::{
    domain::{
        account::{account_number, parse_client_agent_accepted_at, ParseContext, Profile},
        enrollment::{client_agent_may_be_recorded, ContractStatus, INITIAL_STATUS},
        events::Event,
        tokens, FieldError,
    },
    state::Core,
    store::{self, accounts::AccountRow, events::NewEvent},
};

/// How long an AccountToken lives.
const ACCOUNT_TOKEN_TTL: Duration = Duration::minutes(60);

/// Why an account was not created or changed. Nothing is written.
#[derive(Debug)]
pub enum AccountRefused {
    /// No such account in this app.
    AccountNotFound,
    Field(FieldError),
    /// record-client-agent after the customer accepted a plan: it must precede plans/accept.
    PlanAcceptedFirst,
}

impl From<FieldError> for Error<AccountRefused> {
    fn from(e: FieldError) -> Self {
        Error::Refused(AccountRefused::Field(e))
    }
}

fn failed(e: serde_json::Error) -> Error<AccountRefused> {
    Error::Failed(e.into())
}

fn parse_context(core: &Core, environment: Environment) -> ParseContext {
    ParseContext {
        today: core.clock.today(),
        environment,
    }
}

/// A new account of the app with the next account number, in its initial status (and that
/// status's first history row).
pub async fn create_account(
    core: &Core,
    app_uuid: Uuid,
    environment: Environment,
    input: CreateAccountIn,
) -> Result<AccountRow, Error<AccountRefused>> {
    let profile = Profile::parse_new(input, &parse_context(core, environment))?;
    let now = core.clock.now();
    let (status, reason) = INITIAL_STATUS;
    let mut tx = core.db.begin().await?;
    let sequence = store::counters::next_value(&mut tx, "account_number").await?;
    let row = AccountRow::new(
        Uuid::new_v4(),
        app_uuid,
        account_number(sequence),
        &profile,
        (status, reason),
        now,
    )
    .map_err(failed)?;
    store::accounts::insert_account(&mut tx, &row).await?;
    store::accounts::insert_status_history(&mut tx, row.uuid, status, reason, now).await?;
    store::events::insert_event(
        &mut tx,
        &NewEvent::of(
            app_uuid,
            &Event::AccountCreated {
                account_uuid: row.uuid,
                account_number: row.account_number.clone(),
            },
            now,
        ),
    )
    .await?;
    tx.commit().await?;
    Ok(row)
}

/// Applies a PATCH to the account's profile and refreshes its status (a completed identity can
/// move it on). Answers the stored row.
pub async fn update_account(
    core: &Core,
    app_uuid: Uuid,
    environment: Environment,
    account_uuid: Uuid,
    input: UpdateAccountIn,
) -> Result<AccountRow, Error<AccountRefused>> {
    let ctx = parse_context(core, environment);
    let mut tx = core.db.begin().await?;
    let Some(mut row) =
        store::accounts::account_of_app_for_update(&mut tx, app_uuid, account_uuid).await?
    else {
        return Err(Error::Refused(AccountRefused::AccountNotFound));
    };
    let before = row.profile().map_err(failed)?;
    let profile = before.clone().patched(input, &ctx)?;
    row.set_profile(&profile).map_err(failed)?;
    row.updated_at = core.clock.now();
    store::accounts::update_account(&mut tx, &row).await?;
    if before.identity_differs(&profile) {
        // The spec sets phone and date of birth this way: announced as the identity step is.
        store::events::insert_event(
            &mut tx,
            &NewEvent::of(
                app_uuid,
                &Event::IdentityUpdated {
                    account_uuid: row.uuid,
                    is_identity_complete: profile.is_identity_complete(),
                },
                row.updated_at,
            ),
        )
        .await?;
    }
    if super::follow_up::refresh_status(&mut tx, &core.clock, app_uuid, row.uuid, row.updated_at)
        .await?
        .is_some()
    {
        // The status changed: answer with the stored one.
        let Some(stored) =
            store::accounts::account_of_app_for_update(&mut tx, app_uuid, row.uuid).await?
        else {
            return Err(Error::Refused(AccountRefused::AccountNotFound));
        };
        row = stored;
    }
    tx.commit().await?;
    Ok(row)
}

/// Records when the customer gave the partner their limited power of attorney, and refreshes
/// the account's status. Answers the stored row.
pub async fn record_client_agent(
    core: &Core,
    app_uuid: Uuid,
    account_uuid: Uuid,
    client_agent_accepted_at: Option<&str>,
) -> Result<AccountRow, Error<AccountRefused>> {
    let now = core.clock.now();
    let accepted_at =
        parse_client_agent_accepted_at("client_agent_accepted_at", client_agent_accepted_at, now)?;
    let mut tx = core.db.begin().await?;
    if store::accounts::account_of_app_for_update(&mut tx, app_uuid, account_uuid)
        .await?
        .is_none()
    {
        return Err(Error::Refused(AccountRefused::AccountNotFound));
    }
    let contracts = store::enrollment::contracts_of_account(&mut tx, account_uuid).await?;
    let in_force = contracts
        .iter()
        .filter(|c| matches!(c.status, ContractStatus::Pending | ContractStatus::Active))
        .map(|c| c.accepted_by.as_str());
    if !client_agent_may_be_recorded(in_force) {
        return Err(Error::Refused(AccountRefused::PlanAcceptedFirst));
    }
    store::accounts::set_client_agent_accepted_at(&mut tx, account_uuid, accepted_at, now).await?;
    super::follow_up::refresh_status(&mut tx, &core.clock, app_uuid, account_uuid, now).await?;
    let Some(row) =
        store::accounts::account_of_app_for_update(&mut tx, app_uuid, account_uuid).await?
    else {
        return Err(Error::Refused(AccountRefused::AccountNotFound));
    };
    tx.commit().await?;
    Ok(row)
}

/// A new AccountToken for the account (`ACCOUNT_TOKEN_TTL`): the token, shown once, and when
/// it expires.
pub async fn issue_account_token(
    core: &Core,
    account_uuid: Uuid,
) -> Result<(String, DateTime<Utc>), Error<AccountRefused>> {
    let now = core.clock.now();
    let expires_at = now + ACCOUNT_TOKEN_TTL;
    let token = tokens::issue_account_token();
    let mut tx = core.db.begin().await?;
    store::accounts::insert_account_token(&mut tx, &token.hash, account_uuid, expires_at, now)
        .await?;
    tx.commit().await?;
    Ok((token.plain, expires_at))
}

//! Dashboard users: creating them (the CLI, the first start), signing in, changing a password.
//! Passwords are hashed with argon2id (`domain::users`) off the async threads; a new user's
//! password is generated here and handed back once, never stored or logged in the clear.

use uuid::Uuid;

use super::{
    audit::{self, Actor},
    Error,
};
use crate::{
    clock::Clock,
    domain::{
        account::parse_email,
        users::{organisation_name, verify_password, Password, Role},
        FieldError,
    },
    store::{self, users::UserRow, Db},
};

/// The operator created on the first start, until another is made with the CLI.
pub const FIRST_OPERATOR_EMAIL: &str = "operator@switchboard.localhost";

/// Why a user was not created or changed. Nothing is written.
#[derive(Debug, thiserror::Error)]
pub enum UserRefused {
    #[error("{}", .0.message)]
    Field(FieldError),
    #[error("a user with this e-mail exists already")]
    EmailTaken,
    #[error("a partner member needs an organisation (--organisation)")]
    OrganisationRequired,
    #[error("an operator belongs to no organisation")]
    OperatorHasNoOrganisation,
    #[error("the current password is not right")]
    WrongPassword,
}

impl From<FieldError> for Error<UserRefused> {
    fn from(e: FieldError) -> Self {
        Error::Refused(UserRefused::Field(e))
    }
}

/// A user just made, with the one-time password to hand over (shown once, then gone).
pub struct CreatedUser {
    pub uuid: Uuid,
    pub email: String,
    pub password: Password,
}

/// Creates a user with a generated password. A partner member's organisation is made when it
/// does not exist yet.
pub async fn create_user(
    db: &Db,
    clock: &Clock,
    actor: &Actor,
    email: &str,
    role: Role,
    organisation: Option<&str>,
) -> Result<CreatedUser, Error<UserRefused>> {
    let email = parse_email("email", email)?;
    let organisation = organisation.map(organisation_name).transpose()?;
    match (role, &organisation) {
        (Role::Partner, None) => return Err(Error::Refused(UserRefused::OrganisationRequired)),
        (Role::Operator, Some(_)) => {
            return Err(Error::Refused(UserRefused::OperatorHasNoOrganisation))
        }
        _ => {}
    }
    let password = Password::generate();
    let hash = hash_off_thread(&password).await?;
    let now = clock.now();
    let uuid = Uuid::new_v4();
    let mut tx = db.begin().await?;
    if store::users::user_by_email(&mut tx, &email)
        .await?
        .is_some()
    {
        return Err(Error::Refused(UserRefused::EmailTaken));
    }
    let organisation_uuid = match &organisation {
        None => None,
        Some(name) => Some(
            match store::users::organisation_by_name(&mut tx, name).await? {
                Some(o) => o.uuid,
                None => {
                    let o = Uuid::new_v4();
                    store::users::insert_organisation(&mut tx, o, name, now).await?;
                    o
                }
            },
        ),
    };
    store::users::insert_user(&mut tx, uuid, &email, &hash, role, organisation_uuid, now).await?;
    audit::record(
        &mut tx,
        actor,
        "user.created",
        &format!("user:{uuid}"),
        serde_json::json!({"email": email, "role": role, "organisation": organisation}),
        now,
    )
    .await?;
    tx.commit().await?;
    Ok(CreatedUser {
        uuid,
        email,
        password,
    })
}

/// On a database without users, the first operator (`FIRST_OPERATOR_EMAIL`) with a one-time
/// password; `None` when users exist.
pub async fn ensure_first_operator(
    db: &Db,
    clock: &Clock,
) -> Result<Option<CreatedUser>, Error<UserRefused>> {
    if store::users::count_users(db).await? > 0 {
        return Ok(None);
    }
    match create_user(
        db,
        clock,
        &Actor::System,
        FIRST_OPERATOR_EMAIL,
        Role::Operator,
        None,
    )
    .await
    {
        Ok(created) => Ok(Some(created)),
        // Another instance starting at the same time made it first.
        Err(Error::Refused(UserRefused::EmailTaken)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The user whose e-mail and password these are. Unknown e-mails take as long as wrong
/// passwords.
pub async fn sign_in(db: &Db, email: &str, password: &str) -> anyhow::Result<Option<UserRow>> {
    let email = email.trim().to_lowercase();
    let user = store::users::user_by_email(db, &email).await?;
    let hash = user.as_ref().map(|u| u.password_hash.clone());
    let typed = password.to_owned();
    let ok = tokio::task::spawn_blocking(move || verify_password(&typed, hash.as_deref())).await?;
    Ok(user.filter(|_| ok))
}

/// Replaces a user's password after checking the current one.
pub async fn change_password(
    db: &Db,
    clock: &Clock,
    user: &UserRow,
    current: &str,
    new: &str,
) -> Result<(), Error<UserRefused>> {
    let new = Password::new(new)?;
    let stored = user.password_hash.clone();
    let typed = current.to_owned();
    let ok = tokio::task::spawn_blocking(move || verify_password(&typed, Some(&stored)))
        .await
        .map_err(|e| Error::Failed(e.into()))?;
    if !ok {
        return Err(Error::Refused(UserRefused::WrongPassword));
    }
    let hash = hash_off_thread(&new).await?;
    let mut tx = db.begin().await?;
    store::users::update_password_hash(&mut tx, user.uuid, &hash).await?;
    audit::record(
        &mut tx,
        &Actor::User {
            uuid: user.uuid,
            email: user.email.clone(),
        },
        "user.password_changed",
        &format!("user:{}", user.uuid),
        serde_json::json!({}),
        clock.now(),
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

async fn hash_off_thread(password: &Password) -> Result<String, Error<UserRefused>> {
    let plain = password.clone();
    tokio::task::spawn_blocking(move || plain.hash())
        .await
        .map_err(|e| Error::Failed(e.into()))
}

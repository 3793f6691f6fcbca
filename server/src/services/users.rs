//! Dashboard users: creating them (the CLI, the first start), signing in, changing a password,
//! and resetting a forgotten one through a single-use link e-mailed to them. Passwords are
//! hashed with argon2id (`domain::users`) off the async threads; a new user's password is
//! generated here and handed back once, never stored or logged in the clear; a reset link's
//! token is stored only as its SHA-256.

use uuid::Uuid;

use super::{
    audit::{self, Actor},
    Error,
};
use crate::{
    clock::Clock,
    domain::{
        account::parse_email,
        tokens::{hash_token, is_password_reset_token, issue_password_reset_token},
        users::{
            organisation_name, verify_password, Password, Role, RESET_LINKS_PER_HOUR,
            RESET_LINK_LIFETIME,
        },
        FieldError,
    },
    mail::{self, templates::Action, Template},
    store::{
        self,
        users::{PasswordResetRow, UserRow},
        Db,
    },
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
    #[error("this link is not valid anymore: it was used, it expired, or it never was one")]
    LinkInvalid,
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

/// Asks for a password reset link for `email`. When it is a user's, and fewer than
/// `RESET_LINKS_PER_HOUR` links were made for them in the last hour, a new single-use link
/// (valid `RESET_LINK_LIFETIME`) is stored and e-mailed in one transaction; otherwise nothing
/// happens. Answers nothing either way, so that the page cannot tell who has an account.
pub async fn request_password_reset(
    db: &Db,
    clock: &Clock,
    email: &str,
    public_url: &str,
) -> anyhow::Result<()> {
    let email = email.trim().to_lowercase();
    let now = clock.now();
    let mut tx = db.begin().await?;
    let Some(user) = store::users::user_by_email(&mut tx, &email).await? else {
        return Ok(());
    };
    let recent =
        store::users::count_password_resets_since(&mut tx, user.uuid, now - RESET_LINK_LIFETIME)
            .await?;
    if recent >= RESET_LINKS_PER_HOUR {
        return Ok(());
    }
    let token = issue_password_reset_token();
    store::users::insert_password_reset(
        &mut tx,
        &PasswordResetRow {
            token_hash: token.hash,
            user_uuid: user.uuid,
            created_at: now,
            expires_at: now + RESET_LINK_LIFETIME,
            used_at: None,
        },
    )
    .await?;
    let url = format!(
        "{}/dashboard/reset/{}",
        public_url.trim_end_matches('/'),
        token.plain
    );
    let template = Template::Notice {
        subject: "Reset your Switchboard dashboard password".to_owned(),
        first_name: "there".to_owned(),
        paragraphs: vec![
            "Someone (we hope you) asked to reset the password you sign in to the Switchboard \
             dashboard with. The link below sets a new one; it works once, within an hour."
                .to_owned(),
            "If you did not ask for this, ignore this e-mail: your password stays as it is."
                .to_owned(),
        ],
        action: Some(Action {
            label: "Set a new password".to_owned(),
            url,
        }),
    };
    mail::queue_platform(&mut tx, clock, &user.email, &template).await?;
    tx.commit().await?;
    Ok(())
}

/// The user a reset link is for, while it can be used (not used, not expired).
pub async fn password_reset_user(
    db: &Db,
    clock: &Clock,
    token: &str,
) -> anyhow::Result<Option<UserRow>> {
    if !is_password_reset_token(token) {
        return Ok(None);
    }
    let Some(reset) = store::users::password_reset_by_hash(db, &hash_token(token)).await? else {
        return Ok(None);
    };
    if reset.used_at.is_some() || reset.expires_at <= clock.now() {
        return Ok(None);
    }
    Ok(store::users::user_by_uuid(db, reset.user_uuid).await?)
}

/// Sets a new password through a reset link, spending it (and every other link of the user),
/// and ends every session of the user: their session generation is raised, which
/// `http::dashboard` compares with the one a session was signed in under. Audited, without
/// the password or the link. Answers the user.
pub async fn reset_password(
    db: &Db,
    clock: &Clock,
    token: &str,
    new: &str,
) -> Result<UserRow, Error<UserRefused>> {
    let new = Password::new(new)?;
    if !is_password_reset_token(token) {
        return Err(Error::Refused(UserRefused::LinkInvalid));
    }
    // Hashed before the transaction: argon2 takes a while, and SQLite holds its write lock
    // for the whole transaction.
    let hash = hash_off_thread(&new).await?;
    let token_hash = hash_token(token);
    let now = clock.now();
    let mut tx = db.begin().await?;
    let Some(reset) = store::users::password_reset_by_hash(&mut tx, &token_hash).await? else {
        return Err(Error::Refused(UserRefused::LinkInvalid));
    };
    if !store::users::use_password_reset(&mut tx, &token_hash, now).await? {
        return Err(Error::Refused(UserRefused::LinkInvalid));
    }
    store::users::use_all_password_resets(&mut tx, reset.user_uuid, now).await?;
    store::users::reset_password_hash(&mut tx, reset.user_uuid, &hash).await?;
    let Some(user) = store::users::user_by_uuid(&mut tx, reset.user_uuid).await? else {
        return Err(Error::Refused(UserRefused::LinkInvalid));
    };
    audit::record(
        &mut tx,
        &Actor::User {
            uuid: user.uuid,
            email: user.email.clone(),
        },
        "user.password_reset",
        &format!("user:{}", user.uuid),
        serde_json::json!({"sessions_ended": true}),
        now,
    )
    .await?;
    tx.commit().await?;
    Ok(user)
}

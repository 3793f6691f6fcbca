//! E-mail: templates (text and HTML, branded per app), the outbox, and the job that hands an
//! e-mail to SMTP when `SMTP_URL` is set or keeps it in the database otherwise (the sandbox
//! e-mail log shows it either way).

pub mod templates;

use chrono::{DateTime, Utc};
use lettre::{
    message::{Mailbox, MultiPart},
    AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor,
};
use serde::Deserialize;
use uuid::Uuid;

use crate::{
    config::Config,
    domain::jobs::backoff,
    jobs::{JobContext, JobKind, Outcome},
    store::{self, emails::EmailRow, Tx},
};
pub use templates::{Brand, Rendered, Template};

/// Attempts at handing one e-mail to SMTP.
const MAX_ATTEMPTS: i32 = 8;

/// Where e-mails go: an SMTP server, or nowhere (kept in the outbox).
#[derive(Clone)]
pub struct Mailer {
    smtp: Option<AsyncSmtpTransport<Tokio1Executor>>,
    from: Mailbox,
}

impl Mailer {
    pub fn new(config: &Config) -> anyhow::Result<Mailer> {
        let smtp = match &config.smtp_url {
            Some(url) => {
                Some(AsyncSmtpTransport::<Tokio1Executor>::from_url(url.expose())?.build())
            }
            None => None,
        };
        let from = config
            .mail_from
            .parse()
            .map_err(|e| anyhow::anyhow!("mail_from is not a mailbox: {e}"))?;
        Ok(Mailer { smtp, from })
    }
}

pub struct NewEmail<'a> {
    pub app_uuid: Uuid,
    pub account_uuid: Option<Uuid>,
    pub to: &'a str,
    pub template: &'a Template,
    pub brand: &'a Brand,
    /// When it is written, on the account's clock.
    pub created_at: DateTime<Utc>,
}

/// Renders the e-mail into the outbox and schedules its sending, in the caller's transaction.
pub async fn enqueue(tx: &mut Tx, email: &NewEmail<'_>) -> store::Result<Uuid> {
    let rendered = email.template.render(email.brand);
    let uuid = Uuid::new_v4();
    store::emails::insert_email(
        tx,
        &EmailRow {
            uuid,
            app_uuid: email.app_uuid,
            account_uuid: email.account_uuid,
            template: email.template.name().to_owned(),
            to_address: email.to.to_owned(),
            subject: rendered.subject,
            text_body: rendered.text,
            html_body: rendered.html,
            status: "queued".to_owned(),
            error: None,
            created_at: email.created_at,
            sent_at: None,
        },
    )
    .await?;
    // Due at once (the system time is never ahead of the service clock).
    let now = Utc::now();
    store::jobs::insert_job(
        tx,
        &store::jobs::NewJob {
            kind: JobKind::SendEmail.as_str(),
            payload: &serde_json::json!({ "email_uuid": uuid }),
            account_uuid: email.account_uuid,
            run_at_ms: now.timestamp_millis(),
            max_attempts: MAX_ATTEMPTS,
            created_at: now,
        },
    )
    .await?;
    Ok(uuid)
}

#[derive(Deserialize)]
struct SendPayload {
    email_uuid: Uuid,
}

/// The job: one attempt at sending one e-mail of the outbox.
pub async fn send(ctx: &JobContext) -> anyhow::Result<()> {
    let state = &ctx.state;
    let payload: SendPayload = serde_json::from_str(&ctx.job.payload)?;
    let Some(email) = store::emails::email_by_uuid(&state.db, payload.email_uuid).await? else {
        return Ok(ctx
            .finish_alone(&Outcome::Failed("e-mail not found".into()))
            .await?);
    };
    if email.status != "queued" {
        return Ok(ctx.finish_alone(&Outcome::Done).await?);
    }
    let (status, error, outcome) = match &state.mailer.smtp {
        None => ("stored", None, Outcome::Done),
        Some(smtp) => match message(&state.mailer.from, &email) {
            Err(why) => ("failed", Some(why.clone()), Outcome::Failed(why)),
            Ok(msg) => match smtp.send(msg).await {
                Ok(_) => ("sent", None, Outcome::Done),
                Err(e) if e.is_permanent() => {
                    let why = format!("refused by the SMTP server: {e}");
                    ("failed", Some(why.clone()), Outcome::Failed(why))
                }
                Err(e) if ctx.job.attempts >= ctx.job.max_attempts => {
                    let why = format!("SMTP failed: {e}");
                    ("failed", Some(why.clone()), Outcome::Failed(why))
                }
                Err(e) => (
                    "queued",
                    Some(format!("SMTP failed: {e}")),
                    Outcome::RetryAt(ctx.now() + backoff(ctx.attempt()), "SMTP failed".into()),
                ),
            },
        },
    };
    let sent_at = (status == "sent" || status == "stored").then(|| ctx.now());
    let mut tx = state.db.begin().await?;
    store::emails::set_email_status(&mut tx, email.uuid, status, error.as_deref(), sent_at).await?;
    if ctx.finish(&mut tx, &outcome).await? {
        tx.commit().await?;
    }
    Ok(())
}

fn message(from: &Mailbox, email: &EmailRow) -> Result<Message, String> {
    let to: Mailbox = email
        .to_address
        .parse()
        .map_err(|_| "the recipient address is not valid".to_owned())?;
    Message::builder()
        .from(from.clone())
        .to(to)
        .subject(email.subject.clone())
        .multipart(MultiPart::alternative_plain_html(
            email.text_body.clone(),
            email.html_body.clone(),
        ))
        .map_err(|e| format!("the message could not be built: {e}"))
}

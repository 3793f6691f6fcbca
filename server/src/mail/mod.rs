//! E-mail: templates (text and HTML, branded per app), the outbox, and the job that hands an
//! e-mail to SMTP when `SMTP_URL` is set or keeps it in the database otherwise (the sandbox
//! e-mail log shows it either way).

pub mod templates;

use chrono::{DateTime, Utc};
use lettre::{
    message::{Mailbox, MultiPart},
    AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor,
};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::{
    clock::AccountClock,
    config::Config,
    domain::{emails::EmailStatus, events::Event, jobs::backoff},
    outbox::{self, JobKind, JobRun, NewJob, Outcome},
    store::{self, emails::EmailRow, events::NewEvent, Tx},
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

impl Brand {
    /// The branding of an app's e-mails.
    pub fn of_app(app: &store::apps::AppRow) -> Brand {
        Brand {
            display_name: app.display_name.clone(),
            primary_color: app.primary_color.clone(),
            support_email: app.support_email.clone(),
        }
    }
}

pub struct NewEmail<'a> {
    pub app_uuid: Uuid,
    pub account_uuid: Option<Uuid>,
    pub to: &'a str,
    pub template: &'a Template,
    pub brand: &'a Brand,
    /// When to send it, on the account's clock; `None` sends it at once.
    pub send_at: Option<DateTime<Utc>>,
    /// An event to emit, in the same transaction, once the e-mail is sent (for example
    /// `location.renewal_email_sent`). The job keeps it as type and data until then.
    pub event_on_send: Option<Event>,
}

#[derive(Serialize, Deserialize)]
struct SendPayload {
    email_uuid: Uuid,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    event_on_send: Option<(String, serde_json::Value)>,
}

/// Renders the e-mail into the outbox and schedules its sending on `clock` (the account's
/// clock), in the caller's transaction.
pub async fn queue(tx: &mut Tx, clock: &AccountClock, email: &NewEmail<'_>) -> store::Result<Uuid> {
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
            status: EmailStatus::Queued,
            error: None,
            created_at: clock.now(),
            sent_at: None,
        },
    )
    .await?;
    outbox::enqueue(
        tx,
        clock,
        &NewJob {
            kind: JobKind::SendEmail,
            payload: &SendPayload {
                email_uuid: uuid,
                event_on_send: email
                    .event_on_send
                    .as_ref()
                    .map(|event| (event.kind().to_owned(), event.data())),
            },
            account_uuid: email.account_uuid,
            run_at: email.send_at.unwrap_or_else(|| clock.now()),
            max_attempts: MAX_ATTEMPTS,
        },
    )
    .await?;
    Ok(uuid)
}

/// The job: one attempt at sending one e-mail of the outbox.
pub async fn send(ctx: &JobRun, mailer: &Mailer) -> anyhow::Result<()> {
    let payload: SendPayload = serde_json::from_str(&ctx.job.payload)?;
    let Some(email) = store::emails::email_by_uuid(&ctx.db, payload.email_uuid).await? else {
        return Ok(ctx
            .finish_alone(&Outcome::Failed("e-mail not found".into()))
            .await?);
    };
    if email.status != EmailStatus::Queued {
        return Ok(ctx.finish_alone(&Outcome::Done).await?);
    }
    let (status, error, outcome) = match &mailer.smtp {
        None => (EmailStatus::Stored, None, Outcome::Done),
        Some(smtp) => match message(&mailer.from, &email) {
            Err(why) => (EmailStatus::Failed, Some(why.clone()), Outcome::Failed(why)),
            Ok(msg) => match smtp.send(msg).await {
                Ok(_) => (EmailStatus::Sent, None, Outcome::Done),
                Err(e) if e.is_permanent() => {
                    let why = format!("refused by the SMTP server: {e}");
                    (EmailStatus::Failed, Some(why.clone()), Outcome::Failed(why))
                }
                Err(e) if ctx.job.attempts >= ctx.job.max_attempts => {
                    let why = format!("SMTP failed: {e}");
                    (EmailStatus::Failed, Some(why.clone()), Outcome::Failed(why))
                }
                Err(e) => (
                    EmailStatus::Queued,
                    Some(format!("SMTP failed: {e}")),
                    Outcome::RetryAt(ctx.now() + backoff(ctx.attempt()), "SMTP failed".into()),
                ),
            },
        },
    };
    let sent_at = status.is_delivered().then(|| ctx.now());
    let mut tx = ctx.db.begin().await?;
    store::emails::set_email_status(&mut tx, email.uuid, status, error.as_deref(), sent_at).await?;
    if let (Some(at), Some((kind, data))) = (sent_at, &payload.event_on_send) {
        store::events::insert_event(
            &mut tx,
            &NewEvent {
                app_uuid: email.app_uuid,
                account_uuid: email.account_uuid,
                kind,
                data: data.clone(),
                created_at: at,
            },
        )
        .await?;
    }
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

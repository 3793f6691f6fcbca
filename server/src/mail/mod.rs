//! E-mail: templates (text and HTML, branded per app), the outbox, and the job that hands an
//! e-mail to SMTP when `SMTP_URL` is set or keeps it in the database otherwise (the sandbox
//! e-mail log shows it either way). A stored document may ride along as an attachment
//! (`store::documents`, an expiration notice's PDF).

pub mod templates;

use chrono::{DateTime, Utc};
use lettre::{
    message::{header::ContentType, Attachment, Mailbox, MultiPart},
    AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor,
};
use uuid::Uuid;

use crate::{
    clock::{AccountClock, Clock},
    config::Config,
    domain::{emails::EmailStatus, events::Event, jobs::backoff, tokens},
    outbox::{self, Job, JobRun, Outcome},
    store::{self, emails::EmailRow, events::NewEvent, Tx},
};
pub use templates::{Brand, Rendered, Template};

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
    /// The platform's own brand, for e-mails that belong to no app (to dashboard users).
    pub fn platform() -> Brand {
        Brand {
            display_name: "Switchboard".to_owned(),
            ..Brand::default()
        }
    }

    /// The branding of an app's e-mails.
    pub fn of_app(app: &store::apps::AppRow) -> Brand {
        Brand {
            display_name: app.display_name.clone(),
            primary_color: app.primary_color.clone(),
            support_email: app.support_email.clone(),
            logo_url: app.logo_url.clone(),
            support_phone: app.support_phone.clone(),
            support_url: app.support_url.clone(),
            support_hours: app.support_hours.clone(),
        }
    }
}

/// Queues `template` to the account's e-mail address at once, in the app's branding, in the
/// caller's transaction.
pub async fn queue_to_account(
    tx: &mut Tx,
    clock: &AccountClock,
    app: &store::apps::AppRow,
    account: &store::accounts::AccountRow,
    template: &Template,
) -> store::Result<Uuid> {
    queue(
        tx,
        clock,
        &NewEmail {
            app_uuid: app.uuid,
            account_uuid: Some(account.uuid),
            to: &account.email,
            template,
            brand: &Brand::of_app(app),
            send_at: None,
            event_on_send: None,
        },
    )
    .await
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

/// Renders the e-mail into the outbox and schedules its sending on `clock` (the account's
/// clock), in the caller's transaction.
pub async fn queue(tx: &mut Tx, clock: &AccountClock, email: &NewEmail<'_>) -> store::Result<Uuid> {
    let event_on_send = email
        .event_on_send
        .as_ref()
        .map(|event| (event.kind().to_owned(), event.data()));
    insert_and_schedule(
        tx,
        clock,
        Some(email.app_uuid),
        email.account_uuid,
        email.to,
        email.template.render(email.brand),
        email.template.name(),
        email.send_at,
        event_on_send,
    )
    .await
}

/// Queues an e-mail of the platform itself, at once and in its own brand: to a dashboard user,
/// who belongs to no app. It is kept and sent like every other e-mail, without an app.
pub async fn queue_platform(
    tx: &mut Tx,
    clock: &Clock,
    to: &str,
    template: &Template,
) -> store::Result<Uuid> {
    let clock = clock.with_offset(chrono::Duration::zero());
    insert_and_schedule(
        tx,
        &clock,
        None,
        None,
        to,
        template.render(&Brand::platform()),
        template.name(),
        None,
        None,
    )
    .await
}

#[allow(clippy::too_many_arguments)]
async fn insert_and_schedule(
    tx: &mut Tx,
    clock: &AccountClock,
    app_uuid: Option<Uuid>,
    account_uuid: Option<Uuid>,
    to: &str,
    rendered: Rendered,
    template: &str,
    send_at: Option<DateTime<Utc>>,
    event_on_send: Option<(String, serde_json::Value)>,
) -> store::Result<Uuid> {
    let uuid = Uuid::new_v4();
    store::emails::insert_email(
        tx,
        &EmailRow {
            uuid,
            app_uuid,
            account_uuid,
            template: template.to_owned(),
            to_address: to.to_owned(),
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
        &Job::SendEmail {
            email_uuid: uuid,
            event_on_send,
        },
        account_uuid,
        send_at.unwrap_or_else(|| clock.now()),
    )
    .await?;
    Ok(uuid)
}

/// The job: one attempt at sending the e-mail `email_uuid` of the outbox, writing
/// `event_on_send` (type and data) once it is sent.
pub async fn send(
    ctx: &JobRun,
    mailer: &Mailer,
    email_uuid: Uuid,
    event_on_send: &Option<(String, serde_json::Value)>,
) -> anyhow::Result<()> {
    let Some(email) = store::emails::email_by_uuid(&ctx.db, email_uuid).await? else {
        return Ok(ctx
            .finish_alone(&Outcome::Failed("e-mail not found".into()))
            .await?);
    };
    if email.status != EmailStatus::Queued {
        return Ok(ctx.finish_alone(&Outcome::Done).await?);
    }
    let (status, error, outcome) = match &mailer.smtp {
        None => (EmailStatus::Stored, None, Outcome::Done),
        Some(smtp) => match message(
            &mailer.from,
            &email,
            &store::documents::attachments_of_email(&ctx.db, email.uuid).await?,
        ) {
            Err(why) => (EmailStatus::Failed, Some(why.clone()), Outcome::Failed(why)),
            Ok(msg) => after_smtp(ctx, smtp.send(msg).await),
        },
    };
    let mut tx = ctx.db.begin().await?;
    record(
        &mut tx,
        ctx,
        &email,
        status,
        error.as_deref(),
        event_on_send,
    )
    .await?;
    if ctx.finish(&mut tx, &outcome).await? {
        tx.commit().await?;
    }
    Ok(())
}

/// What SMTP's answer to an e-mail makes of it (its status, the error) and of its job.
fn after_smtp(
    ctx: &JobRun,
    sent: Result<lettre::transport::smtp::response::Response, lettre::transport::smtp::Error>,
) -> (EmailStatus, Option<String>, Outcome) {
    match sent {
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
    }
}

/// Writes an attempt's result on the e-mail in `tx`: its status and, once it is delivered,
/// `event_on_send`.
async fn record(
    tx: &mut Tx,
    ctx: &JobRun,
    email: &EmailRow,
    status: EmailStatus,
    error: Option<&str>,
    event_on_send: &Option<(String, serde_json::Value)>,
) -> store::Result<()> {
    let sent_at = status.is_delivered().then(|| ctx.now());
    store::emails::set_email_status(tx, email.uuid, status, error, sent_at).await?;
    if let (Some(at), Some((kind, data)), Some(app_uuid)) = (sent_at, event_on_send, email.app_uuid)
    {
        store::events::insert_event(
            tx,
            &NewEvent {
                app_uuid,
                account_uuid: email.account_uuid,
                kind,
                data: data.clone(),
                created_at: at,
            },
        )
        .await?;
    }
    Ok(())
}

/// The status an attempt gives an e-mail, with the reason when it failed.
type StatusChange = (EmailStatus, Option<String>);

/// The job for several e-mails at once, each attempted as `send` does it: the e-mails read in
/// one query, those for SMTP handed to it concurrently, then every job's end with its e-mail's
/// status (and event) in one transaction, the ends that are done in one statement. A job whose
/// lease was lost writes nothing, as it would alone; an e-mail that fails, fails alone. Answers
/// false, having done nothing, when one of the jobs is not an e-mail's.
pub async fn send_all(runs: &[&JobRun], mailer: &Mailer) -> anyhow::Result<bool> {
    let Some(first) = runs.first() else {
        return Ok(true);
    };
    let mut payloads = Vec::with_capacity(runs.len());
    for run in runs {
        match Job::from_stored(&run.job.kind, &run.job.payload) {
            Ok(Job::SendEmail {
                email_uuid,
                event_on_send,
            }) => payloads.push((email_uuid, event_on_send)),
            _ => return Ok(false),
        }
    }
    let uuids: Vec<Uuid> = payloads.iter().map(|(uuid, _)| *uuid).collect();
    let found = store::emails::emails_by_uuids(&first.db, &uuids).await?;
    // Each job: its e-mail, if it is still to send, with what the attempt makes of it.
    let mut decided: Vec<(Option<&EmailRow>, Option<StatusChange>, Outcome)> =
        Vec::with_capacity(runs.len());
    let mut sending = tokio::task::JoinSet::new();
    for (i, (uuid, _)) in payloads.iter().enumerate() {
        let Some(email) = found.iter().find(|e| e.uuid == *uuid) else {
            decided.push((None, None, Outcome::Failed("e-mail not found".into())));
            continue;
        };
        if email.status != EmailStatus::Queued {
            decided.push((None, None, Outcome::Done));
            continue;
        }
        let decision = match &mailer.smtp {
            None => (Some((EmailStatus::Stored, None)), Outcome::Done),
            Some(smtp) => match message(
                &mailer.from,
                email,
                &store::documents::attachments_of_email(&first.db, email.uuid).await?,
            ) {
                Err(why) => (
                    Some((EmailStatus::Failed, Some(why.clone()))),
                    Outcome::Failed(why),
                ),
                Ok(msg) => {
                    let smtp = smtp.clone();
                    sending.spawn(async move { (i, smtp.send(msg).await) });
                    // Decided when SMTP answers.
                    (None, Outcome::Done)
                }
            },
        };
        decided.push((Some(email), decision.0, decision.1));
    }
    while let Some(answer) = sending.join_next().await {
        let (i, sent) = answer?;
        let (status, error, outcome) = after_smtp(runs[i], sent);
        decided[i].1 = Some((status, error));
        decided[i].2 = outcome;
    }
    let mut tx = first.db.begin().await?;
    let done: Vec<&JobRun> = runs
        .iter()
        .zip(&decided)
        .filter(|(_, d)| d.2 == Outcome::Done)
        .map(|(run, _)| *run)
        .collect();
    let ended = outbox::complete_all(&mut tx, &done).await?;
    for ((run, (email, change, outcome)), (_, event_on_send)) in
        runs.iter().zip(&decided).zip(&payloads)
    {
        let ends = if *outcome == Outcome::Done {
            ended.contains(&run.job.uuid)
        } else {
            run.finish(&mut tx, outcome).await?
        };
        if let (true, Some(email), Some((status, error))) = (ends, email, change) {
            record(
                &mut tx,
                run,
                email,
                *status,
                error.as_deref(),
                event_on_send,
            )
            .await?;
        }
    }
    tx.commit().await?;
    Ok(true)
}

/// An e-mail's HTML as staff see it in a preview: every link inert (its `href` taken out, its
/// text kept) and every bearer token of ours in the text blotted out, so that a click in the
/// preview can neither sign anyone in as the customer nor spend the customer's single-use link.
/// A note at the top says so.
pub fn preview_html(html: &str) -> String {
    let mut out = inert_links(html);
    for prefix in [
        tokens::HOSTED_LINK_PREFIX,
        tokens::PASSWORD_RESET_PREFIX,
        tokens::FLOW_PREFIX,
        tokens::FLOW_LOGIN_PREFIX,
        tokens::ACCOUNT_PREFIX,
    ] {
        out = blot_tokens(&out, prefix);
    }
    const NOTE: &str = "<p role=\"note\" data-testid=\"preview-note\" style=\"margin: 0; \
        padding: 8px 12px; background: #fff4ce; color: #3d3100; font: 14px sans-serif\">\
        Preview: the links in this e-mail are disabled here. They work only for the customer.</p>";
    match out
        .find("<body")
        .and_then(|at| out[at..].find('>').map(|end| at + end + 1))
    {
        Some(after) => format!("{}{NOTE}{}", &out[..after], &out[after..]),
        None => format!("{NOTE}{out}"),
    }
}

/// `html` without any `href` attribute: each becomes `aria-disabled="true"`.
fn inert_links(html: &str) -> String {
    let lower = html.to_ascii_lowercase();
    let mut out = String::with_capacity(html.len());
    let mut rest = 0;
    let mut from = 0;
    while let Some(found) = lower[from..].find("href") {
        let at = from + found;
        from = at + 4;
        // An attribute: after white space, then `=` (spaces allowed around it).
        if !lower[..at].ends_with(|c: char| c.is_ascii_whitespace()) {
            continue;
        }
        let after_name = lower[from..].trim_start();
        let Some(value) = after_name.strip_prefix('=') else {
            continue;
        };
        let value = value.trim_start();
        let value_at = lower.len() - value.len();
        let end = match value.chars().next() {
            Some(q @ ('"' | '\'')) => match value[1..].find(q) {
                Some(close) => value_at + 1 + close + 1,
                None => lower.len(),
            },
            _ => value
                .find(|c: char| c.is_ascii_whitespace() || c == '>')
                .map_or(lower.len(), |e| value_at + e),
        };
        out.push_str(&html[rest..at]);
        out.push_str("aria-disabled=\"true\"");
        rest = end;
        from = end;
    }
    out.push_str(&html[rest..]);
    out
}

/// `text` with every token starting with `prefix` replaced by the prefix and "[hidden]".
fn blot_tokens(text: &str, prefix: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(prefix) {
        let tail = &rest[at + prefix.len()..];
        let len = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .unwrap_or(tail.len());
        out.push_str(&rest[..at]);
        out.push_str(prefix);
        out.push_str("[hidden]");
        rest = &tail[len..];
    }
    out.push_str(rest);
    out
}

/// The message of an e-mail, with the stored documents it carries attached (an expiration
/// notice's PDF).
fn message(
    from: &Mailbox,
    email: &EmailRow,
    attachments: &[store::documents::StoredDocumentRow],
) -> Result<Message, String> {
    let to: Mailbox = email
        .to_address
        .parse()
        .map_err(|_| "the recipient address is not valid".to_owned())?;
    let body = MultiPart::alternative_plain_html(email.text_body.clone(), email.html_body.clone());
    let body = if attachments.is_empty() {
        body
    } else {
        let mut mixed = MultiPart::mixed().multipart(body);
        for a in attachments {
            let content_type = ContentType::parse(&a.content_type)
                .map_err(|e| format!("an attachment's type is not valid: {e}"))?;
            let name = crate::domain::documents::attachment_file_name(a.kind, &a.version);
            mixed = mixed.singlepart(Attachment::new(name).body(a.bytes.clone(), content_type));
        }
        mixed
    };
    Message::builder()
        .from(from.clone())
        .to(to)
        .subject(email.subject.clone())
        .multipart(body)
        .map_err(|e| format!("the message could not be built: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::documents::DocumentKind;

    #[test]
    fn a_preview_s_links_go_nowhere_and_its_tokens_are_blotted_out() {
        let token = "swb_link_AbC-12_xyz";
        let html = format!(
            "<html><body class=\"x\"><p>Hello</p><a href=\"https://s.example/hosted/link?token={token}\" \
             style=\"color: red\">Change your card</a> <A HREF='mailto:help@sunny.example'>help</A> \
             <a href=https://bare.example>bare</a><p>Or open https://s.example/hosted/link?token={token}\
             </p><p>Your hreflang stays.</p></body></html>"
        );
        let preview = preview_html(&html);
        assert!(!preview.contains(token), "{preview}");
        assert!(!preview.to_ascii_lowercase().contains("href="), "{preview}");
        assert!(!preview.contains("https://bare.example"), "{preview}");
        assert!(
            preview.contains(">Change your card</a>"),
            "the text stays: {preview}"
        );
        assert!(preview.contains("style=\"color: red\""), "{preview}");
        assert!(preview.contains("token=swb_link_[hidden]"), "{preview}");
        assert!(preview.contains("Your hreflang stays."), "{preview}");
        let note = preview.find("data-testid=\"preview-note\"").unwrap();
        assert!(
            note > preview.find("<body").unwrap(),
            "the note is inside the body"
        );
        // Plain text without a body or links is left as it is, with the note.
        assert!(preview_html("<p>Hi</p>").ends_with("<p>Hi</p>"));
    }

    #[test]
    fn a_stored_document_rides_along_as_a_pdf_attachment() {
        let now = Utc::now();
        let email = EmailRow {
            uuid: Uuid::new_v4(),
            app_uuid: Some(Uuid::new_v4()),
            account_uuid: None,
            template: "renewal_reminder".to_owned(),
            to_address: "ana@example.com".to_owned(),
            subject: "Your electricity plan ends in 30 days".to_owned(),
            text_body: "Hello".to_owned(),
            html_body: "<p>Hello</p>".to_owned(),
            status: EmailStatus::Queued,
            error: None,
            created_at: now,
            sent_at: None,
        };
        let from: Mailbox = "Switchboard <no-reply@example.com>".parse().unwrap();
        let plain = String::from_utf8(message(&from, &email, &[]).unwrap().formatted()).unwrap();
        assert!(!plain.contains("attachment"));
        let notice = store::documents::StoredDocumentRow {
            uuid: Uuid::new_v4(),
            account_uuid: Uuid::new_v4(),
            contract_uuid: None,
            notice_uuid: Some(Uuid::new_v4()),
            email_uuid: Some(email.uuid),
            kind: DocumentKind::RenewalNotice,
            version: "2027-11-30".to_owned(),
            content_type: "application/pdf".to_owned(),
            sha256: String::new(),
            bytes: b"%PDF-1.7 notice".to_vec(),
            created_at: now,
        };
        let with =
            String::from_utf8(message(&from, &email, &[notice]).unwrap().formatted()).unwrap();
        assert!(with.contains("multipart/mixed"), "{with}");
        assert!(with.contains("Content-Type: application/pdf"), "{with}");
        assert!(
            with.contains("attachment; filename=\"renewal-notice-2027-11-30.pdf\""),
            "{with}"
        );
        assert!(with.contains("text/plain") && with.contains("text/html"));
    }
}

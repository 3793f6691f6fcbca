//! The command line: `serve` (the default), `migrate`,
//! `apps create|set-payment-keys|set-branding|set-origins`, `tokens create|revoke`,
//! `users create`,
//! `market generate|import|submissions`, `backup --to FILE`.

use std::{net::SocketAddr, path::PathBuf};

use app::api::Environment;
use clap::{Args, Parser, Subcommand, ValueEnum};
use uuid::Uuid;

use crate::{
    admin,
    clock::Clock,
    config::{Config, LogFormat, Secret},
    domain::{apps::Origin, enrollment::UtilityRecord, users::Role as UserRole},
    services::{self, audit::Actor},
    store::{self, Db},
};

#[derive(Debug, Parser)]
#[command(
    name = "switchboard",
    version,
    about = "Branded retail electricity: the Switchboard server and its operator commands"
)]
pub struct Cli {
    /// Configuration file (TOML); defaults to ./switchboard.toml when present
    #[arg(long, global = true, env = "SWITCHBOARD_CONFIG")]
    pub config: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the API, the pages and the background workers (the default)
    Serve(ServeArgs),
    /// Apply pending database migrations, then exit
    Migrate,
    /// Manage apps
    Apps {
        #[command(subcommand)]
        command: AppsCommand,
    },
    /// Manage AppTokens
    Tokens {
        #[command(subcommand)]
        command: TokensCommand,
    },
    /// Manage the people who sign in to the dashboard
    Users {
        #[command(subcommand)]
        command: UsersCommand,
    },
    /// Fill the service-address directory; record the utility's answers to live enrollments
    Market {
        #[command(subcommand)]
        command: MarketCommand,
    },
    /// Copy the SQLite database, consistent and while it serves, to a new file (PostgreSQL:
    /// use pg_dump)
    Backup {
        /// The copy to write (must not exist)
        #[arg(long)]
        to: PathBuf,
    },
}

#[derive(Debug, Subcommand)]
pub enum MarketCommand {
    /// Generate realistic Texas service addresses (deterministic for a seed)
    Generate {
        /// How many addresses (meters) to generate
        #[arg(long)]
        addresses: u64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Import the utilities' ESI ID extract (CSV: ESI ID, address, address overflow, city,
    /// state, ZIP, TDU, premise type, status)
    Import { file: PathBuf },
    /// Live enrollments submitted to the utility: list them and record its answers
    Submissions {
        #[command(subcommand)]
        command: SubmissionsCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum SubmissionsCommand {
    /// List live submissions to the utility, oldest first
    List {
        /// Only those waiting for the utility's answer
        #[arg(long)]
        pending: bool,
        /// Print a JSON array
        #[arg(long)]
        json: bool,
    },
    /// Record the utility's answer to a submission; the enrollment moves on at once
    #[command(group(
        clap::ArgGroup::new("answer")
            .required(true)
            .args(["accepted", "switch_hold", "deactivated", "rejected", "active"])
    ))]
    Record {
        submission: Uuid,
        /// The utility accepted the enrollment (with --start-date)
        #[arg(long, requires = "start_date")]
        accepted: bool,
        /// The service start date the utility gave, YYYY-MM-DD
        #[arg(long, requires = "accepted")]
        start_date: Option<chrono::NaiveDate>,
        /// The current provider holds the switch
        #[arg(long)]
        switch_hold: bool,
        /// The meter is not active at the utility
        #[arg(long)]
        deactivated: bool,
        /// The utility rejected the enrollment (with --reason)
        #[arg(long, requires = "reason")]
        rejected: bool,
        /// Why the utility rejected it
        #[arg(long, requires = "rejected")]
        reason: Option<String>,
        /// The utility switched the meter: service is active
        #[arg(long)]
        active: bool,
        /// Print the submission as JSON
        #[arg(long)]
        json: bool,
    },
}

/// The answer an operator typed, as the domain knows it.
fn utility_record(command: &SubmissionsCommand) -> Result<UtilityRecord, String> {
    let SubmissionsCommand::Record {
        accepted,
        start_date,
        switch_hold,
        deactivated,
        rejected,
        reason,
        active,
        ..
    } = command
    else {
        return Err("not a record command".to_owned());
    };
    match (accepted, start_date, reason) {
        (true, Some(start_date), _) => Ok(UtilityRecord::Accepted {
            start_date: *start_date,
        }),
        _ if *switch_hold => Ok(UtilityRecord::SwitchHold),
        _ if *deactivated => Ok(UtilityRecord::Deactivated),
        (_, _, Some(reason)) if *rejected => UtilityRecord::rejected(reason),
        _ if *active => Ok(UtilityRecord::Active),
        _ => Err("say what the utility answered".to_owned()),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Role {
    /// API and background workers in one process
    #[default]
    All,
    /// The API only (stateless; scale out behind a load balancer)
    Api,
    /// Background workers only (with health and metrics endpoints)
    Worker,
}

#[derive(Debug, Args, Default)]
pub struct ServeArgs {
    /// Address to listen on [env: SWITCHBOARD_ADDR; default 127.0.0.1:3000]
    #[arg(long)]
    pub addr: Option<SocketAddr>,
    /// Which part of the service this process runs
    #[arg(long, value_enum, default_value_t = Role::All, env = "SWITCHBOARD_ROLE")]
    pub role: Role,
}

#[derive(Debug, Subcommand)]
pub enum AppsCommand {
    /// Create an app and print its first AppToken (shown once)
    Create {
        #[arg(long)]
        name: String,
        #[arg(long, value_enum)]
        environment: EnvironmentArg,
        /// Print {"app_uuid": ..., "token": ...}
        #[arg(long)]
        json: bool,
    },
    /// Set what flows and e-mails show of an app: display name, colour, logo
    SetBranding {
        #[arg(long)]
        app: Uuid,
        #[arg(long)]
        display_name: Option<String>,
        /// A hex colour such as #1b4d3e
        #[arg(long)]
        primary_color: Option<String>,
        /// An https URL of the logo
        #[arg(long)]
        logo_url: Option<String>,
    },
    /// Set the short text of an app's hosted landing page (/go/<slug>); blank clears it
    SetLandingText {
        #[arg(long)]
        app: Uuid,
        /// Plain text, at most 600 characters (line breaks kept)
        #[arg(long)]
        text: String,
    },
    /// Set the origins that may embed an app's flows and receive their close message
    #[command(group(clap::ArgGroup::new("origins").required(true).args(["origin", "clear"])))]
    SetOrigins {
        #[arg(long)]
        app: Uuid,
        /// An origin such as https://partner.example (repeat for several); replaces the list
        #[arg(long, value_parser = origin_arg)]
        origin: Vec<Origin>,
        /// Register no origin
        #[arg(long)]
        clear: bool,
    },
    /// Set the support contacts customers see (blank clears one)
    SetSupport {
        #[arg(long)]
        app: Uuid,
        #[arg(long, default_value = "")]
        name: String,
        /// A US phone number
        #[arg(long, default_value = "")]
        phone: String,
        #[arg(long, default_value = "")]
        email: String,
        #[arg(long, default_value = "")]
        hours: String,
        /// An https URL
        #[arg(long, default_value = "")]
        url: String,
    },
    /// Show what a live app still needs before customers may start (exits 1 when not ready)
    Readiness {
        #[arg(long)]
        app: Uuid,
    },
    /// Set a live app's keys for the card processor (the secret key is stored sealed)
    SetPaymentKeys {
        #[arg(long)]
        app: Uuid,
        /// pk_live_...
        #[arg(long)]
        publishable_key: String,
        /// sk_live_... (or SWITCHBOARD_PAYMENT_SECRET_KEY, which keeps it out of the shell's history)
        #[arg(
            long,
            env = "SWITCHBOARD_PAYMENT_SECRET_KEY",
            hide_env_values = true,
            value_parser = secret_arg
        )]
        secret_key: Secret,
        /// whsec_...: the signing secret of the processor's webhooks to
        /// /processor/webhooks/APP_UUID (or SWITCHBOARD_PAYMENT_WEBHOOK_SECRET)
        #[arg(
            long,
            env = "SWITCHBOARD_PAYMENT_WEBHOOK_SECRET",
            hide_env_values = true,
            value_parser = secret_arg
        )]
        webhook_secret: Option<Secret>,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum EnvironmentArg {
    Sandbox,
    Live,
}

impl From<EnvironmentArg> for Environment {
    fn from(e: EnvironmentArg) -> Self {
        match e {
            EnvironmentArg::Sandbox => Environment::Sandbox,
            EnvironmentArg::Live => Environment::Live,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum TokensCommand {
    /// Issue another AppToken for an app (shown once)
    Create {
        #[arg(long)]
        app: Uuid,
    },
    /// Revoke an AppToken by its prefix (as listed in the dashboard) or its whole value
    Revoke { prefix: String },
}

#[derive(Debug, Subcommand)]
pub enum UsersCommand {
    /// Create a dashboard user and print a one-time password (shown only then)
    Create {
        #[arg(long)]
        email: String,
        #[arg(long, value_enum)]
        role: RoleArg,
        /// The partner member's organisation (created when new); operators have none
        #[arg(long)]
        organisation: Option<String>,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum RoleArg {
    /// Runs the platform: every app, live apps, the audit log
    Operator,
    /// Runs the apps of one organisation
    Partner,
}

impl From<RoleArg> for UserRole {
    fn from(r: RoleArg) -> Self {
        match r {
            RoleArg::Operator => UserRole::Operator,
            RoleArg::Partner => UserRole::Partner,
        }
    }
}

fn origin_arg(raw: &str) -> Result<Origin, String> {
    Origin::parse(raw)
}

/// A secret from the command line, kept in a type whose `Debug` prints nothing.
fn secret_arg(raw: &str) -> Result<Secret, std::convert::Infallible> {
    Ok(Secret::new(raw))
}

pub fn init_tracing(format: LogFormat) {
    use tracing_subscriber::{fmt, EnvFilter};
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,tower_http=warn"));
    let builder = fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Human => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}

/// Runs the command line; returns when the command is done (or the server has shut down).
pub async fn run(cli: Cli) -> anyhow::Result<()> {
    let mut config = Config::load(cli.config.as_deref())?;
    init_tracing(config.log_format);
    let clock = config
        .clock_start
        .map_or_else(Clock::system, Clock::starting_at);
    if let Some(start) = config.clock_start {
        tracing::warn!(%start, "the service clock starts at a chosen instant (clock_start)");
    }
    match cli.command.unwrap_or(Command::Serve(ServeArgs::default())) {
        Command::Serve(args) => {
            if let Some(addr) = args.addr.or_else(|| {
                std::env::var("SWITCHBOARD_ADDR")
                    .ok()
                    .and_then(|a| a.parse().ok())
            }) {
                config.addr = addr;
            }
            serve(config, clock, args.role).await
        }
        Command::Backup { to } => backup(&config, &to).await,
        Command::Migrate => {
            let db = connect(&config).await?;
            println!("Database is up to date.");
            db.close().await;
            Ok(())
        }
        Command::Apps {
            command:
                AppsCommand::Create {
                    name,
                    environment,
                    json,
                },
        } => {
            let db = connect(&config).await?;
            let created = admin::create_app(&db, &clock, &name, environment.into()).await?;
            if json {
                println!(
                    "{}",
                    serde_json::json!({"app_uuid": created.uuid, "token": created.token})
                );
            } else {
                println!("Created app {} ({}).", created.uuid, created.slug);
                println!("Its AppToken, shown only now:\n  {}", created.token);
            }
            db.close().await;
            Ok(())
        }
        Command::Market {
            command: MarketCommand::Submissions { command },
        } => {
            let db = connect(&config).await?;
            let result = submissions_command(&db, &clock, &command).await;
            db.close().await;
            result
        }
        Command::Market { command } => {
            let db = connect(&config).await?;
            let result = market_command(&db, command).await;
            db.close().await;
            result
        }
        Command::Apps {
            command:
                AppsCommand::SetPaymentKeys {
                    app,
                    publishable_key,
                    secret_key,
                    webhook_secret,
                },
        } => {
            let db = connect(&config).await?;
            let pii = crate::pii_key(&config)?;
            admin::set_payment_keys(&db, &pii, app, &publishable_key, secret_key.expose()).await?;
            if let Some(secret) = webhook_secret {
                admin::set_payment_webhook_secret(&db, &pii, app, secret.expose()).await?;
            }
            println!("Payment keys set for app {app}.");
            db.close().await;
            Ok(())
        }
        Command::Apps {
            command:
                AppsCommand::SetBranding {
                    app,
                    display_name,
                    primary_color,
                    logo_url,
                },
        } => {
            let db = connect(&config).await?;
            let change = admin::BrandingChange {
                display_name: display_name.as_deref(),
                primary_color: primary_color.as_deref(),
                logo_url: logo_url.as_deref(),
            };
            admin::set_branding(&db, app, &change).await?;
            println!("Branding set for app {app}.");
            db.close().await;
            Ok(())
        }
        Command::Apps {
            command: AppsCommand::SetLandingText { app, text },
        } => {
            let db = connect(&config).await?;
            match admin::set_landing_text(&db, app, &text).await? {
                Some(_) => println!("Landing text set for app {app}."),
                None => println!("Landing text cleared for app {app}."),
            }
            db.close().await;
            Ok(())
        }
        Command::Apps {
            command:
                AppsCommand::SetSupport {
                    app,
                    name,
                    phone,
                    email,
                    hours,
                    url,
                },
        } => {
            let db = connect(&config).await?;
            let input = crate::services::apps::SupportInput {
                name: &name,
                phone: &phone,
                email: &email,
                hours: &hours,
                url: &url,
            };
            admin::set_support(&db, app, &input).await?;
            println!("Support contacts set for app {app}.");
            db.close().await;
            Ok(())
        }
        Command::Apps {
            command: AppsCommand::Readiness { app },
        } => {
            let db = connect(&config).await?;
            let readiness = admin::readiness(&db, app).await?;
            db.close().await;
            if !readiness.live {
                println!("App {app} is a sandbox app: always open.");
                return Ok(());
            }
            if readiness.missing.is_empty() {
                println!("App {app} is ready for customers.");
                return Ok(());
            }
            println!("App {app} is not ready for customers; missing:");
            for item in &readiness.missing {
                println!("  {}", item.label());
            }
            anyhow::bail!("app {app} is not ready")
        }
        Command::Apps {
            command: AppsCommand::SetOrigins { app, origin, .. },
        } => {
            let db = connect(&config).await?;
            let origins = admin::set_allowed_origins(&db, app, origin).await?;
            if origins.is_empty() {
                println!("App {app} has no registered origin.");
            } else {
                println!("Origins of app {app}:");
                for o in &origins {
                    println!("  {}", o.as_str());
                }
            }
            db.close().await;
            Ok(())
        }
        Command::Users {
            command:
                UsersCommand::Create {
                    email,
                    role,
                    organisation,
                },
        } => {
            let db = connect(&config).await?;
            let created = services::users::create_user(
                &db,
                &clock,
                &Actor::Cli,
                &email,
                role.into(),
                organisation.as_deref(),
            )
            .await;
            db.close().await;
            let created = created.map_err(|e| match e {
                services::Error::Refused(why) => anyhow::anyhow!(why),
                services::Error::Failed(e) => e,
            })?;
            println!("Created dashboard user {}.", created.email);
            print_sign_in(&config, &created);
            Ok(())
        }
        Command::Tokens { command } => {
            let db = connect(&config).await?;
            match command {
                TokensCommand::Create { app } => {
                    let token = admin::create_token(&db, &clock, app).await?;
                    println!("{token}");
                }
                TokensCommand::Revoke { prefix } => {
                    admin::revoke_token(&db, &clock, &prefix).await?;
                    println!("Revoked.");
                }
            }
            db.close().await;
            Ok(())
        }
    }
}

fn progress_bar(unit: &str) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(0);
    let template = format!(
        "{{spinner}} [{{elapsed_precise}}] {{wide_bar}} {{human_pos}}/{{human_len}} {unit} ({{eta}} left)"
    );
    if let Ok(style) = indicatif::ProgressStyle::with_template(&template) {
        bar.set_style(style);
    }
    bar
}

async fn submissions_command(
    db: &Db,
    clock: &Clock,
    command: &SubmissionsCommand,
) -> anyhow::Result<()> {
    match command {
        SubmissionsCommand::List { pending, json } => {
            let rows = admin::utility_submissions(db, *pending).await?;
            if *json {
                println!("{}", serde_json::to_string(&rows)?);
                return Ok(());
            }
            if rows.is_empty() {
                println!("No submissions.");
            }
            for s in &rows {
                println!(
                    "{}  {:<11}  ESI ID {}  account {}  submitted {}  start {}",
                    s.uuid,
                    s.status,
                    s.esi_id,
                    s.account_uuid,
                    s.submitted_at.format("%Y-%m-%d %H:%M"),
                    s.start_date
                        .or(s.requested_start_date)
                        .map_or_else(|| "-".to_owned(), |d| d.to_string()),
                );
            }
            Ok(())
        }
        SubmissionsCommand::Record {
            submission, json, ..
        } => {
            let record = utility_record(command).map_err(|e| anyhow::anyhow!(e))?;
            let recorded = admin::record_utility_answer(db, clock, *submission, &record).await?;
            if *json {
                println!("{}", serde_json::to_string(&recorded)?);
            } else {
                println!("Submission {} is now {}.", recorded.uuid, recorded.status);
            }
            Ok(())
        }
    }
}

async fn market_command(db: &Db, command: MarketCommand) -> anyhow::Result<()> {
    let summary = match command {
        MarketCommand::Generate { addresses, seed } => {
            let bar = progress_bar("addresses");
            crate::adapters::setup::generate(db, addresses, seed, &bar).await?
        }
        MarketCommand::Submissions { .. } => {
            anyhow::bail!("submissions are not a directory fill")
        }
        MarketCommand::Import { file } => {
            let bar = indicatif::ProgressBar::new(0);
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {wide_bar} {binary_bytes}/{binary_total_bytes} ({eta} left)",
            ) {
                bar.set_style(style);
            }
            crate::adapters::setup::import(db, &file, &bar).await?
        }
    };
    let total = store::market::count_service_addresses(db).await?;
    println!(
        "Read {} addresses in {:.1} s: {} written, {} already present, {} rejected.",
        summary.read, summary.seconds, summary.written, summary.skipped, summary.rejected
    );
    for line in &summary.rejections {
        println!("  rejected {line}");
    }
    println!("The directory now holds {total} addresses; running servers pick them up on restart.");
    Ok(())
}

/// `backup --to FILE`: an online copy of a SQLite database; PostgreSQL is refused with what to
/// use instead.
async fn backup(config: &Config, to: &std::path::Path) -> anyhow::Result<()> {
    let url = config.database_url.expose();
    if !url.starts_with("sqlite:") {
        anyhow::bail!(
            "switchboard backup copies the embedded SQLite database; for PostgreSQL use its own \
             tools, e.g. pg_dump --format=custom --file=switchboard.dump \"$DATABASE_URL\" (and \
             pg_restore to restore)"
        );
    }
    store::backup::copy_sqlite(url, to).await?;
    println!("Backed up the database to {}.", to.display());
    println!(
        "Keep the PII key with it (SWITCHBOARD_PII_KEY, or pii.key beside the database): \
         sealed data in the copy opens only with that key."
    );
    Ok(())
}

/// Where and with what a new dashboard user signs in: printed once to the terminal, never
/// logged.
fn print_sign_in(config: &Config, created: &services::users::CreatedUser) {
    println!("  sign in: {}/dashboard/sign-in", config.public_url());
    println!("  e-mail:   {}", created.email);
    println!(
        "  password: {}  (shown only now; change it after signing in)",
        created.password.expose()
    );
}

async fn connect(config: &Config) -> anyhow::Result<Db> {
    let db = Db::connect(
        config.database_url.expose(),
        config.database_max_connections,
    )
    .await?;
    db.migrate().await?;
    Ok(db)
}

async fn serve(config: Config, clock: Clock, role: Role) -> anyhow::Result<()> {
    let addr = config.addr;
    let state = crate::build_state(config, clock.clone()).await?;
    if role != Role::Worker && store::apps::count_apps(&state.db).await? == 0 {
        let created = services::apps::create_app(
            &state.db,
            &clock,
            &Actor::System,
            "My sandbox app",
            Environment::Sandbox,
            None,
        )
        .await
        .map_err(|e| match e {
            services::Error::Refused(why) => anyhow::anyhow!(why),
            services::Error::Failed(e) => e,
        })?;
        println!("Welcome to Switchboard. A sandbox app was created for you:");
        println!("  app:   {}", created.uuid);
        println!(
            "  token: {}  (shown only now; keep it secret)",
            created.token
        );
        println!(
            "Try: curl -H 'Authorization: Bearer {}' http://{addr}/v1/app",
            created.token
        );
    }
    if role != Role::Worker {
        let created = services::users::ensure_first_operator(&state.db, &clock)
            .await
            .map_err(|e| match e {
                services::Error::Refused(why) => anyhow::anyhow!(why),
                services::Error::Failed(e) => e,
            })?;
        if let Some(created) = created {
            println!("The dashboard's first operator was created:");
            print_sign_in(&state.config, &created);
        }
    }
    let listener = tokio::net::TcpListener::bind(addr).await?;
    tracing::info!(%addr, ?role, "listening");
    let workers = (role != Role::Api).then(|| crate::start_workers(state.clone()));
    // On a signal the workers finish their jobs in flight first, then the HTTP side drains
    // and the database closes.
    let shutdown = async move {
        crate::shutdown_signal().await;
        if let Some(workers) = workers {
            workers.shutdown().await;
        }
    };
    let app = match role {
        Role::Worker => crate::http::ops_router(state.clone()),
        Role::All | Role::Api => crate::http::router(state.clone()),
    };
    crate::serve_router(state, app, listener, shutdown).await
}

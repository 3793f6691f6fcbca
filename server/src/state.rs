//! The core state every layer below HTTP shares: the database, the one clock, the config, the
//! key sealing personal data, the outside-world adapters, the mailer and the webhook sender. No
//! HTTP types: `http::AppState` wraps this with what only requests need.

use std::sync::Arc;

use uuid::Uuid;

use crate::{
    adapters::{
        payments::{self, Processor, ProcessorResult},
        Adapters,
    },
    clock::Clock,
    config::Config,
    crypto::PiiKey,
    domain::market::BusinessCalendar,
    store::{apps::AppRow, Db},
};

/// Cheap to clone: one `Arc`.
#[derive(Clone)]
pub struct Core(Arc<CoreParts>);

impl Core {
    pub fn new(parts: CoreParts) -> Self {
        Core(Arc::new(parts))
    }

    /// The card processor of `app`: the built-in test-mode one for sandbox apps, the real one
    /// with the app's own keys for live apps.
    pub async fn processor_for(&self, app: &AppRow) -> ProcessorResult<Processor> {
        payments::processor_for(
            &self.db,
            &self.clock,
            &self.config,
            &self.pii,
            &self.adapters.processor_http,
            app,
        )
        .await
    }

    /// The market's business days. The federal holidays are reference data that only a
    /// migration changes, so they are read once per process instead of once per bill.
    pub async fn business_calendar(&self) -> crate::store::Result<&BusinessCalendar> {
        self.calendar
            .get_or_try_init(|| async {
                let holidays = crate::store::market::federal_holidays(&self.db).await?;
                Ok::<_, sqlx::Error>(BusinessCalendar::new(holidays))
            })
            .await
    }

    /// Tells whoever keeps copies of account reads (the HTTP layer's cache) that the account
    /// changed, so that this instance's own writes show at once.
    pub fn account_changed(&self, account_uuid: Uuid) {
        (self.0.on_account_change)(account_uuid);
    }
}

impl std::ops::Deref for Core {
    type Target = CoreParts;

    fn deref(&self) -> &CoreParts {
        &self.0
    }
}

/// Called with an account whose stored reads changed.
pub type AccountChangeHook = Arc<dyn Fn(Uuid) + Send + Sync>;

/// What `Core` holds.
pub struct CoreParts {
    pub db: Db,
    /// HTTP clients of webhook deliveries.
    pub webhooks: crate::webhooks::Sender,
    pub mailer: crate::mail::Mailer,
    /// The address directory's search index and the other outside-world adapters.
    pub adapters: Adapters,
    pub config: Arc<Config>,
    pub clock: Clock,
    pub pii: Arc<PiiKey>,
    pub on_account_change: AccountChangeHook,
    /// Filled on first use by `Core::business_calendar`.
    pub calendar: tokio::sync::OnceCell<BusinessCalendar>,
}

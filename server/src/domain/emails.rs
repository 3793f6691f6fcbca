//! An e-mail's place in the outbox.

super::text_enum! {
    /// Queued until its job runs; then sent through SMTP, stored (no SMTP configured: kept for
    /// the sandbox's outbox), or failed for good.
    pub enum EmailStatus {
        Queued = "queued",
        Sent = "sent",
        Stored = "stored",
        Failed = "failed",
    }
}

impl EmailStatus {
    /// Whether the e-mail went out of our hands (its event, if any, is due).
    pub fn is_delivered(self) -> bool {
        matches!(self, EmailStatus::Sent | EmailStatus::Stored)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_names_round_trip() {
        for &s in EmailStatus::ALL {
            assert_eq!(EmailStatus::parse(s.as_str()), Some(s));
        }
        assert!(EmailStatus::Stored.is_delivered());
        assert!(!EmailStatus::Queued.is_delivered());
    }
}

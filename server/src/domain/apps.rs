//! Apps: how their public slugs are made, which processor keys a live app accepts, how their
//! brand colour is used on pages and e-mails, and which origins may embed their flows.

/// A URL-safe slug from an app's name, with a random suffix so that names may repeat.
pub fn slug(name: &str, suffix: &str) -> String {
    let mut out = String::with_capacity(name.len() + suffix.len() + 1);
    for ch in name.chars().flat_map(char::to_lowercase) {
        if ch.is_ascii_alphanumeric() {
            out.push(ch);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
        if out.len() >= 40 {
            break;
        }
    }
    let base = out.trim_end_matches('-');
    if base.is_empty() {
        format!("app-{suffix}")
    } else {
        format!("{base}-{suffix}")
    }
}

/// Checks a live app's keys for the real processor: a publishable key `pk_live_...` or
/// `pk_test_...` and a secret key of the same mode (`sk_live_...`, `sk_test_...`, or the
/// restricted `rk_...`), each with a body of letters, digits and underscores. The message never
/// repeats the secret key.
pub fn check_payment_keys(publishable: &str, secret: &str) -> Result<(), &'static str> {
    let body_ok =
        |b: &str| b.len() >= 8 && b.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_');
    let mode = |key: &str, kinds: &[&str]| {
        kinds.iter().find_map(|k| {
            let rest = key.strip_prefix(k)?;
            ["live_", "test_"]
                .into_iter()
                .find(|m| rest.strip_prefix(m).is_some_and(body_ok))
        })
    };
    let pk = mode(publishable, &["pk_"]).ok_or("the publishable key must look like pk_live_...")?;
    let sk = mode(secret, &["sk_", "rk_"]).ok_or("the secret key must look like sk_live_...")?;
    if pk != sk {
        return Err("the publishable and secret keys must be of the same mode (live or test)");
    }
    Ok(())
}

/// The signing secret of the card processor's webhooks, as the processor shows it:
/// `whsec_` and a body of at least 16 letters, digits, `+`, `/`, `=` or `_`. The message never
/// repeats the secret.
pub fn check_webhook_secret(secret: &str) -> Result<(), &'static str> {
    let body = secret
        .strip_prefix("whsec_")
        .ok_or("the webhook signing secret must look like whsec_...")?;
    if body.len() < 16
        || body.len() > 200
        || !body
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'=' | b'_'))
    {
        return Err(
            "the webhook signing secret must look like whsec_... as the processor shows it",
        );
    }
    Ok(())
}

/// A brand colour as pages and e-mails may use it: a plain `#rgb` or `#rrggbb` hex colour,
/// never anything that could escape a style attribute.
pub fn brand_color(c: &str) -> Option<&str> {
    let hex = c.strip_prefix('#')?;
    (matches!(hex.len(), 3 | 6) && hex.bytes().all(|b| b.is_ascii_hexdigit())).then_some(c)
}

/// Black or white, whichever reads better on a brand colour (WCAG relative luminance).
pub fn text_on(color: &str) -> &'static str {
    let hex = color.trim_start_matches('#');
    let channel = |i: usize| -> f64 {
        let v = if hex.len() == 3 {
            u8::from_str_radix(&hex[i..i + 1].repeat(2), 16)
        } else {
            u8::from_str_radix(hex.get(2 * i..2 * i + 2).unwrap_or("00"), 16)
        }
        .unwrap_or(0);
        let c = f64::from(v) / 255.0;
        if c <= 0.03928 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    let luminance = 0.2126 * channel(0) + 0.7152 * channel(1) + 0.0722 * channel(2);
    // Contrast with white is 1.05/(L+0.05) and with black (L+0.05)/0.05: equal at L ≈ 0.179.
    if luminance > 0.179 {
        "#000000"
    } else {
        "#ffffff"
    }
}

/// A web origin allowed to embed an app's flows and to receive their close message, as browsers
/// write it: `https://host` or `http://host:port`, lower-case, without a default port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin(String);

/// How many origins one app may register.
pub const MAX_ORIGINS: usize = 20;

impl Origin {
    /// An origin from what an operator typed: an http(s) URL with a host and nothing after it
    /// (a trailing `/` is tolerated), because a CSP source or a `postMessage` target with a path
    /// would match nothing.
    pub fn parse(raw: &str) -> Result<Origin, String> {
        let raw = raw.trim();
        let url = url::Url::parse(raw).map_err(|_| format!("{raw:?} is not a URL"))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!("{raw:?} must start with https:// or http://"));
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(format!("{raw:?} has no host"));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(format!("{raw:?} must not carry a user name or password"));
        }
        if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
            return Err(format!(
                "{raw:?} must be an origin only (no path, query or fragment)"
            ));
        }
        Ok(Origin(url.origin().ascii_serialization()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The origins an app registers: in the order given, each once, at most `MAX_ORIGINS`.
pub fn allowed_origins(origins: Vec<Origin>) -> Result<Vec<Origin>, String> {
    let mut out: Vec<Origin> = Vec::with_capacity(origins.len());
    for origin in origins {
        if !out.contains(&origin) {
            out.push(origin);
        }
    }
    if out.len() > MAX_ORIGINS {
        return Err(format!("an app may register at most {MAX_ORIGINS} origins"));
    }
    Ok(out)
}

/// The largest logo file accepted, and the smallest and largest side in pixels.
pub const LOGO_MAX_BYTES: usize = 512 * 1024;
pub const LOGO_MIN_SIDE: u32 = 16;
pub const LOGO_MAX_SIDE: u32 = 2000;

/// A logo upload's width and height, read from its PNG header, when it is a PNG of an accepted
/// size. PNG only: it keeps transparency and draws sharp on a bill; SVG can carry script, and a
/// photo format is the wrong tool for a logo.
pub fn logo_dimensions(bytes: &[u8]) -> Result<(u32, u32), super::FieldError> {
    let invalid = |message: &str| super::FieldError::invalid("logo", message);
    if bytes.is_empty() {
        return Err(invalid("Choose a PNG file for the logo."));
    }
    if bytes.len() > LOGO_MAX_BYTES {
        return Err(invalid("The logo must be 512 KB or smaller."));
    }
    const SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
    // The signature, then the IHDR chunk: its length (13), its type, width and height.
    let header = bytes
        .get(..24)
        .filter(|h| h.starts_with(SIGNATURE) && &h[12..16] == b"IHDR")
        .ok_or_else(|| invalid("The logo must be a PNG image."))?;
    let side = |at: usize| {
        u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    let (width, height) = (side(16), side(20));
    let fits = |n: u32| (LOGO_MIN_SIDE..=LOGO_MAX_SIDE).contains(&n);
    if !fits(width) || !fits(height) {
        return Err(invalid(&format!(
            "The logo must be between {LOGO_MIN_SIDE} and {LOGO_MAX_SIDE} pixels on each side \
             (this one is {width} by {height})."
        )));
    }
    Ok((width, height))
}

/// One thing a live app needs before its customers may start: until all are there its hosted
/// sign-up is not public, no enrollment flow opens and no credit check is taken (the steps
/// after the SSN could not succeed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadinessItem {
    /// A colour and a logo, so that every page and e-mail is in the partner's brand.
    Brand,
    /// An e-mail address and a phone number customers can reach.
    SupportContacts,
    /// The card processor's keys: without them no card can be saved or charged.
    PaymentKeys,
    /// The signing secret of the processor's webhooks: without it a payment that fails,
    /// is refunded or disputed at the processor is never known here.
    ProcessorWebhookSecret,
    /// At least one site allowed to embed the flows.
    AllowedOrigins,
    /// A month-to-month plan group marked as the default, for contracts nobody renews.
    MonthToMonthDefault,
    /// Every enabled webhook endpoint has answered an event (the test event will do) with 2xx.
    VerifiedWebhooks,
}

impl ReadinessItem {
    pub const ALL: [ReadinessItem; 7] = [
        ReadinessItem::Brand,
        ReadinessItem::SupportContacts,
        ReadinessItem::PaymentKeys,
        ReadinessItem::ProcessorWebhookSecret,
        ReadinessItem::AllowedOrigins,
        ReadinessItem::MonthToMonthDefault,
        ReadinessItem::VerifiedWebhooks,
    ];

    /// The stable name the API reports.
    pub fn code(self) -> &'static str {
        match self {
            ReadinessItem::Brand => "brand",
            ReadinessItem::SupportContacts => "support_contacts",
            ReadinessItem::PaymentKeys => "payment_keys",
            ReadinessItem::ProcessorWebhookSecret => "processor_webhook_secret",
            ReadinessItem::AllowedOrigins => "allowed_origins",
            ReadinessItem::MonthToMonthDefault => "month_to_month_default",
            ReadinessItem::VerifiedWebhooks => "verified_webhooks",
        }
    }

    /// What the item asks for, in the dashboard's words.
    pub fn label(self) -> &'static str {
        match self {
            ReadinessItem::Brand => "Brand: a colour and a logo",
            ReadinessItem::SupportContacts => "Support contacts: an e-mail address and a phone number",
            ReadinessItem::PaymentKeys => "Payment keys: the card processor's publishable and secret keys (set by the operator)",
            ReadinessItem::ProcessorWebhookSecret => "Card processor webhooks: the signing secret of the endpoint registered at the processor (set by the operator, below)",
            ReadinessItem::AllowedOrigins => "Allowed origins: at least one site that embeds the flows",
            ReadinessItem::MonthToMonthDefault => "Plan groups: a month-to-month group marked as the default",
            ReadinessItem::VerifiedWebhooks => "Webhooks: every enabled endpoint has answered an event with 2xx (send it the test event)",
        }
    }
}

/// What readiness is decided from, read from the app's settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadinessFacts {
    pub has_color: bool,
    pub has_logo: bool,
    pub has_support_email: bool,
    pub has_support_phone: bool,
    pub has_payment_keys: bool,
    pub has_processor_webhook_secret: bool,
    pub allowed_origins: usize,
    pub has_month_to_month_default: bool,
    /// Enabled endpoints that never answered an event with 2xx.
    pub unverified_webhook_endpoints: usize,
}

/// What a live app still lacks, in the checklist's order (empty: ready).
pub fn missing_for_live(f: &ReadinessFacts) -> Vec<ReadinessItem> {
    ReadinessItem::ALL
        .into_iter()
        .filter(|item| match item {
            ReadinessItem::Brand => !(f.has_color && f.has_logo),
            ReadinessItem::SupportContacts => !(f.has_support_email && f.has_support_phone),
            ReadinessItem::PaymentKeys => !f.has_payment_keys,
            ReadinessItem::ProcessorWebhookSecret => !f.has_processor_webhook_secret,
            ReadinessItem::AllowedOrigins => f.allowed_origins == 0,
            ReadinessItem::MonthToMonthDefault => !f.has_month_to_month_default,
            ReadinessItem::VerifiedWebhooks => f.unverified_webhook_endpoints > 0,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_live_app_is_ready_only_with_every_item() {
        use super::{missing_for_live, ReadinessFacts, ReadinessItem as I};
        let ready = ReadinessFacts {
            has_color: true,
            has_logo: true,
            has_support_email: true,
            has_support_phone: true,
            has_payment_keys: true,
            has_processor_webhook_secret: true,
            allowed_origins: 1,
            has_month_to_month_default: true,
            unverified_webhook_endpoints: 0,
        };
        assert!(missing_for_live(&ready).is_empty());
        assert_eq!(
            missing_for_live(&ReadinessFacts::default()),
            [
                I::Brand,
                I::SupportContacts,
                I::PaymentKeys,
                I::ProcessorWebhookSecret,
                I::AllowedOrigins,
                I::MonthToMonthDefault
            ]
        );
        let no_logo = ReadinessFacts {
            has_logo: false,
            ..ready
        };
        assert_eq!(missing_for_live(&no_logo), [I::Brand]);
        let phone_only = ReadinessFacts {
            has_support_email: false,
            ..ready
        };
        assert_eq!(missing_for_live(&phone_only), [I::SupportContacts]);
        let unverified = ReadinessFacts {
            unverified_webhook_endpoints: 1,
            ..ready
        };
        assert_eq!(missing_for_live(&unverified), [I::VerifiedWebhooks]);
        let no_processor_webhooks = ReadinessFacts {
            has_processor_webhook_secret: false,
            ..ready
        };
        assert_eq!(
            missing_for_live(&no_processor_webhooks),
            [I::ProcessorWebhookSecret]
        );
    }

    use super::*;

    #[test]
    fn webhook_signing_secrets_look_like_the_processors() {
        assert_eq!(
            check_webhook_secret("whsec_standInSigningSecret0123"),
            Ok(())
        );
        assert_eq!(check_webhook_secret("whsec_Ab3+/x=_0123456789abcd"), Ok(()));
        for bad in [
            "",
            "whsec_",
            "whsec_short",
            "sk_live_abcdefghijklmnopqrst",
            "whsec_has space in it here",
            "whsec_<script>alert(1)</script>",
        ] {
            // Refused, without repeating what was typed.
            let why = check_webhook_secret(bad).unwrap_err();
            assert!(bad.len() <= "whsec_".len() || !why.contains(bad), "{why}");
        }
    }

    #[test]
    fn slugs_are_lowercase_words_joined_by_dashes() {
        assert_eq!(slug("Sunny Solar, Inc.", "x1"), "sunny-solar-inc-x1");
        assert_eq!(slug("  ", "x1"), "app-x1");
        assert_eq!(slug("Énergie Ça", "x1"), "nergie-a-x1");
        assert!(slug(&"a".repeat(200), "x1").len() <= 44);
    }

    #[test]
    fn payment_keys_must_be_a_matching_pair() {
        assert!(check_payment_keys("pk_live_abcdefgh12", "sk_live_ZYXWVUTS98").is_ok());
        assert!(check_payment_keys("pk_test_abcdefgh12", "rk_test_ZYXWVUTS98").is_ok());
        assert!(check_payment_keys("pk_live_abcdefgh12", "sk_test_ZYXWVUTS98").is_err());
        assert!(check_payment_keys("sk_live_abcdefgh12", "pk_live_ZYXWVUTS98").is_err());
        assert!(check_payment_keys("pk_live_abcdefgh12", "sk_live_short").is_err());
        assert!(check_payment_keys("pk_live_abcdefgh12", "sk_live_with space1").is_err());
        let err = check_payment_keys("pk_live_abcdefgh12", "xx_live_SECRETVALUE").unwrap_err();
        assert!(!err.contains("SECRETVALUE"));
    }

    #[test]
    fn brand_colours_are_checked_and_get_readable_text() {
        assert_eq!(brand_color("#1b4d3e"), Some("#1b4d3e"));
        assert_eq!(brand_color("#fc0"), Some("#fc0"));
        assert_eq!(brand_color("red;background:url(x)"), None);
        assert_eq!(brand_color("#12345"), None);
        assert_eq!(brand_color("#ggg"), None);
        assert_eq!(text_on("#1b4d3e"), "#ffffff");
        assert_eq!(text_on("#ffcc00"), "#000000");
        assert_eq!(text_on("#fc0"), "#000000");
        assert_eq!(text_on("#000"), "#ffffff");
    }

    #[test]
    fn origins_are_scheme_and_host_only() {
        let ok = |raw: &str| Origin::parse(raw).map(|o| o.as_str().to_owned());
        assert_eq!(
            ok("https://Partner.Example"),
            Ok("https://partner.example".to_owned())
        );
        assert_eq!(
            ok("https://partner.example/"),
            Ok("https://partner.example".to_owned())
        );
        assert_eq!(
            ok("https://partner.example:443"),
            Ok("https://partner.example".to_owned())
        );
        assert_eq!(
            ok("http://127.0.0.1:5173"),
            Ok("http://127.0.0.1:5173".to_owned())
        );
        for bad in [
            "partner.example",
            "ftp://partner.example",
            "javascript:alert(1)",
            "https://partner.example/embed",
            "https://partner.example?x=1",
            "https://partner.example#top",
            "https://user:pw@partner.example",
            "file:///etc/passwd",
            "*",
            "",
        ] {
            assert!(Origin::parse(bad).is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn registered_origins_are_unique_and_few() {
        let o = |raw: &str| Origin::parse(raw).unwrap();
        let list = allowed_origins(vec![
            o("https://a.example"),
            o("https://b.example"),
            o("https://A.example/"),
        ])
        .unwrap();
        assert_eq!(list, vec![o("https://a.example"), o("https://b.example")]);
        let many = (0..=MAX_ORIGINS)
            .map(|i| o(&format!("https://{i}.example")))
            .collect();
        assert!(allowed_origins(many).is_err());
        assert_eq!(allowed_origins(vec![]), Ok(vec![]));
    }

    #[test]
    fn a_logo_is_a_png_of_a_sensible_size() {
        let png = |w: u32, h: u32| {
            let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
            b.extend_from_slice(&w.to_be_bytes());
            b.extend_from_slice(&h.to_be_bytes());
            b.extend_from_slice(&[8, 6, 0, 0, 0]);
            b
        };
        assert_eq!(logo_dimensions(&png(200, 50)), Ok((200, 50)));
        assert_eq!(logo_dimensions(&png(16, 2000)), Ok((16, 2000)));
        for bad in [png(15, 50), png(200, 2001), png(0, 0)] {
            assert_eq!(logo_dimensions(&bad).unwrap_err().param, "logo");
        }
        let too_big = [png(200, 50), vec![0; LOGO_MAX_BYTES]].concat();
        assert!(logo_dimensions(&too_big)
            .unwrap_err()
            .message
            .contains("512 KB"));
        assert!(logo_dimensions(b"<svg onload=alert(1)>")
            .unwrap_err()
            .message
            .contains("PNG"));
        assert!(logo_dimensions(b"").is_err());
        assert!(logo_dimensions(b"\xff\xd8\xff\xe0 a jpeg").is_err());
    }
}

//! Embedded flows: their scopes, and which account endpoints each scope may call
//! (everything else is `scope_denied`), who may frame them and whom they tell when they close.

use app::api::Environment;

use super::FieldError;

/// The `scope` of a flow-login request, from its body or its query: required, every one given
/// one of `FlowScope::ALL`, and the same scope when both are given (a bad one is never
/// ignored because the other is good).
pub fn parse_scope(body: Option<&str>, query: Option<&str>) -> Result<FlowScope, FieldError> {
    let parse = |raw: Option<&str>| {
        raw.map(|raw| {
            FlowScope::parse(raw).ok_or_else(|| {
                FieldError::invalid(
                    "scope",
                    "scope must be one of enrollment, update-payment-method, billing, documents, \
                     renewal",
                )
            })
        })
        .transpose()
    };
    match (parse(body)?, parse(query)?) {
        (Some(body), Some(query)) if body != query => Err(FieldError::invalid(
            "scope",
            "the body and the query name different scopes: give one",
        )),
        (body, query) => body.or(query).ok_or_else(|| FieldError::missing("scope")),
    }
}

/// What a flow link lets its page do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FlowScope {
    Enrollment,
    UpdatePaymentMethod,
    Billing,
    Documents,
    Renewal,
}

impl FlowScope {
    pub const ALL: [FlowScope; 5] = [
        FlowScope::Enrollment,
        FlowScope::UpdatePaymentMethod,
        FlowScope::Billing,
        FlowScope::Documents,
        FlowScope::Renewal,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FlowScope::Enrollment => "enrollment",
            FlowScope::UpdatePaymentMethod => "update-payment-method",
            FlowScope::Billing => "billing",
            FlowScope::Documents => "documents",
            FlowScope::Renewal => "renewal",
        }
    }

    pub fn parse(s: &str) -> Option<FlowScope> {
        Self::ALL
            .into_iter()
            .find(|scope| scope.as_str() == s.trim())
    }

    /// Whether a flow session of this scope may call `method` on `route` (an account route as
    /// matched, e.g. `/v1/account/locations/{location_uuid}/documents`).
    pub fn allows(self, method: &str, route: &str) -> bool {
        let path = route.strip_prefix("/v1/account").unwrap_or(route);
        let path = path.trim_end_matches('/');
        let get = method == "GET";
        if path.is_empty() {
            return get;
        }
        // Every flow records what happens in it (`domain::flow_events`).
        if path == "/flow-events" {
            return method == "POST";
        }
        let documents = path.starts_with("/locations/") && path.ends_with("/documents") && get;
        match self {
            FlowScope::Enrollment => {
                path.starts_with("/enroll/")
                    || path == "/billing/payment-session"
                    || path == "/billing/ensure-payment-method-added"
                    || path == "/billing/address"
                    || path == "/deposit"
                    || path == "/deposit/pay"
                    || documents
            }
            FlowScope::UpdatePaymentMethod => {
                path == "/billing/payment-session"
                    || path == "/billing/ensure-payment-method-added"
                    || (path == "/billing/payment-method" && get)
            }
            FlowScope::Billing => {
                path.starts_with("/billing/invoices")
                    || (path == "/billing/payment-method" && get)
                    || path == "/billing/payment-plan"
                    || (path == "/billing/disconnections" && get)
            }
            FlowScope::Documents => {
                documents
                    || (path.starts_with("/locations/") && path.ends_with("/all-documents") && get)
            }
            FlowScope::Renewal => {
                (path.starts_with("/locations/") && path.contains("/renewal-plans/")) || documents
            }
        }
    }
}

/// `Content-Security-Policy` of a flow page: only the app's registered origins may frame it;
/// a sandbox app with none registered may be framed anywhere (for trying it out), a live app
/// with none only by this service's own pages.
pub fn frame_ancestors(environment: Environment, allowed_origins: &[String]) -> String {
    if allowed_origins.is_empty() {
        return match environment {
            Environment::Sandbox => "frame-ancestors *".to_owned(),
            Environment::Live => "frame-ancestors 'self'".to_owned(),
        };
    }
    format!("frame-ancestors 'self' {}", allowed_origins.join(" "))
}

/// What a live app's flow page may load and call besides its own origin: the card
/// processor's script (run, and framing its card component) and its API (called by that
/// script), and nothing else. Inline scripts stay allowed: the page's own loader and
/// hydration data are inline. Sandbox pages are not restricted beyond who frames them (their
/// card form is this service's own). `processor`: the script's and the API's origins, when
/// this deployment has a card processor.
pub fn live_page_sources(processor: Option<(&str, &str)>) -> String {
    let base = "script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval'";
    match processor {
        None => format!("{base}; frame-src 'none'; connect-src 'self'"),
        Some((script, api)) => {
            let connect = if script == api {
                script.to_owned()
            } else {
                format!("{api} {script}")
            };
            format!("{base} {script}; frame-src {script}; connect-src 'self' {connect}")
        }
    }
}

/// Where a flow posts `service-flow-close`: each registered origin (a browser delivers the
/// message only to the one that frames the flow, so every registered host can be told), or `*`
/// in sandbox when none is registered; a live app without one is not told (its webview bridge
/// still is).
pub fn post_message_origins(environment: Environment, allowed_origins: &[String]) -> Vec<String> {
    match (allowed_origins.is_empty(), environment) {
        (false, _) => allowed_origins.to_vec(),
        (true, Environment::Sandbox) => vec!["*".to_owned()],
        (true, Environment::Live) => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use FlowScope::*;

    #[test]
    fn live_pages_may_use_the_card_processors_origins_only() {
        assert_eq!(
            live_page_sources(Some((
                "https://js.processor.test",
                "https://api.processor.test"
            ))),
            "script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval' https://js.processor.test; \
             frame-src https://js.processor.test; \
             connect-src 'self' https://api.processor.test https://js.processor.test"
        );
        assert_eq!(
            live_page_sources(Some(("http://127.0.0.1:8420", "http://127.0.0.1:8420"))),
            "script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval' http://127.0.0.1:8420; \
             frame-src http://127.0.0.1:8420; connect-src 'self' http://127.0.0.1:8420"
        );
        assert_eq!(
            live_page_sources(None),
            "script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval'; frame-src 'none'; \
             connect-src 'self'"
        );
    }

    #[test]
    fn a_flow_login_scope_is_required_and_must_be_known() {
        let missing = parse_scope(None, None).unwrap_err();
        assert_eq!(missing.kind, crate::domain::FieldErrorKind::Missing);
        assert_eq!(missing.message, "scope is required");
        let unknown = parse_scope(Some("admin"), None).unwrap_err();
        assert_eq!(unknown.kind, crate::domain::FieldErrorKind::Invalid);
        assert_eq!(unknown.param, "scope");
        assert_eq!(parse_scope(Some(" billing "), None), Ok(Billing));
        assert_eq!(parse_scope(None, Some("billing")), Ok(Billing));
        assert_eq!(parse_scope(Some("billing"), Some(" billing")), Ok(Billing));
        // A bad scope in one place is refused even when the other is good, as are two that
        // differ.
        for (body, query) in [
            ("billing", "admin"),
            ("admin", "billing"),
            ("billing", "renewal"),
        ] {
            let refused = parse_scope(Some(body), Some(query)).unwrap_err();
            assert_eq!(
                (refused.kind, refused.param.as_str()),
                (crate::domain::FieldErrorKind::Invalid, "scope")
            );
        }
        // The message lists every scope there is.
        for scope in FlowScope::ALL {
            assert!(unknown.message.contains(scope.as_str()), "{scope:?}");
        }
    }

    #[test]
    fn framing_follows_the_registered_origins() {
        let origins = vec![
            "https://partner.example".to_owned(),
            "https://app.partner.example".to_owned(),
        ];
        assert_eq!(
            frame_ancestors(Environment::Live, &origins),
            "frame-ancestors 'self' https://partner.example https://app.partner.example"
        );
        assert_eq!(
            frame_ancestors(Environment::Sandbox, &[]),
            "frame-ancestors *"
        );
        assert_eq!(
            frame_ancestors(Environment::Live, &[]),
            "frame-ancestors 'self'"
        );
        assert_eq!(post_message_origins(Environment::Live, &origins), origins);
        assert_eq!(post_message_origins(Environment::Sandbox, &[]), ["*"]);
        assert!(post_message_origins(Environment::Live, &[]).is_empty());
    }

    #[test]
    fn scopes_round_trip() {
        for s in FlowScope::ALL {
            assert_eq!(FlowScope::parse(s.as_str()), Some(s));
        }
        assert_eq!(FlowScope::parse("admin"), None);
    }

    #[test]
    fn every_scope_reads_the_account_and_nothing_writes_it() {
        for s in FlowScope::ALL {
            assert!(s.allows("GET", "/v1/account"), "{s:?}");
            assert!(!s.allows("PATCH", "/v1/account"), "{s:?}");
            assert!(
                !s.allows("POST", "/v1/account/sandbox/advance-clock"),
                "{s:?}"
            );
        }
    }

    #[test]
    fn each_scope_reaches_what_its_flow_needs_and_no_more() {
        let docs = "/v1/account/locations/{location_uuid}/documents";
        let all_docs = "/v1/account/locations/{location_uuid}/all-documents";
        let cases: &[(FlowScope, &str, &str, bool)] = &[
            (Enrollment, "PATCH", "/v1/account/enroll/identity", true),
            (Enrollment, "POST", "/v1/account/enroll/plans/accept", true),
            (
                Enrollment,
                "POST",
                "/v1/account/billing/payment-session",
                true,
            ),
            (Enrollment, "PUT", "/v1/account/billing/address", true),
            (Enrollment, "GET", docs, true),
            (Enrollment, "POST", "/v1/account/deposit/pay", true),
            (Billing, "POST", "/v1/account/deposit/pay", false),
            (Enrollment, "GET", "/v1/account/billing/invoices", false),
            (
                Enrollment,
                "GET",
                "/v1/account/billing/payment-method",
                false,
            ),
            (
                UpdatePaymentMethod,
                "POST",
                "/v1/account/billing/ensure-payment-method-added",
                true,
            ),
            (
                UpdatePaymentMethod,
                "GET",
                "/v1/account/billing/payment-method",
                true,
            ),
            (
                UpdatePaymentMethod,
                "POST",
                "/v1/account/enroll/credit-check",
                false,
            ),
            (
                Billing,
                "GET",
                "/v1/account/billing/invoices/{invoice_number}/pdf",
                true,
            ),
            (
                Billing,
                "POST",
                "/v1/account/billing/invoices/{invoice_number}/pay",
                true,
            ),
            (
                Billing,
                "POST",
                "/v1/account/billing/payment-session",
                false,
            ),
            (Documents, "GET", all_docs, true),
            (Documents, "GET", docs, true),
            (Documents, "POST", "/v1/account/enroll/finalize", false),
            (
                Renewal,
                "POST",
                "/v1/account/locations/{location_uuid}/renewal-plans/accept",
                true,
            ),
            (Renewal, "GET", docs, true),
            (Renewal, "GET", all_docs, false),
            (
                Renewal,
                "POST",
                "/v1/account/locations/{location_uuid}/cancel-service",
                false,
            ),
        ];
        for scope in FlowScope::ALL {
            assert!(scope.allows("POST", "/v1/account/flow-events"));
            assert!(!scope.allows("GET", "/v1/account/flow-events"));
            // The plan read belongs to no flow (docs/api-conventions.md lists it under none).
            assert!(!scope.allows("GET", "/v1/account/locations/{location_uuid}/plan"));
        }
        for (scope, method, route, allowed) in cases {
            assert_eq!(
                scope.allows(method, route),
                *allowed,
                "{scope:?} {method} {route}"
            );
        }
    }
}

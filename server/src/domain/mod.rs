//! The rules of the product, free of HTTP and SQL: plain types and pure functions, where most of
//! the unit tests live. Input from the wire is parsed here into values that are valid once they
//! exist (`Email`, `UsPhone`, ...); a value that cannot be parsed yields a `FieldError` naming the
//! offending parameter.

pub mod account;
pub mod address;
pub mod apps;
pub mod billing;
pub mod cards;
pub mod credit;
pub mod documents;
pub mod enrollment;
pub mod events;
pub mod flows;
pub mod jobs;
pub mod links;
pub mod market;
pub mod pricing;
pub mod status;
pub mod tokens;
pub mod usage;
pub mod webhooks;

/// Why a request field was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub param: String,
    pub kind: FieldErrorKind,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldErrorKind {
    Missing,
    Invalid,
}

impl FieldError {
    pub fn missing(param: impl Into<String>) -> Self {
        let param = param.into();
        FieldError {
            message: format!("{param} is required"),
            param,
            kind: FieldErrorKind::Missing,
        }
    }

    pub fn invalid(param: impl Into<String>, message: impl Into<String>) -> Self {
        FieldError {
            param: param.into(),
            kind: FieldErrorKind::Invalid,
            message: message.into(),
        }
    }
}

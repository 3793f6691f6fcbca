//! The rules of the product, free of HTTP and SQL: plain types and pure functions, where most of
//! the unit tests live. Input from the wire is parsed here into values that are valid once they
//! exist (`Email`, `UsPhone`, ...); a value that cannot be parsed yields a `FieldError` naming the
//! offending parameter.

/// A value stored as text (a status, a kind): its variants and their stored names, written
/// once. The enum converts to and from its name (`as_str`, `parse`, `ALL`) and is read from and
/// written to either database as that name, so rows carry the enum, not a string; a stored
/// name the enum does not know fails the read instead of passing as some default.
macro_rules! text_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $($(#[$vmeta:meta])* $variant:ident = $text:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }

            pub fn parse(s: &str) -> Option<Self> {
                match s {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl<DB: sqlx::Database> sqlx::Type<DB> for $name
        where
            str: sqlx::Type<DB>,
        {
            fn type_info() -> DB::TypeInfo {
                <str as sqlx::Type<DB>>::type_info()
            }

            fn compatible(ty: &DB::TypeInfo) -> bool {
                <str as sqlx::Type<DB>>::compatible(ty)
            }
        }

        impl<'q, DB: sqlx::Database> sqlx::Encode<'q, DB> for $name
        where
            &'q str: sqlx::Encode<'q, DB>,
        {
            fn encode_by_ref(
                &self,
                buf: &mut <DB as sqlx::Database>::ArgumentBuffer<'q>,
            ) -> Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
                <&str as sqlx::Encode<'q, DB>>::encode(self.as_str(), buf)
            }
        }

        impl<'r, DB: sqlx::Database> sqlx::Decode<'r, DB> for $name
        where
            &'r str: sqlx::Decode<'r, DB>,
        {
            fn decode(
                value: <DB as sqlx::Database>::ValueRef<'r>,
            ) -> Result<Self, sqlx::error::BoxDynError> {
                let text = <&str as sqlx::Decode<'r, DB>>::decode(value)?;
                Self::parse(text)
                    .ok_or_else(|| format!("unknown {} {text:?}", stringify!($name)).into())
            }
        }
    };
}
pub(crate) use text_enum;

pub mod account;
pub mod address;
pub mod app_requests;
pub mod apps;
pub mod billing;
pub mod cards;
pub mod collections;
pub mod corrections;
pub mod credit;
pub mod deposits;
pub mod disconnection;
pub mod documents;
pub mod emails;
pub mod enrollment;
pub mod estimate;
pub mod events;
pub mod flow_events;
pub mod flows;
pub mod hosted;
pub mod jobs;
pub mod links;
pub mod market;
pub mod plan_groups;
pub mod pricing;
pub mod processor_events;
pub mod renewal;
pub mod status;
pub mod tokens;
pub mod usage;
pub mod users;
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

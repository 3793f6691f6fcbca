//! Extractors that turn requests into typed values and every rejection into an `ApiError`, so
//! that axum's plain-text rejections never reach a client.

use axum::{
    body::Bytes,
    extract::{rejection::PathRejection, FromRequest, FromRequestParts, Request},
    http::{header::CONTENT_TYPE, request::Parts},
};
use serde::de::DeserializeOwned;

use super::error::{ApiError, ErrorCode};

/// A JSON body. An empty body reads as `{}` (so that all-optional bodies may be omitted), as do
/// blanks not declared as JSON; any other must be declared as `application/json` (415
/// otherwise, never parsed) and be a JSON object.
pub struct Json<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let declared_json = req
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(is_json_content_type);
        let bytes = Bytes::from_request(req, state).await.map_err(|rejection| {
            if rejection.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::new(ErrorCode::BodyTooLarge, "The request body is too large")
            } else {
                ApiError::new(
                    ErrorCode::BodyMalformed,
                    "The request body could not be read",
                )
            }
        })?;
        // Blanks declared as JSON are not JSON: only a body left out, or blanks sent as no
        // particular type, stand for no body.
        if bytes.is_empty()
            || (declared_json != Some(true) && bytes.iter().all(u8::is_ascii_whitespace))
        {
            return parse_json(b"{}").map(Json);
        }
        if declared_json != Some(true) {
            return Err(ApiError::new(
                ErrorCode::ContentTypeUnsupported,
                "Send the body as JSON with Content-Type: application/json",
            ));
        }
        parse_json(&bytes).map(Json)
    }
}

/// `application/json`, with no parameter but an optional `charset=utf-8`: the one encoding the
/// API reads. Anything else is refused before the body is parsed.
fn is_json_content_type(value: &str) -> bool {
    let mut parts = value.split(';').map(str::trim);
    let mime = parts.next().unwrap_or("");
    mime.eq_ignore_ascii_case("application/json")
        && parts.all(|param| {
            param.split_once('=').is_some_and(|(name, value)| {
                name.trim().eq_ignore_ascii_case("charset")
                    && value.trim().trim_matches('"').eq_ignore_ascii_case("utf-8")
            })
        })
}

/// Parses JSON into `T`, naming the offending field in the error.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    // serde reads structs from arrays too; a request body is always an object.
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(ApiError::new(
            ErrorCode::BodyMalformed,
            "The request body must be a JSON object",
        ));
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        serde_error(&path, e.inner(), e.inner().classify())
    });
    let value = match value {
        Ok(value) => value,
        // JSON has one kind of number: `6.0` is the integer 6 where an integer is asked for.
        Err(refused) => return with_whole_numbers(bytes).ok_or(refused),
    };
    de.end().map_err(|_| {
        ApiError::new(
            ErrorCode::BodyMalformed,
            "The request body has content after the JSON value",
        )
    })?;
    Ok(value)
}

/// `bytes` read again with each whole number written with a fraction (`6.0`, `2e1`) taken as
/// the integer it is; `None` when it has none or is still refused.
fn with_whole_numbers<T: DeserializeOwned>(bytes: &[u8]) -> Option<T> {
    fn whole(value: &mut serde_json::Value) -> bool {
        match value {
            serde_json::Value::Number(n) if n.is_f64() => {
                let f = n.as_f64().unwrap_or(f64::NAN);
                // Within 2^53 every whole f64 is exactly an integer.
                let exact = f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0;
                if exact {
                    #[allow(clippy::cast_possible_truncation)]
                    let i = f as i64;
                    *n = i.into();
                }
                exact
            }
            serde_json::Value::Array(items) => items.iter_mut().fold(false, |a, v| whole(v) | a),
            serde_json::Value::Object(fields) => {
                fields.values_mut().fold(false, |a, v| whole(v) | a)
            }
            _ => false,
        }
    }
    let mut value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    if !whole(&mut value) {
        return None;
    }
    serde_json::from_value(value).ok()
}

fn serde_error(
    path: &str,
    err: &serde_json::Error,
    category: serde_json::error::Category,
) -> ApiError {
    use serde_json::error::Category;
    if !matches!(category, Category::Data) {
        return ApiError::new(
            ErrorCode::BodyMalformed,
            format!(
                "The request body is not valid JSON: {}",
                without_position(err)
            ),
        );
    }
    data_error(path, &without_position(err))
}

/// Turns a deserializer's data error at `path` into the API's parameter errors.
fn data_error(path: &str, message: &str) -> ApiError {
    let at_root = path.is_empty() || path == ".";
    if let Some(field) = missing_field(message) {
        let param = if at_root {
            field.to_owned()
        } else {
            format!("{path}.{field}")
        };
        return ApiError::new(ErrorCode::ParameterMissing, format!("{param} is required"))
            .with_param(param);
    }
    if at_root {
        return ApiError::new(
            ErrorCode::BodyMalformed,
            "The request body must be a JSON object",
        );
    }
    ApiError::new(
        ErrorCode::ParameterInvalid,
        format!("Invalid value for {path}: {message}"),
    )
    .with_param(path.to_owned())
}

fn without_position(err: &impl std::fmt::Display) -> String {
    let text = err.to_string();
    match text.rfind(" at line ") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}

fn missing_field(message: &str) -> Option<&str> {
    message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split('`').next())
}

/// Query parameters, with the offending parameter named on error.
pub struct Query<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        let query = parts.uri.query().unwrap_or("");
        let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
        serde_path_to_error::deserialize(de)
            .map(Query)
            .map_err(|e| {
                let path = e.path().to_string();
                data_error(&path, &e.inner().to_string())
            })
    }
}

/// Path parameters; one that does not parse (a malformed uuid) names no resource: 404.
#[derive(FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(ApiError))]
pub struct Path<T>(pub T);

impl From<PathRejection> for ApiError {
    fn from(_: PathRejection) -> Self {
        ApiError::not_found("resource")
    }
}

/// The client's address as a rate limit's key ("unknown" when the server was not told), for
/// the per-address limits of the pages people sign in to.
pub struct ClientIp(pub String);

impl<S: Send + Sync> FromRequestParts<S> for ClientIp {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(ClientIp(
            parts
                .extensions
                .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
                .map_or_else(|| "unknown".to_owned(), |c| c.0.ip().to_string()),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Body {
        email: String,
        #[serde(default)]
        nested: Option<Nested>,
        #[serde(default)]
        kind: Option<Kind>,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Nested {
        zip: String,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Kind {
        Switch,
    }

    fn err(json: &str) -> (ErrorCode, Option<String>) {
        let e = parse_json::<Body>(json.as_bytes()).unwrap_err();
        (e.code(), e.param().map(str::to_owned))
    }

    #[test]
    fn json_errors_name_their_parameter() {
        assert_eq!(err("{"), (ErrorCode::BodyMalformed, None));
        assert_eq!(err("[]"), (ErrorCode::BodyMalformed, None));
        assert_eq!(
            err(r#"{"email": "a"} {}"#),
            (ErrorCode::BodyMalformed, None)
        );
        assert_eq!(
            err("{}"),
            (ErrorCode::ParameterMissing, Some("email".into()))
        );
        assert_eq!(
            err(r#"{"email": 5}"#),
            (ErrorCode::ParameterInvalid, Some("email".into()))
        );
        assert_eq!(
            err(r#"{"email": "a", "nested": {}}"#),
            (ErrorCode::ParameterMissing, Some("nested.zip".into()))
        );
        assert_eq!(
            err(r#"{"email": "a", "kind": "teleport"}"#),
            (ErrorCode::ParameterInvalid, Some("kind".into()))
        );
        assert!(parse_json::<Body>(br#"{"email": "a", "unknown": 1}"#).is_ok());
    }

    #[test]
    fn json_content_types() {
        assert!(is_json_content_type("application/json"));
        assert!(is_json_content_type("application/json; charset=utf-8"));
        assert!(is_json_content_type("Application/JSON;charset=\"UTF-8\""));
        assert!(!is_json_content_type(
            "application/json; charset=iso-8859-1"
        ));
        assert!(!is_json_content_type("application/json; boundary=x"));
        assert!(!is_json_content_type("application/json;"));
        assert!(!is_json_content_type("application/merge-patch+json"));
        assert!(!is_json_content_type("application/jsonx"));
        assert!(!is_json_content_type("text/plain"));
        assert!(!is_json_content_type("application/x-www-form-urlencoded"));
    }
}

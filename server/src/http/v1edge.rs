//! The edge of `/v1`: every answer under it (errors, panics and preflights included) carries
//! the CORS headers and `Api-Version`; other paths (pages, documents, health) pass untouched.
//!
//! The whole of `/v1` answers browsers the same way: `/v1/account/*` is called from browsers
//! with an AccountToken, and an error anywhere under `/v1` (an unknown route, a token sent to the
//! wrong group, a rate limit, a panic) must reach the page's code as our JSON rather than as an
//! opaque CORS failure. `/v1/app/*` is meant for partner backends, but answering it the same way
//! opens nothing: the API takes bearer tokens only, never cookies, so a page that can call it
//! already holds the AppToken.
//!
//! The rules are tower-http's `CorsLayer` of `cors_rules`, built once. A preflight (any
//! `OPTIONS`) is answered by that layer itself; on every other request the same layer would only
//! add three fixed headers and mirror the `Origin`, which this edge does directly on the answer,
//! without the layer's per-request header map (the unit tests hold the two to the same headers).

use std::{
    future::Future,
    pin::Pin,
    task::{ready, Context, Poll},
};

use axum::http::{header, HeaderName, HeaderValue, Method, Request, Response};
use pin_project_lite::pin_project;
use tower::{Layer, Service};
use tower_http::cors::{AllowOrigin, Cors, CorsLayer};

use super::API_VERSION;

/// Whether `path` is under `/v1`.
pub fn is_v1(path: &str) -> bool {
    path == "/v1" || path.starts_with("/v1/")
}

/// The CORS rules of `/v1`: any origin (mirrored), the API's methods and request headers, and
/// the response headers a page's code may read.
pub fn cors_rules() -> CorsLayer {
    CorsLayer::new()
        .allow_origin(AllowOrigin::mirror_request())
        .allow_methods([
            Method::GET,
            Method::POST,
            Method::PUT,
            Method::PATCH,
            Method::DELETE,
        ])
        .allow_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            HeaderName::from_static("idempotency-key"),
        ])
        .expose_headers([
            HeaderName::from_static("request-id"),
            HeaderName::from_static("api-version"),
            HeaderName::from_static("ratelimit"),
            HeaderName::from_static("ratelimit-policy"),
            HeaderName::from_static("retry-after"),
            header::WWW_AUTHENTICATE,
        ])
        .max_age(std::time::Duration::from_secs(600))
}

/// What `cors_rules` adds to an answer that is not a preflight, besides the mirrored origin.
const VARY: &str = "origin, access-control-request-method, access-control-request-headers";
const EXPOSE_HEADERS: &str =
    "request-id,api-version,ratelimit,ratelimit-policy,retry-after,www-authenticate";
const API_VERSION_HEADER: &str = "api-version";

/// The layer of the `/v1` edge; its rules are built once, when the layer is.
#[derive(Clone)]
pub struct V1EdgeLayer {
    rules: CorsLayer,
}

impl V1EdgeLayer {
    pub fn new() -> Self {
        V1EdgeLayer {
            rules: cors_rules(),
        }
    }
}

impl Default for V1EdgeLayer {
    fn default() -> Self {
        Self::new()
    }
}

impl<S: Clone> Layer<S> for V1EdgeLayer {
    type Service = V1Edge<S>;

    fn layer(&self, inner: S) -> V1Edge<S> {
        V1Edge {
            preflight: self.rules.layer(inner.clone()),
            inner,
        }
    }
}

/// See the module's documentation.
#[derive(Clone)]
pub struct V1Edge<S> {
    inner: S,
    /// The same service behind the CORS rules, for preflights (which it answers without it).
    preflight: Cors<S>,
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for V1Edge<S>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>>,
    ResBody: Default,
{
    type Response = Response<ResBody>;
    type Error = S::Error;
    type Future = V1Future<S::Future, <Cors<S> as Service<Request<ReqBody>>>::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        // A request may go to either copy of the service.
        ready!(self.inner.poll_ready(cx))?;
        self.preflight.poll_ready(cx)
    }

    fn call(&mut self, req: Request<ReqBody>) -> Self::Future {
        if !is_v1(req.uri().path()) {
            return V1Future::Other {
                future: self.inner.call(req),
            };
        }
        if req.method() == Method::OPTIONS {
            return V1Future::Preflight {
                future: self.preflight.call(req),
            };
        }
        let origin = req.headers().get(header::ORIGIN).cloned();
        V1Future::Api {
            future: self.inner.call(req),
            origin,
        }
    }
}

pin_project! {
    /// The answer of `V1Edge`.
    #[project = V1FutureProj]
    pub enum V1Future<F, P> {
        Other { #[pin] future: F },
        Preflight { #[pin] future: P },
        Api { #[pin] future: F, origin: Option<HeaderValue> },
    }
}

impl<F, P, B, E> Future for V1Future<F, P>
where
    F: Future<Output = Result<Response<B>, E>>,
    P: Future<Output = Result<Response<B>, E>>,
{
    type Output = Result<Response<B>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut response = match self.project() {
            V1FutureProj::Other { future } => return future.poll(cx),
            V1FutureProj::Preflight { future } => ready!(future.poll(cx))?,
            V1FutureProj::Api { future, origin } => {
                let mut response = ready!(future.poll(cx))?;
                let headers = response.headers_mut();
                // As the CORS layer does: `Vary` is added to the answer's own, the others replace.
                headers.append(header::VARY, HeaderValue::from_static(VARY));
                headers.insert(
                    header::ACCESS_CONTROL_EXPOSE_HEADERS,
                    HeaderValue::from_static(EXPOSE_HEADERS),
                );
                if let Some(origin) = origin.take() {
                    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
                }
                response
            }
        };
        response.headers_mut().insert(
            HeaderName::from_static(API_VERSION_HEADER),
            HeaderValue::from_static(API_VERSION),
        );
        Poll::Ready(Ok(response))
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use axum::body::Body;
    use tower::{service_fn, ServiceExt};

    use super::*;

    /// An answer that already carries headers the edge also sets.
    async fn answer(_: Request<Body>) -> Result<Response<Body>, Infallible> {
        let mut response = Response::new(Body::from("{}"));
        response
            .headers_mut()
            .insert(header::VARY, HeaderValue::from_static("accept-encoding"));
        response.headers_mut().insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static("x-own"),
        );
        Ok(response)
    }

    /// The headers of an answer, in a comparable form (every value of every name, in order).
    fn headers_of(response: &Response<Body>) -> Vec<(String, String)> {
        let mut all: Vec<(String, String)> = response
            .headers()
            .keys()
            .flat_map(|name| {
                response.headers().get_all(name).iter().map(move |value| {
                    (
                        name.as_str().to_owned(),
                        value.to_str().unwrap_or_default().to_owned(),
                    )
                })
            })
            .collect();
        all.sort();
        all
    }

    fn requests() -> Vec<Request<Body>> {
        let build = |method: Method, path: &str, headers: &[(&str, &str)]| {
            let mut builder = Request::builder().method(method).uri(path);
            for (name, value) in headers {
                builder = builder.header(*name, *value);
            }
            builder.body(Body::empty()).unwrap_or_default()
        };
        let origin = ("origin", "https://partner.example");
        vec![
            build(Method::GET, "/v1/account", &[]),
            build(Method::GET, "/v1/account", &[origin]),
            build(Method::POST, "/v1/app/accounts", &[origin]),
            build(Method::DELETE, "/v1", &[origin]),
            build(
                Method::OPTIONS,
                "/v1/account",
                &[
                    origin,
                    ("access-control-request-method", "POST"),
                    (
                        "access-control-request-headers",
                        "authorization,idempotency-key",
                    ),
                ],
            ),
            build(Method::OPTIONS, "/v1/app/accounts", &[]),
            build(Method::GET, "/v1x", &[origin]),
            build(Method::GET, "/portal", &[origin]),
            build(Method::OPTIONS, "/bench/bare", &[origin]),
        ]
    }

    /// The edge answers exactly as tower-http's layer of the same rules with `Api-Version`
    /// added, on `/v1`, and leaves other paths alone.
    #[tokio::test]
    async fn the_edge_answers_as_the_cors_layer_of_its_rules() {
        for request in requests() {
            let path = request.uri().path().to_owned();
            let method = request.method().clone();
            let copy = {
                let mut builder = Request::builder()
                    .method(request.method().clone())
                    .uri(request.uri().clone());
                for (name, value) in request.headers() {
                    builder = builder.header(name, value);
                }
                builder.body(Body::empty()).unwrap_or_default()
            };
            let edge = V1EdgeLayer::new()
                .layer(service_fn(answer))
                .oneshot(request)
                .await
                .unwrap_or_else(|e| match e {});
            let expected = if is_v1(&path) {
                let mut response = cors_rules()
                    .layer(service_fn(answer))
                    .oneshot(copy)
                    .await
                    .unwrap_or_else(|e| match e {});
                response.headers_mut().insert(
                    HeaderName::from_static(API_VERSION_HEADER),
                    HeaderValue::from_static(API_VERSION),
                );
                response
            } else {
                answer(copy).await.unwrap_or_else(|e| match e {})
            };
            assert_eq!(edge.status(), expected.status(), "{method} {path}");
            assert_eq!(headers_of(&edge), headers_of(&expected), "{method} {path}");
        }
    }
}

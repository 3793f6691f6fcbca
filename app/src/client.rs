//! The typed v1 client the flows use in the browser: the same endpoints and shapes partners
//! use, authenticated with the flow session's bearer token (never a cookie).

use crate::api::{Account, ErrorEnvelope};

/// A failure as the flow shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientError {
    pub code: String,
    pub message: String,
}

impl ClientError {
    fn network(e: impl std::fmt::Display) -> Self {
        ClientError {
            code: "network_error".to_owned(),
            message: format!(
                "We could not reach the server ({e}). Check your connection and try again."
            ),
        }
    }
}

/// Calls `/v1/account/*` with a flow session token.
#[derive(Debug, Clone)]
pub struct ApiClient {
    token: String,
}

impl ApiClient {
    pub fn new(token: String) -> Self {
        ApiClient { token }
    }

    #[cfg(feature = "hydrate")]
    async fn get<T: serde::de::DeserializeOwned>(&self, path: &str) -> Result<T, ClientError> {
        let response = gloo_net::http::Request::get(path)
            .header("Authorization", &format!("Bearer {}", self.token))
            .send()
            .await
            .map_err(ClientError::network)?;
        if response.ok() {
            return response.json::<T>().await.map_err(ClientError::network);
        }
        match response.json::<ErrorEnvelope>().await {
            Ok(e) => Err(ClientError {
                code: e.error.code,
                message: e.error.message,
            }),
            Err(e) => Err(ClientError::network(e)),
        }
    }

    #[cfg(not(feature = "hydrate"))]
    async fn get<T>(&self, _path: &str) -> Result<T, ClientError> {
        let _ = (&self.token, std::marker::PhantomData::<ErrorEnvelope>);
        Err(ClientError::network("the client runs in the browser only"))
    }

    /// `GET /v1/account`.
    pub async fn account(&self) -> Result<Account, ClientError> {
        self.get("/v1/account").await
    }
}

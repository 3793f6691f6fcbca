//! `Idempotency-Key`: replay, reuse with another body, and a key still in flight.

use reqwest::{Method, StatusCode};
use serde_json::json;

both_engines! {
    async fn the_same_key_replays_the_first_response(app) {
        let body = json!({"email": "a@example.com", "first_name": "Ana", "last_name": "Díaz"});
        let key = [("idempotency-key", "create-ana-1")];
        let first = app.send(Method::POST, "/v1/app/accounts", Some(&app.app_token), Some(&body), &key).await;
        assert_eq!(first.status, StatusCode::CREATED);
        let again = app.send(Method::POST, "/v1/app/accounts", Some(&app.app_token), Some(&body), &key).await;
        assert_eq!(again.status, StatusCode::CREATED);
        assert_eq!(again.body, first.body);
        assert_eq!(again.header("idempotent-replayed"), "true");
        let list = app.get("/v1/app/accounts", &app.app_token).await;
        assert_eq!(list.body["data"].as_array().unwrap().len(), 1);

        // The same key with another body is refused and creates nothing.
        let other = json!({"email": "b@example.com", "first_name": "Bea", "last_name": "Díaz"});
        let r = app.send(Method::POST, "/v1/app/accounts", Some(&app.app_token), Some(&other), &key).await;
        assert_eq!((r.status, r.code()), (StatusCode::UNPROCESSABLE_ENTITY, "idempotency_key_reused"));
        let list = app.get("/v1/app/accounts", &app.app_token).await;
        assert_eq!(list.body["data"].as_array().unwrap().len(), 1);

        // Keys belong to their app: another app may use the same one.
        let (_, other_token) = app.other_app().await;
        let r = app.send(Method::POST, "/v1/app/accounts", Some(&other_token), Some(&body), &key).await;
        assert_eq!(r.status, StatusCode::CREATED);
        assert_ne!(r.body["uuid"], first.body["uuid"]);

        // Without a key, each POST is its own.
        let a = app.post("/v1/app/accounts", &app.app_token, &body).await;
        let b = app.post("/v1/app/accounts", &app.app_token, &body).await;
        assert_ne!(a.body["uuid"], b.body["uuid"]);
    }

    async fn a_key_still_in_flight_is_409(app) {
        let body = json!({"email": "a@example.com", "first_name": "Ana", "last_name": "Díaz"});
        let bytes = serde_json::to_vec(&body).unwrap();
        // Another request holds the key (its claim is written, its response not yet).
        let hash = {
            use sha2::{Digest, Sha256};
            let mut h = Sha256::new();
            h.update(b"POST\n/v1/app/accounts\n");
            h.update(&bytes);
            format!("{:x}", h.finalize())
        };
        let now = app.clock.now();
        let mut tx = app.state.db.begin().await.unwrap();
        server::store::idempotency::claim(&mut tx, &format!("app:{}", app.app_uuid), "busy-key", &hash, now, now, now).await.unwrap();
        tx.commit().await.unwrap();
        let r = app.send(Method::POST, "/v1/app/accounts", Some(&app.app_token), Some(&body), &[("idempotency-key", "busy-key")]).await;
        assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "idempotency_key_in_progress"), "{}", r.text);
        assert_eq!(r.body["error"]["type"], "state_error");
        // A claim abandoned by a server that went away is taken over after a while.
        app.clock.advance(chrono::Duration::minutes(3));
        let r = app.send(Method::POST, "/v1/app/accounts", Some(&app.app_token), Some(&body), &[("idempotency-key", "busy-key")]).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    }

    async fn keys_expire_after_a_day_and_bad_requests_are_not_kept(app) {
        let key = [("idempotency-key", "k-1")];
        let bad = json!({"email": "nope", "first_name": "Ana", "last_name": "Díaz"});
        let r = app.send(Method::POST, "/v1/app/accounts", Some(&app.app_token), Some(&bad), &key).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST);
        // The corrected request may use the same key.
        let good = json!({"email": "a@example.com", "first_name": "Ana", "last_name": "Díaz"});
        let first = app.send(Method::POST, "/v1/app/accounts", Some(&app.app_token), Some(&good), &key).await;
        assert_eq!(first.status, StatusCode::CREATED, "{}", first.text);
        app.clock.advance(chrono::Duration::hours(25));
        let later = app.send(Method::POST, "/v1/app/accounts", Some(&app.app_token), Some(&good), &key).await;
        assert_eq!(later.status, StatusCode::CREATED);
        assert_ne!(later.body["uuid"], first.body["uuid"]);
        let r = app.send(Method::POST, "/v1/app/accounts", Some(&app.app_token), Some(&good), &[("idempotency-key", &"x".repeat(256))]).await;
        assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, "parameter_invalid"));
    }
}

//! The app's logo upload: a PNG sent as a file from the Brand card, checked and stored by
//! `services::apps::set_logo`, then served from our own origin.

use axum::extract::{Multipart, Path, State};
use uuid::Uuid;

use super::{after_change, member_app, Dash, PageResult};
use crate::{
    domain::{apps::LOGO_MAX_BYTES, FieldError},
    http::AppState,
    services::{self, apps::AppRefused},
};

/// The form's fields: its CSRF token and the file.
#[derive(Default)]
struct Upload {
    csrf: String,
    file: Option<Vec<u8>>,
}

/// Reads the multipart form; a file over the limit is refused before it is read whole.
async fn read_upload(mut form: Multipart) -> Result<Upload, FieldError> {
    let too_large = || FieldError::invalid("logo", "The logo must be 512 KB or smaller.");
    let mut upload = Upload::default();
    loop {
        let field = match form.next_field().await {
            Ok(Some(field)) => field,
            Ok(None) => break,
            Err(_) => return Err(too_large()),
        };
        match field.name() {
            Some("csrf") => upload.csrf = field.text().await.map_err(|_| too_large())?,
            Some("logo") => {
                let mut field = field;
                let mut bytes = Vec::new();
                while let Some(chunk) = field.chunk().await.map_err(|_| too_large())? {
                    bytes.extend_from_slice(&chunk);
                    if bytes.len() > LOGO_MAX_BYTES {
                        return Err(too_large());
                    }
                }
                upload.file = Some(bytes);
            }
            _ => {}
        }
    }
    Ok(upload)
}

pub(super) async fn upload_logo(
    State(state): State<AppState>,
    dash: Dash,
    Path(app): Path<Uuid>,
    form: Multipart,
) -> PageResult {
    let upload = read_upload(form).await;
    // The token travels in the same form, so a form that cannot be read is refused as forged.
    dash.check(upload.as_ref().map_or("", |u| u.csrf.as_str()))
        .await?;
    let app = member_app(&state, &dash, app).await?;
    let result = match upload {
        Ok(upload) => {
            services::apps::set_logo(
                &state.db,
                &state.clock,
                &dash.actor(),
                &state.config.public_url(),
                app.uuid,
                upload.file.unwrap_or_default(),
            )
            .await
        }
        Err(why) => Err(services::Error::Refused(AppRefused::Field(why))),
    };
    after_change(&state, &dash, &app, result, "logo").await
}

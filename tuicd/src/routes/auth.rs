//! `POST /auth/hash-password`: bcrypt-hashes a password for `services.auth.password_hash`.

use proto::{HashPasswordRequest, HashPasswordResponse};

use crate::http::body::{ok_json, read_json};
use crate::http::{ApiError, ApiResult, Request};
use crate::limits::{BCRYPT_COST, BCRYPT_MAX_PASSWORD_BYTES as MAX_PASSWORD_BYTES};

pub(crate) async fn hash_password(req: Request) -> ApiResult {
    let body: HashPasswordRequest = read_json(req).await?;
    let hash = hash(body.password, BCRYPT_COST).await?;
    ok_json(&HashPasswordResponse { hash })
}

pub(crate) async fn hash(password: String, cost: u32) -> Result<String, ApiError> {
    if password.is_empty() {
        return Err(ApiError::InvalidField("password: must not be empty".into()));
    }
    if password.len() > MAX_PASSWORD_BYTES {
        return Err(ApiError::InvalidField(format!("password: longer than {MAX_PASSWORD_BYTES} bytes")));
    }
    tokio::task::spawn_blocking(move || bcrypt::hash(password, cost))
        .await
        .map_err(|e| ApiError::Internal(e.into()))?
        .map_err(|e| ApiError::Internal(e.into()))
}

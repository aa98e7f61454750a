//! Reading request bodies and query strings into typed values, and building JSON responses.
//! Every failure names what was wrong.

use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use http_body_util::{BodyExt, Full};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{ApiError, Body, Request, Response};
use crate::limits::MAX_BODY_BYTES;

pub fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).map_err(|never| match never {}).boxed_unsync()
}

pub fn empty() -> Body {
    full(Bytes::new())
}

pub fn json_response<T: Serialize + ?Sized>(status: StatusCode, value: &T) -> Response {
    json_bytes_response(status, serde_json::to_vec(value).unwrap_or_else(|_| b"{}".to_vec()))
}

/// A response whose body is JSON already printed.
pub fn json_bytes_response(status: StatusCode, bytes: Vec<u8>) -> Response {
    let mut response = Response::new(full(bytes));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

pub fn ok_json<T: Serialize + ?Sized>(value: &T) -> Result<Response, ApiError> {
    Ok(json_response(StatusCode::OK, value))
}

/// Reads the whole body, mapping the size limit to 413.
pub async fn read_bytes(req: Request) -> Result<Bytes, ApiError> {
    match req.into_body().collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if is_length_limit(&*e) => Err(ApiError::PayloadTooLarge { limit: MAX_BODY_BYTES }),
        Err(e) => Err(ApiError::BadRequest(format!("could not read the request body: {e}"))),
    }
}

fn is_length_limit(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cursor = Some(e);
    while let Some(err) = cursor {
        if err.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        cursor = err.source();
    }
    false
}

/// Parses JSON into `T`. Syntax errors give line and column; type errors name the field path.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::InvalidJson("the request body is empty; a JSON object was expected".into()));
    }
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if inner.is_syntax() || inner.is_eof() {
            ApiError::InvalidJson(format!("the request body is not valid JSON: {inner}"))
        } else if path == "." {
            ApiError::InvalidField(inner.to_string())
        } else {
            ApiError::InvalidField(format!("{path}: {inner}"))
        }
    })
}

pub async fn read_json<T: DeserializeOwned>(req: Request) -> Result<T, ApiError> {
    let bytes = read_bytes(req).await?;
    parse_json(&bytes)
}

/// Parses the query string into `T`; an unknown or ill-typed parameter is named in the error.
pub fn query<T: DeserializeOwned>(req: &Request) -> Result<T, ApiError> {
    let raw = req.uri().query().unwrap_or("");
    serde_urlencoded::from_str(raw).map_err(|e| ApiError::InvalidField(format!("query string: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Sample {
        rows: u16,
    }

    #[test]
    fn type_errors_name_the_field() {
        let err = parse_json::<Sample>(br#"{"rows": "x"}"#).unwrap_err().to_string();
        assert!(err.starts_with("rows:"), "{err}");
        let err = parse_json::<Sample>(br#"{"rows": 1"#).unwrap_err();
        assert!(matches!(err, ApiError::InvalidJson(_)));
        let err = parse_json::<Sample>(b"").unwrap_err();
        assert!(err.to_string().contains("empty"));
    }
}

//! Reading request bodies and query strings into typed values, and building JSON responses.
//! Every failure names what was wrong.

use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use http_body_util::{BodyExt, Full};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{ApiError, Body, Request, Response};
use crate::limits::MAX_BODY_BYTES;

pub(crate) fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).map_err(|never| match never {}).boxed_unsync()
}

pub(crate) fn empty() -> Body {
    full(Bytes::new())
}

pub(crate) fn json_response<T: Serialize + ?Sized>(status: StatusCode, value: &T) -> Response {
    json_bytes_response(status, serde_json::to_vec(value).unwrap_or_else(|_| b"{}".to_vec()))
}

/// A response whose body is JSON already printed.
pub(crate) fn json_bytes_response(status: StatusCode, bytes: Vec<u8>) -> Response {
    let mut response = Response::new(full(bytes));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

pub(crate) fn ok_json<T: Serialize + ?Sized>(value: &T) -> Result<Response, ApiError> {
    Ok(json_response(StatusCode::OK, value))
}

/// Reads the whole body, mapping the size limit to 413: a declared `Content-Length` above it is
/// refused before a byte is read, a chunked body once it passes it.
pub(crate) async fn read_bytes(req: Request) -> Result<Bytes, ApiError> {
    let declared = req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.trim().parse::<u64>().ok());
    if declared.is_some_and(|length| length > MAX_BODY_BYTES as u64) {
        return Err(ApiError::PayloadTooLarge { limit: MAX_BODY_BYTES });
    }
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
pub(crate) fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
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

pub(crate) async fn read_json<T: DeserializeOwned>(req: Request) -> Result<T, ApiError> {
    let bytes = read_bytes(req).await?;
    parse_json(&bytes)
}

/// Parses the query string into `T`; an unknown or ill-typed parameter is named in the error,
/// with the value given and what was expected.
pub(crate) fn query<T: DeserializeOwned>(req: &Request) -> Result<T, ApiError> {
    parse_query(req.uri().query().unwrap_or(""))
}

pub(crate) fn parse_query<T: DeserializeOwned>(raw: &str) -> Result<T, ApiError> {
    let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(raw.as_bytes()));
    serde_path_to_error::deserialize(de).map_err(|e| {
        let field = e.path().to_string();
        let inner = e.into_inner().to_string();
        if field == "." {
            return ApiError::InvalidField(format!("query string: {inner}"));
        }
        let given = form_urlencoded::parse(raw.as_bytes()).find(|(k, _)| *k == field).map(|(_, v)| v);
        let given = given.map(|v| format!(" '{v}'")).unwrap_or_default();
        // Every numeric query parameter is a count or a cursor; the integer parser's own words
        // ("invalid digit found in string") say neither which parameter nor what would do.
        let expected = if is_integer_parse_error(&inner) { "; expected a whole number, 0 or more" } else { "" };
        ApiError::InvalidField(format!("query string: {field}:{given} is not valid ({inner}){expected}"))
    })
}

fn is_integer_parse_error(message: &str) -> bool {
    ["invalid digit", "cannot parse integer", "number too large", "number too small"]
        .iter()
        .any(|m| message.contains(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Sample {
        rows: u16,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Paging {
        limit: Option<usize>,
        since_cursor: Option<u64>,
    }

    fn query_error(query: &str) -> String {
        parse_query::<Paging>(query).unwrap_err().to_string()
    }

    #[test]
    fn query_errors_name_the_parameter_and_what_is_expected() {
        for (query, field, value) in
            [("limit=abc", "limit", "abc"), ("since_cursor=x", "since_cursor", "x"), ("limit=-5", "limit", "-5")]
        {
            let err = query_error(query);
            assert!(err.starts_with(&format!("query string: {field}: '{value}' is not valid")), "{err}");
            assert!(err.contains("expected a whole number"), "{err}");
        }
        assert!(query_error("nope=1").contains("unknown field `nope`"));
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

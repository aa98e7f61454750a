//! The router: a `match` on path segments, then on the method. The only file that knows URLs.

use http::Method;

use super::{ApiError, ApiResult, Caller, Request, Response};
use crate::routes;
use crate::state::App;

/// Dispatches on method: `methods!(req.method(), GET => handler, PUT => handler)`; any other
/// method answers 405 with an `Allow` header listing the ones above.
macro_rules! methods {
    ($method:expr, $($m:ident => $handler:expr),+ $(,)?) => {
        match $method {
            $(&Method::$m => $handler.await,)+
            other => Err(ApiError::method_not_allowed(other, &[$(Method::$m),+])),
        }
    };
}

pub async fn route(app: App, caller: Caller, req: Request) -> Response {
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let result: ApiResult = match segments.as_slice() {
        ["health"] => methods!(&method, GET => routes::health::health(&app)),
        ["api", "version"] => methods!(&method, GET => routes::health::version()),
        ["config"] => methods!(&method,
            GET => routes::config::get(&app),
            PUT => routes::config::put(&app, &caller, req),
        ),
        ["auth", "hash-password"] => methods!(&method, POST => routes::auth::hash_password(req)),
        ["mcp"] => methods!(&method,
            POST => crate::mcp::transport::post(&app, &caller, req),
            GET => crate::mcp::transport::get(&app, &caller, req),
            DELETE => crate::mcp::transport::delete(&app, &caller, req),
        ),
        ["events"] => methods!(&method, GET => routes::events::stream(&app, req)),
        _ => Err(ApiError::NotFound(format!("no route for {path}"))),
    };
    result.unwrap_or_else(ApiError::into_response)
}

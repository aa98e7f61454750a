//! The router: a `match` on path segments, then on the method. The only file that knows URLs.

use http::Method;

use crate::http::{ApiError, ApiResult, Caller, Request, Response};
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

/// The path's segments as the match below sees them: empty ones (`//`, a trailing `/`) dropped.
pub(crate) fn segments(path: &str) -> Vec<&str> {
    path.split('/').filter(|s| !s.is_empty()).collect()
}

pub(super) async fn route(app: App, caller: Caller, req: Request) -> Response {
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let segments = segments(&path);
    let result: ApiResult = match segments.as_slice() {
        ["health"] => methods!(&method, GET => routes::health::health(&app)),
        ["api", "version"] => methods!(&method, GET => routes::health::version()),
        ["config"] => methods!(&method,
            GET => routes::config::get(&app),
            PUT => routes::config::put(&app, &caller, req),
        ),
        ["mcp", "upstreams"] => methods!(&method,
            GET => routes::upstreams::get(&app),
            PUT => routes::upstreams::put(&app, &caller, req),
        ),
        ["auth", "hash-password"] => methods!(&method, POST => routes::auth::hash_password(req)),
        ["mcp"] => methods!(&method,
            POST => crate::mcp::transport::post(&app, &caller, req),
            GET => crate::mcp::transport::get(&app, &caller, req),
            DELETE => crate::mcp::transport::delete(&app, &caller, req),
        ),
        ["mcp", "upstream-status"] => methods!(&method, GET => routes::upstream_status::get(&app)),
        ["agents", "detect"] => methods!(&method, GET => routes::agents::detect()),
        ["agents", "detect-all"] => methods!(&method, POST => routes::agents::detect_all(req)),
        ["agents", "open-in-app"] => methods!(&method, POST => routes::agents::open_in_app(&caller, req)),
        ["events"] => methods!(&method, GET => routes::events::stream(&app, req)),
        ["plugins", "docs"] => methods!(&method, GET => routes::plugins::docs()),
        ["api", "plugins", "output-watchers"] => methods!(&method, POST => routes::plugins::output_watchers(&app, req)),
        ["api", "plugins", id, "data", ..] => methods!(&method, GET => routes::plugins::data(&app, id, &path)),
        ["sessions"] => methods!(&method,
            GET => routes::sessions::list(&app),
            POST => routes::sessions::create(&app, &caller, req),
        ),
        ["sessions", id] => methods!(&method,
            GET => routes::sessions::get(&app, id),
            DELETE => routes::sessions::close(&app, &caller, id),
        ),
        ["sessions", id, "write"] => methods!(&method, POST => routes::sessions::write(&app, &caller, id, req)),
        ["sessions", id, "resize"] => methods!(&method, POST => routes::sessions::resize(&app, id, req)),
        ["sessions", id, "output"] => methods!(&method, GET => routes::sessions::output(&app, id, req)),
        ["sessions", id, "shell-family"] => methods!(&method, GET => routes::sessions::shell_family(&app, id)),
        ["sessions", id, "pause"] => methods!(&method, POST => routes::sessions::pause(&app, &caller, id)),
        ["sessions", id, "resume"] => methods!(&method, POST => routes::sessions::resume(&app, &caller, id)),
        ["sessions", id, "compose"] => methods!(&method,
            GET => routes::compose::count(&app, id),
            POST => routes::compose::push(&app, &caller, id, req),
            DELETE => routes::compose::clear(&app, &caller, id),
        ),
        ["sessions", id, "stream"] => methods!(&method, GET => routes::stream::stream(&app, &caller, id, req)),
        ["stats"] => methods!(&method, GET => routes::monitor::stats(&app)),
        ["metrics"] => methods!(&method, GET => routes::monitor::metrics(&app)),
        ["process", "stats"] => methods!(&method, GET => routes::monitor::process_stats(&app)),
        ["process", "monitor"] => methods!(&method, GET => routes::monitor::process_monitor()),
        ["diagnostics", "capture"] => methods!(&method,
            GET => routes::capture::get(&app),
            POST => routes::capture::set(&app, &caller, req),
        ),
        ["fs", "read-external"] => methods!(&method, GET => routes::fs::read_external(&app, req)),
        ["fs", "read-editor"] => methods!(&method, GET => routes::fs::read_editor(&app, &caller, req)),
        ["fs", "read-editor-external"] => {
            methods!(&method, GET => routes::fs::read_editor_external(&app, &caller, req))
        }
        ["fs", "write-external"] => methods!(&method, POST => routes::fs::write_external(&app, req)),
        ["fs", "copy-abs"] => methods!(&method, POST => routes::fs::copy_abs(&app, &caller, req)),
        ["fs", "move-abs"] => methods!(&method, POST => routes::fs::move_abs(&app, req)),
        ["fs", "transfer"] => methods!(&method, POST => routes::fs_transfer::transfer(&app, &caller, req)),
        ["repo", "github-status"] => methods!(&method, GET => routes::github::status(&app, req)),
        ["repo", "pr-statuses"] => methods!(&method, GET => routes::github::pr_statuses(&app, req)),
        ["repo", "ci-checks"] => methods!(&method, GET => routes::github::ci_checks(&app, req)),
        ["repo", "merged-prs"] => methods!(&method, GET => routes::github::merged_prs(&app, req)),
        ["repo", "create-pr"] => methods!(&method, POST => routes::github::create_pr(&app, &caller, req)),
        ["repo", "create-issue"] => methods!(&method, POST => routes::github::create_issue(&app, &caller, req)),
        ["repo", "post-pr-review"] => methods!(&method, POST => routes::github::post_pr_review(&app, &caller, req)),
        ["mobile"] => methods!(&method, GET => routes::mobile::page()),
        ["mobile", file] => methods!(&method, GET => routes::mobile::asset(file)),
        ["peers"] => methods!(&method, GET => routes::peers::list(&app)),
        ["peers", id, "inbox"] => methods!(&method, GET => routes::peers::inbox(&app, id, req)),
        ["progress"] => methods!(&method, GET => routes::progress::list(&app, req)),
        ["ui", "confirms"] => methods!(&method, GET => routes::ui::list_confirms(&app)),
        ["ui", "confirm", id] => methods!(&method, POST => routes::ui::answer_confirm(&app, &caller, id, req)),
        ["ui", "screenshot", id] => methods!(&method, POST => routes::ui_screenshot::answer(&app, id, req)),
        ["repos"] => methods!(&method,
            GET => routes::repos::list(&app),
            POST => routes::repos::add(&app, &caller, req),
            DELETE => routes::repos::remove(&app, &caller, req),
        ),
        ["repo", "info"] => methods!(&method, GET => routes::repo::info(&app, &caller, req)),
        ["repo", "diff"] => methods!(&method, GET => routes::repo::diff(&app, &caller, req)),
        ["repo", "diff-stats"] => methods!(&method, GET => routes::repo::diff_stats(&app, &caller, req)),
        ["repo", "changed-files"] => methods!(&method, GET => routes::repo::changed_files(&app, &caller, req)),
        ["repo", "branches"] => methods!(&method, GET => routes::repo::branches(&app, &caller, req)),
        ["repo", "conflict-assist"] => methods!(&method, POST => routes::repo::conflict_assist(&app, &caller, req)),
        ["worktrees"] => methods!(&method,
            POST => routes::worktrees::create(&app, &caller, req),
            DELETE => routes::worktrees::remove(&app, &caller, req),
        ),
        ["worktrees", "paths"] => methods!(&method, GET => routes::worktrees::paths(&app, &caller, req)),
        ["worktrees", "lifecycle"] => methods!(&method, GET => routes::worktrees::lifecycle(&app, &caller, req)),
        ["worktrees", "run-script"] => methods!(&method, POST => routes::worktrees::run_script(&caller, req)),
        ["mcp", "upstreams", name, "authorize"] => {
            methods!(&method, POST => routes::upstream_oauth::authorize(&app, name))
        }
        ["mcp", "upstreams", name, "authorize", "cancel"] => {
            methods!(&method, POST => routes::upstream_oauth::cancel(&app, name))
        }
        ["mcp", "oauth", "callback"] => methods!(&method, POST => routes::upstream_oauth::pasted_callback(&app, req)),
        _ => Err(ApiError::NotFound(format!("no route for {path}"))),
    };
    result.unwrap_or_else(ApiError::into_response)
}

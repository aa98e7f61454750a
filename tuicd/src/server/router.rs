//! The router: a `match` on path segments, then on the method. The only file that knows URLs.

use http::Method;

use super::rules::{self, ADMIN, ANY, DRIVE, LOCAL_ADMIN, LOCAL_DRIVE, OBSERVE, drive, observe};
use crate::http::{ApiError, ApiResult, Caller, Request, Response};
use crate::routes;
use crate::state::App;

/// Dispatches on method, each with its rule (`rules.rs`):
/// `methods!(gate, req.method(), GET [OBSERVE] => handler, PUT [ADMIN] => handler)`. The rule is
/// part of the syntax, so a route cannot be written without one; the caller is admitted by it
/// before the handler runs. Any other method answers 405 with an `Allow` header.
macro_rules! methods {
    ($gate:expr, $method:expr, $($m:ident [$rule:expr] => $handler:expr),+ $(,)?) => {
        match $method {
            $(&Method::$m => match rules::admit($gate.0, $gate.1, $rule) {
                Ok(()) => $handler.await,
                Err(refused) => Err(refused),
            },)+
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
    let gate = (&app, &caller);
    let result: ApiResult = match segments.as_slice() {
        ["health"] => methods!(gate, &method, GET [ANY] => routes::health::health(&app)),
        ["api", "version"] => methods!(gate, &method, GET [ANY] => routes::health::version()),
        ["daemon", "upgrade"] => methods!(gate, &method, POST [LOCAL_ADMIN] => routes::daemon::upgrade(&app)),
        ["config"] => methods!(gate, &method,
            GET [ADMIN] => routes::config::get(&app),
            PUT [ADMIN] => routes::config::put(&app, &caller, req),
        ),
        ["mcp", "upstreams"] => methods!(gate, &method,
            GET [OBSERVE] => routes::upstreams::get(&app),
            PUT [ADMIN] => routes::upstreams::put(&app, &caller, req),
        ),
        ["auth", "hash-password"] => methods!(gate, &method, POST [ADMIN] => routes::auth::hash_password(req)),
        ["auth", "tokens"] => methods!(gate, &method,
            GET [ADMIN] => routes::tokens::list(&app),
            POST [ADMIN] => routes::tokens::create(&app, req),
        ),
        ["auth", "tokens", id] => methods!(gate, &method, DELETE [ADMIN] => routes::tokens::revoke(&app, id)),
        ["mcp"] => methods!(gate, &method,
            POST [ANY] => crate::mcp::transport::post(&app, &caller, req),
            GET [ANY] => crate::mcp::transport::get(&app, &caller, req),
            DELETE [ANY] => crate::mcp::transport::delete(&app, &caller, req),
        ),
        ["mcp", "upstream-status"] => methods!(gate, &method, GET [OBSERVE] => routes::upstream_status::get(&app)),
        ["agents", "detect"] => methods!(gate, &method, GET [OBSERVE] => routes::agents::detect()),
        ["agents", "detect-all"] => methods!(gate, &method, POST [OBSERVE] => routes::agents::detect_all(req)),
        ["agents", "open-in-app"] => {
            methods!(gate, &method, POST [LOCAL_DRIVE] => routes::agents::open_in_app(&caller, req))
        }
        ["events"] => methods!(gate, &method, GET [OBSERVE] => routes::events::stream(&app, &caller, req)),
        ["plugins", "docs"] => methods!(gate, &method, GET [ANY] => routes::plugins::docs()),
        ["api", "plugins", "output-watchers"] => {
            methods!(gate, &method, POST [DRIVE] => routes::plugins::output_watchers(&app, req))
        }
        ["api", "plugins", id, "data", ..] => {
            methods!(gate, &method, GET [OBSERVE] => routes::plugins::data(&app, id, &path))
        }
        ["sessions"] => methods!(gate, &method,
            GET [ANY] => routes::sessions::list(&app, &caller),
            POST [DRIVE] => routes::sessions::create(&app, &caller, req),
        ),
        ["sessions", id] => methods!(gate, &method,
            GET [observe(id)] => routes::sessions::get(&app, id),
            DELETE [drive(id)] => routes::sessions::close(&app, &caller, id),
        ),
        ["sessions", id, "write"] => {
            methods!(gate, &method, POST [drive(id)] => routes::sessions::write(&app, &caller, id, req))
        }
        ["sessions", id, "resize"] => {
            methods!(gate, &method, POST [drive(id)] => routes::sessions::resize(&app, id, req))
        }
        ["sessions", id, "output"] => {
            methods!(gate, &method, GET [observe(id)] => routes::sessions::output(&app, id, req))
        }
        ["sessions", id, "recording.cast"] => {
            methods!(gate, &method, GET [observe(id)] => routes::sessions::recording(&app, id))
        }
        ["sessions", id, "shell-family"] => {
            methods!(gate, &method, GET [observe(id)] => routes::sessions::shell_family(&app, id))
        }
        ["sessions", id, "pause"] => {
            methods!(gate, &method, POST [drive(id)] => routes::sessions::pause(&app, &caller, id))
        }
        ["sessions", id, "resume"] => {
            methods!(gate, &method, POST [drive(id)] => routes::sessions::resume(&app, &caller, id))
        }
        ["sessions", id, "compose"] => methods!(gate, &method,
            GET [observe(id)] => routes::compose::count(&app, id),
            POST [drive(id)] => routes::compose::push(&app, &caller, id, req),
            DELETE [drive(id)] => routes::compose::clear(&app, &caller, id),
        ),
        ["sessions", id, "stream"] => {
            methods!(gate, &method, GET [observe(id)] => routes::stream::stream(&app, &caller, id, req))
        }
        ["stats"] => methods!(gate, &method, GET [OBSERVE] => routes::monitor::stats(&app)),
        ["metrics"] => methods!(gate, &method, GET [OBSERVE] => routes::monitor::metrics(&app)),
        ["process", "stats"] => methods!(gate, &method, GET [OBSERVE] => routes::monitor::process_stats(&app)),
        ["process", "monitor"] => methods!(gate, &method, GET [OBSERVE] => routes::monitor::process_monitor()),
        ["diagnostics", "capture"] => methods!(gate, &method,
            GET [OBSERVE] => routes::capture::get(&app),
            POST [ADMIN] => routes::capture::set(&app, &caller, req),
        ),
        ["fs", "read-external"] => methods!(gate, &method, GET [OBSERVE] => routes::fs::read_external(&app, req)),
        ["fs", "read-editor"] => methods!(gate, &method, GET [OBSERVE] => routes::fs::read_editor(&app, &caller, req)),
        ["fs", "read-editor-external"] => {
            methods!(gate, &method, GET [OBSERVE] => routes::fs::read_editor_external(&app, &caller, req))
        }
        ["fs", "write-external"] => {
            methods!(gate, &method, POST [LOCAL_DRIVE] => routes::fs::write_external(&app, req))
        }
        ["fs", "copy-abs"] => methods!(gate, &method, POST [LOCAL_DRIVE] => routes::fs::copy_abs(&app, &caller, req)),
        ["fs", "move-abs"] => methods!(gate, &method, POST [LOCAL_DRIVE] => routes::fs::move_abs(&app, req)),
        ["fs", "transfer"] => {
            methods!(gate, &method, POST [LOCAL_DRIVE] => routes::fs_transfer::transfer(&app, &caller, req))
        }
        ["repo", "github-status"] => methods!(gate, &method, GET [OBSERVE] => routes::github::status(&app, req)),
        ["repo", "pr-statuses"] => methods!(gate, &method, GET [OBSERVE] => routes::github::pr_statuses(&app, req)),
        ["repo", "ci-checks"] => methods!(gate, &method, GET [OBSERVE] => routes::github::ci_checks(&app, req)),
        ["repo", "merged-prs"] => methods!(gate, &method, GET [OBSERVE] => routes::github::merged_prs(&app, req)),
        ["repo", "create-pr"] => methods!(gate, &method, POST [DRIVE] => routes::github::create_pr(&app, &caller, req)),
        ["repo", "create-issue"] => {
            methods!(gate, &method, POST [DRIVE] => routes::github::create_issue(&app, &caller, req))
        }
        ["repo", "post-pr-review"] => {
            methods!(gate, &method, POST [DRIVE] => routes::github::post_pr_review(&app, &caller, req))
        }
        ["ai", "review", "pr"] => methods!(gate, &method, POST [DRIVE] => routes::ai::review_pr(&app, req)),
        ["repo", "changelog"] => methods!(gate, &method, GET [DRIVE] => routes::ai::changelog(&app, req)),
        ["ai", "improvements", "scan"] => methods!(gate, &method, POST [DRIVE] => routes::ai::scan(&app, req)),
        ["repo", "create-issue-from-proposal"] => {
            methods!(gate, &method, POST [DRIVE] => routes::ai::create_issue_from_proposal(&app, &caller, req))
        }
        ["mobile"] => methods!(gate, &method, GET [ANY] => routes::mobile::page()),
        ["mobile", file] => methods!(gate, &method, GET [ANY] => routes::mobile::asset(file)),
        ["peers"] => methods!(gate, &method, GET [OBSERVE] => routes::peers::list(&app)),
        ["peers", id, "inbox"] => methods!(gate, &method, GET [OBSERVE] => routes::peers::inbox(&app, id, req)),
        ["progress"] => methods!(gate, &method, GET [OBSERVE] => routes::progress::list(&app, req)),
        ["ui", "confirms"] => methods!(gate, &method, GET [OBSERVE] => routes::ui::list_confirms(&app)),
        ["ui", "confirm", id] => {
            methods!(gate, &method, POST [DRIVE] => routes::ui::answer_confirm(&app, &caller, id, req))
        }
        ["ui", "screenshot", id] => {
            methods!(gate, &method, POST [DRIVE] => routes::ui_screenshot::answer(&app, id, req))
        }
        ["repos"] => methods!(gate, &method,
            GET [OBSERVE] => routes::repos::list(&app),
            POST [ADMIN] => routes::repos::add(&app, &caller, req),
            DELETE [ADMIN] => routes::repos::remove(&app, &caller, req),
        ),
        ["repo", "info"] => methods!(gate, &method, GET [OBSERVE] => routes::repo::info(&app, &caller, req)),
        ["repo", "diff"] => methods!(gate, &method, GET [OBSERVE] => routes::repo::diff(&app, &caller, req)),
        ["repo", "diff-stats"] => {
            methods!(gate, &method, GET [OBSERVE] => routes::repo::diff_stats(&app, &caller, req))
        }
        ["repo", "changed-files"] => {
            methods!(gate, &method, GET [OBSERVE] => routes::repo::changed_files(&app, &caller, req))
        }
        ["repo", "branches"] => methods!(gate, &method, GET [OBSERVE] => routes::repo::branches(&app, &caller, req)),
        ["repo", "conflict-assist"] => {
            methods!(gate, &method, POST [DRIVE] => routes::repo::conflict_assist(&app, &caller, req))
        }
        ["worktrees"] => methods!(gate, &method,
            POST [DRIVE] => routes::worktrees::create(&app, &caller, req),
            DELETE [DRIVE] => routes::worktrees::remove(&app, &caller, req),
        ),
        ["worktrees", "paths"] => {
            methods!(gate, &method, GET [OBSERVE] => routes::worktrees::paths(&app, &caller, req))
        }
        ["worktrees", "lifecycle"] => {
            methods!(gate, &method, GET [OBSERVE] => routes::worktrees::lifecycle(&app, &caller, req))
        }
        ["worktrees", "run-script"] => {
            methods!(gate, &method, POST [LOCAL_DRIVE] => routes::worktrees::run_script(&caller, req))
        }
        ["mcp", "upstreams", name, "authorize"] => {
            methods!(gate, &method, POST [ADMIN] => routes::upstream_oauth::authorize(&app, name))
        }
        ["mcp", "upstreams", name, "authorize", "cancel"] => {
            methods!(gate, &method, POST [ADMIN] => routes::upstream_oauth::cancel(&app, name))
        }
        ["mcp", "oauth", "callback"] => {
            methods!(gate, &method, POST [ADMIN] => routes::upstream_oauth::pasted_callback(&app, req))
        }
        ["acp", "connections"] => methods!(gate, &method,
            GET [OBSERVE] => routes::acp::list(&app),
            POST [DRIVE] => routes::acp::launch(&app, req),
        ),
        ["acp", "connections", id] => methods!(gate, &method,
            GET [OBSERVE] => routes::acp::get(&app, id),
            DELETE [DRIVE] => routes::acp::disconnect(&app, id, req),
        ),
        ["acp", "connections", id, "kill"] => methods!(gate, &method, POST [DRIVE] => routes::acp::kill(&app, id, req)),
        ["acp", "connections", id, "reconnect"] => {
            methods!(gate, &method, POST [DRIVE] => routes::acp::reconnect(&app, id, req))
        }
        ["acp", "connections", id, "stream"] => {
            methods!(gate, &method, GET [OBSERVE] => routes::acp_stream::stream(&app, &caller, id, req))
        }
        ["acp", "connections", id, "interactions"] => {
            methods!(gate, &method, GET [OBSERVE] => routes::acp::interactions(&app, id))
        }
        ["acp", "connections", id, "sessions"] => methods!(gate, &method,
            GET [OBSERVE] => routes::acp::sessions(&app, id),
            POST [DRIVE] => routes::acp::new_session(&app, id, req),
        ),
        ["acp", "connections", id, "sessions", sid] => {
            methods!(gate, &method, DELETE [DRIVE] => routes::acp::delete_session(&app, id, sid, req))
        }
        ["acp", "connections", id, "sessions", sid, "prompt"] => {
            methods!(gate, &method, POST [DRIVE] => routes::acp::prompt(&app, id, sid, req))
        }
        ["acp", "connections", id, "sessions", sid, "cancel"] => {
            methods!(gate, &method, POST [DRIVE] => routes::acp::cancel(&app, id, sid, req))
        }
        ["acp", "connections", id, "sessions", sid, "config"] => {
            methods!(gate, &method, POST [DRIVE] => routes::acp::config(&app, id, sid, req))
        }
        ["acp", "connections", id, "sessions", sid, action] => {
            methods!(gate, &method, POST [DRIVE] => routes::acp::session_action(&app, id, sid, action, req))
        }
        ["acp", "connections", id, "permissions", rid, "response"] => {
            methods!(gate, &method, POST [DRIVE] => routes::acp::answer_permission(&app, &caller, id, rid, req))
        }
        ["acp", "connections", id, "elicitations", rid, "response"] => {
            methods!(gate, &method, POST [DRIVE] => routes::acp::answer_elicitation(&app, &caller, id, rid, req))
        }
        _ => Err(ApiError::NotFound(format!("no route for {path}"))),
    };
    result.unwrap_or_else(ApiError::into_response)
}

#[cfg(test)]
mod tests {
    /// Every (method, route) of the table above with its rule, as docs/security.md writes them.
    fn table_rows() -> Vec<String> {
        let source = include_str!("router.rs");
        let table = &source[source.find("let result: ApiResult = match").unwrap()
            ..source.find("_ => Err(ApiError::NotFound").unwrap()];
        let mut rows = Vec::new();
        let mut route = String::new();
        for line in table.lines().map(str::trim) {
            if line.starts_with('[')
                && let Some(end) = line.find("] =>")
            {
                let parts: Vec<String> = line[1..end]
                    .split(',')
                    .map(|p| p.trim())
                    .map(|p| match p.strip_prefix('"') {
                        Some(literal) => literal.trim_end_matches('"').to_owned(),
                        None if p == ".." => "…".to_owned(),
                        None => format!("{{{p}}}"),
                    })
                    .collect();
                route = format!("/{}", parts.join("/"));
            }
            for method in ["GET", "POST", "PUT", "DELETE"] {
                let Some(at) = line.find(&format!("{method} ")) else { continue };
                if !line[at..].contains("=>") {
                    continue;
                }
                let rest = &line[at + method.len() + 1..];
                assert!(rest.starts_with('['), "{method} {route} has no rule: {line}");
                let rule = &rest[1..rest.find(']').unwrap()];
                let needs = match rule {
                    "ANY" => "any",
                    "OBSERVE" => "observe",
                    "DRIVE" => "drive",
                    "ADMIN" => "admin",
                    "LOCAL_DRIVE" => "drive, local only",
                    "LOCAL_ADMIN" => "admin, local only",
                    "observe(id)" => "observe on {id}",
                    "drive(id)" => "drive on {id}",
                    other => panic!("{method} {route}: the docs check does not know rule {other}"),
                };
                rows.push(format!("| {method} | `{route}` | {needs} |"));
            }
        }
        rows
    }

    #[test]
    fn every_route_has_a_rule_and_the_security_page_lists_each_as_the_router_has_it() {
        let rows = table_rows();
        assert!(rows.len() > 70, "the parse found the table: {rows:?}");
        let page = include_str!("../../../docs/security.md");
        let documented: Vec<&str> = page
            .lines()
            .filter(|l| {
                l.starts_with("| GET") || l.starts_with("| POST") || l.starts_with("| PUT") || l.starts_with("| DELETE")
            })
            .collect();
        for row in &rows {
            assert!(documented.contains(&row.as_str()), "docs/security.md lacks (or says otherwise): {row}");
        }
        for line in &documented {
            assert!(
                rows.iter().any(|r| r == line),
                "docs/security.md lists a route the router does not have so: {line}"
            );
        }
    }
}

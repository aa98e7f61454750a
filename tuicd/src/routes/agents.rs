//! `/agents` REST: installed agent CLIs (one list with MCP `agent action=detect`), a parallel
//! PATH lookup of named binaries, and opening a path in a desktop application.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::json;

use crate::agent::detect::{detect_installed, is_executable_file};
use crate::http::body::{ok_json, read_json};
use crate::http::{ApiError, ApiResult, Caller, Request};

/// Most binaries one `detect-all` looks up.
const DETECT_ALL_MAX: usize = 64;

pub(crate) async fn detect() -> ApiResult {
    let found = tokio::task::spawn_blocking(detect_installed).await.map_err(anyhow::Error::from)?;
    ok_json(&found)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DetectAll {
    binaries: Vec<String>,
}

/// The first executable `name` on PATH.
fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|d| !d.as_os_str().is_empty())
        .map(|d| d.join(name))
        .find(|p| is_executable_file(p))
}

/// `POST /agents/detect-all {binaries: [name]}` -> `[{name, path?}]`, looked up in parallel.
pub(crate) async fn detect_all(req: Request) -> ApiResult {
    let body: DetectAll = read_json(req).await?;
    if body.binaries.len() > DETECT_ALL_MAX {
        return Err(ApiError::InvalidField(format!("binaries: at most {DETECT_ALL_MAX} names")));
    }
    for name in &body.binaries {
        if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
            return Err(ApiError::InvalidField(format!("binaries: '{name}' is not a bare executable name")));
        }
    }
    let lookups: Vec<_> = body
        .binaries
        .into_iter()
        .map(|name| {
            tokio::task::spawn_blocking(move || {
                let path = which(&name);
                (name, path)
            })
        })
        .collect();
    let mut answers = Vec::new();
    for lookup in lookups {
        let (name, path) = lookup.await.map_err(anyhow::Error::from)?;
        let mut entry = json!({"name": name});
        if let Some(path) = path {
            entry["path"] = json!(path.display().to_string());
        }
        answers.push(entry);
    }
    ok_json(&answers)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct OpenInApp {
    path: String,
    /// `ide` (default), `terminal` or `file_manager`.
    app: Option<String>,
    line: Option<u32>,
    col: Option<u32>,
}

/// The command that opens `path` in `app`, or why there is none.
fn opener(app: &str, path: &Path, line: Option<u32>, col: Option<u32>) -> Result<(PathBuf, Vec<String>), ApiError> {
    let shown = path.display().to_string();
    let missing = |what: &str| {
        ApiError::Unavailable(format!(
            "no desktop opener for {app}: {what} is not installed on the daemon's PATH (is tuicd running headless?)"
        ))
    };
    match app {
        "ide" => {
            let code = which("code").or_else(|| which("codium")).ok_or_else(|| missing("code (VS Code)"))?;
            let target = match (line, col) {
                (Some(l), Some(c)) => format!("{shown}:{l}:{c}"),
                (Some(l), None) => format!("{shown}:{l}"),
                _ => shown,
            };
            Ok((code, vec!["--goto".into(), target]))
        }
        "terminal" => {
            let dir = if path.is_dir() { path.to_owned() } else { path.parent().unwrap_or(path).to_owned() };
            let terminal = which("x-terminal-emulator").or_else(|| which("gnome-terminal"));
            let terminal =
                terminal.ok_or_else(|| missing("a terminal emulator (x-terminal-emulator, gnome-terminal)"))?;
            Ok((terminal, vec![format!("--working-directory={}", dir.display())]))
        }
        "file_manager" => {
            let open = which("xdg-open").or_else(|| which("open")).ok_or_else(|| missing("xdg-open"))?;
            Ok((open, vec![shown]))
        }
        other => Err(ApiError::InvalidField(format!("app: '{other}' is not one of ide, terminal, file_manager"))),
    }
}

pub(crate) async fn open_in_app(caller: &Caller, req: Request) -> ApiResult {
    caller.require_loopback("opening a path in a desktop application")?;
    let body: OpenInApp = read_json(req).await?;
    let path = PathBuf::from(&body.path);
    if !path.is_absolute() || !path.exists() {
        return Err(ApiError::InvalidField(format!("path: '{}' is not an existing absolute path", body.path)));
    }
    let app = body.app.as_deref().unwrap_or("ide");
    let (program, args) = opener(app, &path, body.line, body.col)?;
    std::process::Command::new(&program)
        .args(&args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| ApiError::Unavailable(format!("cannot start {}: {e}", program.display())))?;
    ok_json(&json!({"ok": true, "app": app, "opener": program.display().to_string()}))
}

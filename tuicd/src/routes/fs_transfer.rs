//! `POST /fs/transfer {destDir, paths, mode, allowRecursive}`: copies or moves several files (and,
//! with `allowRecursive`, directories) into one directory. Every path is checked through the gate,
//! and every destination for a clash, before the first byte moves.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::fs::{blocking, gate, is_remote, movable, new_target, rename};
use crate::fsgate;
use crate::http::body::{ok_json, read_json};
use crate::http::{ApiError, ApiResult, Caller, Request};
use crate::limits::{FS_TRANSFER_MAX_ENTRIES, FS_TRANSFER_MAX_PATHS};
use crate::state::App;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Transfer {
    dest_dir: String,
    paths: Vec<String>,
    /// copy or move.
    mode: String,
    #[serde(default)]
    allow_recursive: bool,
}

#[derive(Debug, Serialize)]
struct Transferred {
    ok: bool,
    /// Where each path went, in request order.
    transferred: Vec<String>,
    /// Symlinks met inside copied directories: left out, never followed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    skipped: Vec<String>,
}

pub(crate) async fn transfer(app: &App, caller: &Caller, req: Request) -> ApiResult {
    let body: Transfer = read_json(req).await?;
    let copy = match body.mode.as_str() {
        "copy" => true,
        "move" => false,
        other => return Err(ApiError::InvalidField(format!("mode: '{other}' is not valid; use copy or move"))),
    };
    if body.paths.is_empty() || body.paths.len() > FS_TRANSFER_MAX_PATHS {
        return Err(ApiError::InvalidField(format!("paths: give 1 to {FS_TRANSFER_MAX_PATHS} paths")));
    }
    let gate = gate(app);
    let dest_dir = gate.existing("destDir", &body.dest_dir)?;
    if !dest_dir.is_dir() {
        return Err(ApiError::InvalidField(format!("destDir: {} is not a directory", body.dest_dir)));
    }
    let mut plan = Vec::with_capacity(body.paths.len());
    for (i, raw) in body.paths.iter().enumerate() {
        let field = format!("paths[{i}]");
        let from = if copy { gate.existing(&field, raw)? } else { movable(&gate, &field, raw)? };
        if from.is_dir() && !body.allow_recursive {
            return Err(ApiError::InvalidField(format!(
                "{field}: {raw} is a directory; set allowRecursive to transfer it"
            )));
        }
        let name = from.file_name().ok_or_else(|| ApiError::InvalidField(format!("{field}: names no file")))?;
        let to = dest_dir.join(name);
        let to = new_target(&gate, &field, &to.to_string_lossy())?;
        if to.starts_with(&from) {
            return Err(ApiError::InvalidField(format!("{field}: {raw} cannot go inside itself")));
        }
        if plan.iter().any(|(_, t): &(PathBuf, PathBuf)| *t == to) {
            return Err(ApiError::Conflict(format!("{field}: two paths would both land at {}", to.display())));
        }
        plan.push((from, to));
    }
    let cap = fsgate::read_cap(is_remote(caller));
    let answer = blocking(move || {
        let mut skipped = Vec::new();
        let mut transferred = Vec::with_capacity(plan.len());
        for (from, to) in &plan {
            if !copy {
                rename(from, to)?;
            } else if from.is_dir() {
                copy_tree(from, to, cap, &mut skipped)?;
            } else {
                fsgate::copy_file(from, to, cap)?;
            }
            transferred.push(to.display().to_string());
        }
        Ok(Transferred { ok: true, transferred, skipped })
    })
    .await?;
    ok_json(&answer)
}

/// Copies the directory `from` to the new directory `to`: at most [`FS_TRANSFER_MAX_ENTRIES`]
/// entries and `cap` bytes in all; symlinks are skipped (listed), never followed.
fn copy_tree(from: &Path, to: &Path, cap: u64, skipped: &mut Vec<String>) -> Result<(), ApiError> {
    let io = |path: &Path, e: std::io::Error| ApiError::BadRequest(format!("{}: {e}", path.display()));
    let mut budget = cap;
    let mut entries = 0usize;
    let mut stack = vec![(from.to_path_buf(), to.to_path_buf())];
    while let Some((src, dst)) = stack.pop() {
        std::fs::create_dir(&dst).map_err(|e| io(&dst, e))?;
        for entry in std::fs::read_dir(&src).map_err(|e| io(&src, e))? {
            let entry = entry.map_err(|e| io(&src, e))?;
            entries += 1;
            if entries > FS_TRANSFER_MAX_ENTRIES {
                return Err(ApiError::TooLarge(format!(
                    "{} holds more than {FS_TRANSFER_MAX_ENTRIES} entries; copy it in parts",
                    from.display()
                )));
            }
            let kind = entry.file_type().map_err(|e| io(&entry.path(), e))?;
            let target = dst.join(entry.file_name());
            if kind.is_dir() {
                stack.push((entry.path(), target));
            } else if kind.is_file() {
                let copied = fsgate::copy_file(&entry.path(), &target, budget)?;
                budget = budget.saturating_sub(copied);
            } else {
                skipped.push(entry.path().display().to_string());
            }
        }
    }
    Ok(())
}

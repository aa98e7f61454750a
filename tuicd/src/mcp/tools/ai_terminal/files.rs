//! `read_file`, `write_file`, `edit_file`: text files in the session's repository. A read is
//! redacted as a whole before it is paged, so a secret spanning lines (a private key block) never
//! shows in part; line numbers therefore count the redacted text. The writes ask the person first,
//! are refused while an agent loop drives the session, and replace the file atomically.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::common::{claim, confirmed, shown_whole, target};
use super::sandbox::{Sandbox, file_error, read_text};
use crate::limits::{AI_TERMINAL_FILE_MAX_BYTES, AI_TERMINAL_READ_LINES_DEFAULT, AI_TERMINAL_READ_LINES_MAX};
use crate::mcp::tools::{CallContext, ToolError, run_blocking};
use crate::safety::redact::redact;

/// What a refused write over the confirmation bound can do instead.
const WRITE_INSTEAD: &str = "Write the file in parts of at most that size (ai_terminal_write_file with the first part, \
    then ai_terminal_edit_file adding each next part after the last lines written), or ask the user to put it in place.";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadFile {
    /// PTY id, tuic_session or alias (tu-1).
    session_id: String,
    /// Relative to the session's cwd, or absolute; inside its repository.
    file_path: String,
    /// Lines to skip (default 0).
    offset: Option<usize>,
    /// Lines to return (default 200, at most 2000).
    limit: Option<usize>,
}

#[derive(Debug, Serialize)]
pub(super) struct Page {
    path: String,
    content: String,
    offset: usize,
    lines: usize,
    total_lines: usize,
    /// The offset of the next page; absent at the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    next_offset: Option<usize>,
}

pub(super) async fn read_file(ctx: &CallContext, p: ReadFile) -> Result<Page, ToolError> {
    let limit = p.limit.unwrap_or(AI_TERMINAL_READ_LINES_DEFAULT);
    if limit == 0 || limit > AI_TERMINAL_READ_LINES_MAX {
        return Err(ToolError::new(format!("limit: {limit} is outside 1..={AI_TERMINAL_READ_LINES_MAX}")));
    }
    let offset = p.offset.unwrap_or(0);
    let sandbox = Sandbox::of(&*target(ctx, &p.session_id)?)?;
    run_blocking("ai_terminal_read_file", move || {
        let path = sandbox.existing("file_path", &p.file_path)?;
        let shown = sandbox.show(&path);
        let text = read_text("file_path", &path, &shown)?;
        let text = redact(&text);
        let all: Vec<&str> = text.lines().collect();
        if offset > all.len() {
            return Err(ToolError::new(format!("offset: {offset} is past the end of {shown} ({} lines)", all.len())));
        }
        let end = (offset + limit).min(all.len());
        Ok(Page {
            content: all[offset..end].join("\n"),
            offset,
            lines: end - offset,
            total_lines: all.len(),
            next_offset: (end < all.len()).then_some(end),
            path: redact(&shown).into_owned(),
        })
    })
    .await
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WriteFile {
    /// PTY id, tuic_session or alias (tu-1).
    session_id: String,
    /// Relative to the session's cwd, or absolute; its directory must exist in the repository.
    file_path: String,
    /// The whole new text of the file.
    content: String,
}

pub(super) async fn write_file(ctx: &CallContext, p: WriteFile) -> Result<Value, ToolError> {
    const TOOL: &str = "ai_terminal_write_file";
    if p.content.len() as u64 > AI_TERMINAL_FILE_MAX_BYTES {
        return Err(ToolError::new(format!(
            "content: {} bytes is over the {AI_TERMINAL_FILE_MAX_BYTES} byte (10 MB) limit",
            p.content.len()
        )));
    }
    let session = target(ctx, &p.session_id)?;
    let sandbox = Sandbox::of(&session)?;
    let path = sandbox.target("file_path", &p.file_path)?;
    let shown = sandbox.show(&path);
    let exists = path.exists();
    if path.is_dir() {
        return Err(ToolError::new(format!("file_path: {shown} is a directory, not a file")));
    }
    let verb = if exists { "Overwrite" } else { "Create" };
    let content = shown_whole("content", &p.content, WRITE_INSTEAD)?;
    let what = format!("{verb} {shown} in {} with this content:\n{content}", sandbox.root.display());
    confirmed(ctx, TOOL, &session, what).await?;
    let _lease = claim(ctx, TOOL, &session)?;
    let bytes = p.content.len();
    run_blocking(TOOL, move || {
        // Checked again: the tree may have changed while the person read the dialog.
        let path = sandbox.target("file_path", &p.file_path)?;
        crate::fsgate::write_atomic(&path, p.content.as_bytes()).map_err(|e| file_error("file_path", &shown, e))?;
        Ok(json!({"ok": true, "path": shown, "bytes": bytes, "created": !exists}))
    })
    .await
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EditFile {
    /// PTY id, tuic_session or alias (tu-1).
    session_id: String,
    /// Relative to the session's cwd, or absolute; an existing text file in the repository.
    file_path: String,
    /// The exact text to replace; it must occur once unless replace_all.
    old_string: String,
    new_string: String,
    /// Replace every occurrence (default false).
    replace_all: Option<bool>,
}

pub(super) async fn edit_file(ctx: &CallContext, p: EditFile) -> Result<Value, ToolError> {
    const TOOL: &str = "ai_terminal_edit_file";
    if p.old_string.is_empty() {
        return Err(ToolError::new("old_string: must not be empty"));
    }
    if p.old_string == p.new_string {
        return Err(ToolError::new("new_string: is the same as old_string; nothing would change"));
    }
    let replace_all = p.replace_all.unwrap_or(false);
    let session = target(ctx, &p.session_id)?;
    let sandbox = Sandbox::of(&session)?;
    let path = sandbox.existing("file_path", &p.file_path)?;
    let shown = sandbox.show(&path);
    let text = read_text("file_path", &path, &shown)?;
    let count = occurrences(&text, &p.old_string, replace_all, &shown)?;
    let old_shown = shown_whole("old_string", &p.old_string, WRITE_INSTEAD)?;
    let new_shown = shown_whole("new_string", &p.new_string, WRITE_INSTEAD)?;
    let what = format!(
        "Edit {shown} in {}: replace {count} occurrence{} of\n{old_shown}\n\nwith\n{new_shown}",
        sandbox.root.display(),
        if count == 1 { "" } else { "s" },
    );
    confirmed(ctx, TOOL, &session, what).await?;
    let _lease = claim(ctx, TOOL, &session)?;
    run_blocking(TOOL, move || {
        // Read again: the file may have changed while the person read the dialog.
        let path = sandbox.existing("file_path", &p.file_path)?;
        let text = read_text("file_path", &path, &shown)?;
        let now = occurrences(&text, &p.old_string, replace_all, &shown)?;
        let edited = if replace_all {
            text.replace(&p.old_string, &p.new_string)
        } else {
            text.replacen(&p.old_string, &p.new_string, 1)
        };
        if edited.len() as u64 > AI_TERMINAL_FILE_MAX_BYTES {
            return Err(ToolError::new(format!(
                "new_string: the edited {shown} would be {} bytes, over the 10 MB limit; nothing was written",
                edited.len()
            )));
        }
        crate::fsgate::write_atomic(&path, edited.as_bytes()).map_err(|e| file_error("file_path", &shown, e))?;
        Ok(json!({"ok": true, "path": shown, "replacements": now}))
    })
    .await
}

/// How often `old` occurs in `text`: at least once, and exactly once unless `replace_all`.
fn occurrences(text: &str, old: &str, replace_all: bool, shown: &str) -> Result<usize, ToolError> {
    let count = text.matches(old).count();
    if count == 0 {
        return Err(ToolError::new(format!("old_string: not found in {shown}; nothing was changed")));
    }
    if count > 1 && !replace_all {
        return Err(ToolError::new(format!(
            "old_string: occurs {count} times in {shown}; add surrounding text to make it unique, or set \
             replace_all to true; nothing was changed"
        ))
        .with("occurrences", count));
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::occurrences;

    #[test]
    fn old_string_must_occur_and_be_unique_unless_replace_all() {
        assert_eq!(occurrences("a b a", "b", false, "f").unwrap(), 1);
        assert!(occurrences("a b a", "c", false, "f").unwrap_err().message().contains("not found"));
        assert!(occurrences("a b a", "a", false, "f").unwrap_err().message().contains("occurs 2 times"));
        assert_eq!(occurrences("a b a", "a", true, "f").unwrap(), 2);
    }
}

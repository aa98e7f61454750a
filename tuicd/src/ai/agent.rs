//! How each agent CLI is run headless, and how its output envelope is unwrapped. The flags are
//! those of the pinned CLIs (tests/agents/package.json): Claude Code 2.1, Codex 0.171, Gemini
//! CLI 0.61.

use serde_json::Value;

use super::AiError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Claude,
    Codex,
    Gemini,
}

/// Gemini CLI appends its `-p` text to what stdin holds: the task is on stdin, this points at it.
const GEMINI_PROMPT: &str = "Do the task described above and answer with the JSON object it asks for.";

impl Kind {
    pub(crate) fn from_setting(setting: &str) -> Option<Kind> {
        match crate::config::model::headless_agent_kind(setting)? {
            "claude" => Some(Kind::Claude),
            "codex" => Some(Kind::Codex),
            "gemini" => Some(Kind::Gemini),
            _ => None,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Claude => "claude",
            Kind::Codex => "codex",
            Kind::Gemini => "gemini",
        }
    }

    /// The non-interactive command line; the prompt comes on stdin.
    pub(crate) fn args(self) -> Vec<&'static str> {
        match self {
            // No tools at all, no MCP servers but the (empty) --mcp-config, nothing saved.
            Kind::Claude => vec![
                "-p",
                "--output-format",
                "json",
                "--tools",
                "",
                "--strict-mcp-config",
                "--no-session-persistence",
                "--permission-mode",
                "default",
            ],
            // `-` reads the prompt from stdin; a read-only sandbox; no session files kept.
            Kind::Codex => {
                vec!["exec", "--json", "--sandbox", "read-only", "--skip-git-repo-check", "--ephemeral", "-"]
            }
            // Plan mode: read-only tools only.
            Kind::Gemini => vec!["-p", GEMINI_PROMPT, "--output-format", "json", "--approval-mode", "plan"],
        }
    }

    /// The text of the agent's final answer, out of its output envelope; an error names the
    /// agent and what it reported.
    pub(crate) fn final_text(self, code: Option<i32>, stdout: &str, stderr: &str) -> Result<String, AiError> {
        let agent = self.name();
        let failed = |message: String| AiError::Failed { agent, message };
        let envelope = match self {
            Kind::Claude => claude(stdout),
            Kind::Codex => codex(stdout),
            Kind::Gemini => gemini(stdout),
        };
        match (envelope, code) {
            (Envelope::Error(message), _) => Err(failed(message)),
            (_, code) if code != Some(0) => {
                let how = code.map_or_else(|| "was ended by a signal".to_owned(), |c| format!("exited with code {c}"));
                Err(failed(format!("it {how}: {}", last_words(stderr, stdout))))
            }
            (Envelope::Answer(text), _) => Ok(text),
            (Envelope::Unreadable(message), _) => Err(AiError::BadReply { agent, message }),
        }
    }
}

enum Envelope {
    Answer(String),
    Error(String),
    Unreadable(String),
}

/// `claude -p --output-format json`: one object, `{type: "result", is_error, result}`.
fn claude(stdout: &str) -> Envelope {
    let Ok(v) = serde_json::from_str::<Value>(stdout.trim()) else {
        return Envelope::Unreadable(format!("its output is not Claude Code's JSON result: {}", head(stdout)));
    };
    let result = v.get("result").and_then(Value::as_str);
    if v.get("is_error").and_then(Value::as_bool) == Some(true) {
        let subtype = v.get("subtype").and_then(Value::as_str).unwrap_or("error");
        return Envelope::Error(format!("{subtype}: {}", result.unwrap_or("no message")));
    }
    match result {
        Some(text) => Envelope::Answer(text.to_owned()),
        None => Envelope::Unreadable(format!("its JSON result has no 'result' text: {}", head(stdout))),
    }
}

/// `codex exec --json`: JSON lines; the answer is the last `agent_message` item.
fn codex(stdout: &str) -> Envelope {
    let mut answer = None;
    for line in stdout.lines().filter(|l| l.trim_start().starts_with('{')) {
        let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
        match v.get("type").and_then(Value::as_str) {
            Some("item.completed") => {
                let item = &v["item"];
                if item.get("type").and_then(Value::as_str) == Some("agent_message")
                    && let Some(text) = item.get("text").and_then(Value::as_str)
                {
                    answer = Some(text.to_owned());
                }
            }
            Some("turn.failed") => {
                let message = v["error"]["message"].as_str().unwrap_or("the turn failed");
                return Envelope::Error(message.to_owned());
            }
            Some("error") => return Envelope::Error(v["message"].as_str().unwrap_or("an error").to_owned()),
            _ => {}
        }
    }
    answer.map_or_else(
        || Envelope::Unreadable(format!("its JSON events hold no agent message: {}", head(stdout))),
        Envelope::Answer,
    )
}

/// `gemini -p … --output-format json`: one object, `{response, stats}` or `{error}`.
fn gemini(stdout: &str) -> Envelope {
    let Ok(v) = serde_json::from_str::<Value>(stdout.trim()) else {
        return Envelope::Unreadable(format!("its output is not Gemini CLI's JSON: {}", head(stdout)));
    };
    if let Some(error) = v.get("error").filter(|e| !e.is_null()) {
        let message = error.get("message").and_then(Value::as_str).map_or_else(|| error.to_string(), str::to_owned);
        return Envelope::Error(message);
    }
    match v.get("response").and_then(Value::as_str) {
        Some(text) => Envelope::Answer(text.to_owned()),
        None => Envelope::Unreadable(format!("its JSON has no 'response' text: {}", head(stdout))),
    }
}

/// The start of `text`, for an error message.
pub(super) fn head(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(200) {
        Some((at, _)) => format!("'{}…'", &text[..at]),
        None if text.is_empty() => "(nothing)".into(),
        None => format!("'{text}'"),
    }
}

/// What a failed run said last: stderr's last non-empty line, else stdout's.
fn last_words(stderr: &str, stdout: &str) -> String {
    let last = |t: &str| t.lines().rev().find(|l| !l.trim().is_empty()).map(|l| l.trim().to_owned());
    last(stderr).or_else(|| last(stdout)).unwrap_or_else(|| "no message".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_envelope_gives_the_answer_or_the_reported_error() {
        let ok = r#"{"type":"result","subtype":"success","is_error":false,"result":"{}"}"#;
        assert_eq!(Kind::Claude.final_text(Some(0), ok, "").unwrap(), "{}");
        let err = r#"{"type":"result","subtype":"error_during_execution","is_error":true,"result":"API Error: 500"}"#;
        let e = Kind::Claude.final_text(Some(1), err, "").unwrap_err().to_string();
        assert!(e.contains("'claude' failed") && e.contains("API Error: 500"), "{e}");

        let events = "{\"type\":\"thread.started\"}\n{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"[1]\"}}\n";
        assert_eq!(Kind::Codex.final_text(Some(0), events, "").unwrap(), "[1]");
        let failed = "{\"type\":\"turn.failed\",\"error\":{\"message\":\"stream disconnected\"}}\n";
        let e = Kind::Codex.final_text(Some(1), failed, "").unwrap_err().to_string();
        assert!(e.contains("stream disconnected"), "{e}");

        assert_eq!(Kind::Gemini.final_text(Some(0), r#"{"response":"x","stats":{}}"#, "").unwrap(), "x");
        let e = Kind::Gemini.final_text(Some(0), "Loading...", "").unwrap_err();
        assert!(matches!(e, AiError::BadReply { agent: "gemini", .. }), "{e}");
        let e = Kind::Gemini.final_text(Some(41), "", "boom\n").unwrap_err().to_string();
        assert!(e.contains("exited with code 41: boom"), "{e}");
    }

    #[test]
    fn the_setting_picks_the_cli_by_its_file_name() {
        assert_eq!(Kind::from_setting("claude"), Some(Kind::Claude));
        assert_eq!(Kind::from_setting("/opt/node_modules/.bin/gemini"), Some(Kind::Gemini));
        assert_eq!(Kind::from_setting("codex "), Some(Kind::Codex));
        assert_eq!(Kind::from_setting("aider"), None);
        assert_eq!(Kind::from_setting(""), None);
    }
}

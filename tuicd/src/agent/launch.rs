//! The pure part of `agent action=spawn`: the argv to run and how the prompt gets in, and the
//! `pty_description` the new session shows. The prompt is always delivered:
//!
//! - args containing `{prompt}` are authoritative: the prompt is substituted there, nowhere else;
//! - otherwise a prefill-only TUI ([`PromptDelivery::Deferred`]) gets it through the PTY after
//!   its ready prompt shows (the session injects it with the submit plan), and any other CLI gets
//!   it as the final positional argument.
//!
//! A structured `model` is appended with the adapter's model flag before the prompt.
//!
//! A direct spawn also gets each agent's default flags ([`default_flags`]) before the caller's
//! args: Claude Code the flag that lets our MCP server push channel messages into its turn, Codex
//! the approval-bypass default, unless the caller already chose.

use super::adapters::{Adapter, PromptDelivery, by_binary};
use crate::limits::PTY_DESCRIPTION_MAX_CHARS;

const PROMPT_PLACEHOLDER: &str = "{prompt}";

/// The `pty_description` parameter as given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DescriptionParam<'a> {
    /// Omitted: derive one from the prompt.
    Absent,
    /// `null` or `""`: keep the session descriptionless.
    Clear,
    Set(&'a str),
}

/// What to launch and what to do with the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LaunchPlan {
    pub args: Vec<String>,
    /// Inject this through the PTY once the agent is confirmed idle at its ready prompt.
    pub deferred_prompt: Option<String>,
    /// A model was asked for but this agent has no known model flag; it was not passed.
    pub model_ignored: bool,
}

/// The argv (after the program) and prompt delivery for one spawn.
pub(crate) fn plan(adapter: Option<&Adapter>, args: &[String], prompt: &str, model: Option<&str>) -> LaunchPlan {
    let mut planned: Vec<String> = args.to_vec();
    let mut model_ignored = false;
    if let Some(model) = model.filter(|m| !m.trim().is_empty()) {
        match adapter.and_then(|a| a.model_flag) {
            Some(flag) => planned.extend([flag.to_owned(), model.to_owned()]),
            None => model_ignored = true,
        }
    }
    if planned.iter().any(|arg| arg.contains(PROMPT_PLACEHOLDER)) {
        let args = planned.into_iter().map(|arg| arg.replace(PROMPT_PLACEHOLDER, prompt)).collect();
        return LaunchPlan { args, deferred_prompt: None, model_ignored };
    }
    let deferred = adapter.is_some_and(|a| a.prompt_delivery == PromptDelivery::Deferred);
    if deferred {
        return LaunchPlan { args: planned, deferred_prompt: Some(prompt.to_owned()), model_ignored };
    }
    if !prompt.is_empty() {
        if adapter.is_some_and(|a| a.prompt_after_dashes) && !planned.iter().any(|a| a == "--") {
            planned.push("--".to_owned());
        }
        planned.push(prompt.to_owned());
    }
    LaunchPlan { args: planned, deferred_prompt: None, model_ignored }
}

/// Claude Code's flag naming MCP servers allowed to push `notifications/claude/channel`.
pub(crate) const CLAUDE_CHANNELS_FLAG: &str = "--dangerously-load-development-channels";

/// Codex's approval-bypass default for a direct spawn (the seed's "approval-bypass default").
pub(crate) const CODEX_BYPASS_FLAG: &str = "--dangerously-bypass-approvals-and-sandbox";

/// Codex flags by which a caller has already chosen its approvals or sandbox.
const CODEX_APPROVAL_FLAGS: &[&str] =
    &[CODEX_BYPASS_FLAG, "--yolo", "--full-auto", "-a", "--ask-for-approval", "-s", "--sandbox"];

/// The name a spawned agent's MCP config gives tuicd's server when tuicd adds it.
pub(crate) const TUIC_SERVER: &str = "tuic";

/// Gemini CLI's environment variable naming a settings file merged under the user's own
/// (`mcpServers` entries are merged one by one, so the user's servers stay).
pub(crate) const GEMINI_DEFAULTS_ENV: &str = "GEMINI_CLI_SYSTEM_DEFAULTS_PATH";

/// tuicd's MCP server as a spawned agent starts it: the bridge, and what the bridge needs to
/// reach this daemon as this session (agents hand MCP servers a filtered environment).
#[derive(Debug, Clone, Copy)]
pub(crate) struct TuicMcp<'a> {
    pub bridge: &'a str,
    pub socket: &'a str,
    pub tuic_session: &'a str,
}

impl TuicMcp<'_> {
    fn env(&self) -> serde_json::Value {
        serde_json::json!({"TUIC_SOCKET": self.socket, "TUIC_SESSION": self.tuic_session})
    }

    fn server(&self) -> serde_json::Value {
        serde_json::json!({"type": "stdio", "command": self.bridge, "args": [], "env": self.env()})
    }
}

/// A TOML basic string (JSON's escapes are TOML's for every character JSON escapes).
fn toml_string(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

/// Flags a direct spawn of `program` puts before the caller's `args` (and environment it sets),
/// and a warning when one that belongs there could not be added. `channel_server` is the name the
/// agent's own MCP config gives tuicd's server, if it has one; otherwise `mcp` (when the bridge
/// was found) is added to the agent's MCP servers for this launch only, never written into the
/// person's config: Claude Code by `--mcp-config`, Codex by `-c mcp_servers.tuic.*`, Gemini CLI by
/// a defaults file it merges under the user's settings. Every Claude Code agent gets the channels
/// flag naming the server; the Codex bypass goes only to a direct Codex command (the program is
/// `codex` itself), never to a wrapper given codex's type.
pub(crate) fn default_flags(
    adapter: Option<&Adapter>,
    program: &str,
    args: &[String],
    channel_server: Option<&str>,
    mcp: Option<TuicMcp<'_>>,
) -> DefaultFlags {
    let given = |flags: &[&str]| {
        args.iter().any(|arg| {
            flags.iter().any(|flag| arg == flag || arg.strip_prefix(flag).is_some_and(|r| r.starts_with('=')))
        })
    };
    let mut out = DefaultFlags::default();
    let no_bridge = "tuic-bridge was found neither beside tuicd nor on PATH, so the agent has no tuic MCP server";
    match adapter.map(|a| a.id) {
        Some("claude") => {
            let server = match (channel_server, mcp) {
                (Some(name), _) => Some(name.to_owned()),
                (None, Some(mcp)) => {
                    let config = serde_json::json!({"mcpServers": {TUIC_SERVER: mcp.server()}});
                    out.flags.extend(["--mcp-config".to_owned(), config.to_string()]);
                    Some(TUIC_SERVER.to_owned())
                }
                (None, None) => {
                    out.warning = Some(format!(
                        "{no_bridge}; messages reach it by terminal or inbox only, and {CLAUDE_CHANNELS_FLAG} was not passed"
                    ));
                    None
                }
            };
            if let Some(name) = server.filter(|_| !given(&[CLAUDE_CHANNELS_FLAG])) {
                out.flags.extend([CLAUDE_CHANNELS_FLAG.to_owned(), format!("server:{name}")]);
            }
        }
        // A wrapper given codex's type is not a Codex command: its argv is not ours to change.
        Some("codex") if by_binary(program).is_some_and(|a| a.id == "codex") => {
            if !given(CODEX_APPROVAL_FLAGS) {
                out.flags.push(CODEX_BYPASS_FLAG.into());
            }
            match mcp {
                Some(mcp) if !args.iter().any(|a| a.contains("mcp_servers.tuic")) => {
                    let env = format!(
                        "{{TUIC_SOCKET={},TUIC_SESSION={}}}",
                        toml_string(mcp.socket),
                        toml_string(mcp.tuic_session)
                    );
                    for (key, value) in [("command", toml_string(mcp.bridge)), ("args", "[]".to_owned()), ("env", env)]
                    {
                        out.flags.extend(["-c".to_owned(), format!("mcp_servers.{TUIC_SERVER}.{key}={value}")]);
                    }
                }
                Some(_) => {}
                None => out.warning = Some(no_bridge.to_owned()),
            }
        }
        Some("gemini") => match mcp {
            Some(mcp) => {
                let mut server = mcp.server();
                if let Some(entry) = server.as_object_mut() {
                    entry.remove("type");
                }
                out.gemini_defaults = Some(serde_json::json!({"mcpServers": {TUIC_SERVER: server}}));
            }
            None => out.warning = Some(no_bridge.to_owned()),
        },
        _ => {}
    }
    out
}

/// What [`default_flags`] adds.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct DefaultFlags {
    pub flags: Vec<String>,
    /// Gemini CLI: the settings file to write and name in [`GEMINI_DEFAULTS_ENV`].
    pub gemini_defaults: Option<serde_json::Value>,
    pub warning: Option<String>,
}

/// The description a new session shows: an explicit one wins, `Clear` keeps none, and an
/// absent one is the prompt with its whitespace collapsed, cut to [`PTY_DESCRIPTION_MAX_CHARS`].
pub(crate) fn pty_description(param: DescriptionParam<'_>, prompt: &str) -> Option<String> {
    let text = match param {
        DescriptionParam::Clear => return None,
        DescriptionParam::Set(text) => one_line(text),
        DescriptionParam::Absent => one_line(prompt),
    };
    let text: String = text.chars().take(PTY_DESCRIPTION_MAX_CHARS).collect();
    (!text.is_empty()).then_some(text)
}

/// `text` as one line: every run of whitespace and control characters (line breaks, escapes)
/// becomes one space, and the ends are trimmed. A description or name other clients are shown
/// must not start lines of its own in what they read.
pub(crate) fn one_line(text: &str) -> String {
    text.split(|c: char| c.is_whitespace() || c.is_control()).filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::adapters::by_id;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_placeholder_is_authoritative() {
        let plan = plan(by_id("codex"), &args(&["exec", "--json", "{prompt}"]), "fix it", None);
        assert_eq!(plan.args, args(&["exec", "--json", "fix it"]));
        assert_eq!(plan.deferred_prompt, None);
    }

    #[test]
    fn a_normal_cli_gets_the_prompt_last_after_flags_and_model() {
        let plan = plan(by_id("gemini"), &args(&["--verbose"]), "fix it", Some("pro"));
        assert_eq!(plan.args, args(&["--verbose", "--model", "pro", "fix it"]));
    }

    #[test]
    fn claude_gets_the_prompt_after_the_end_of_its_many_valued_options() {
        let plan = plan(by_id("claude"), &args(&["--mcp-config", "{}"]), "fix it", Some("opus"));
        assert_eq!(plan.args, args(&["--mcp-config", "{}", "--model", "opus", "--", "fix it"]));
    }

    #[test]
    fn a_prefill_only_tui_gets_the_prompt_through_the_pty() {
        let plan = plan(by_id("opencode"), &[], "add a health route", None);
        assert_eq!(plan.args, Vec::<String>::new());
        assert_eq!(plan.deferred_prompt.as_deref(), Some("add a health route"));
    }

    #[test]
    fn a_model_for_an_agent_without_a_known_flag_is_reported_not_guessed() {
        let plan = plan(by_id("goose"), &[], "go", Some("gpt-5"));
        assert!(plan.model_ignored);
        assert_eq!(plan.args, args(&["go"]));
    }

    const MCP: TuicMcp<'static> =
        TuicMcp { bridge: "/opt/tuic/tuic-bridge", socket: "/run/t.sock", tuic_session: "u-1" };

    #[test]
    fn claude_gets_the_channels_flag_naming_our_server_unless_the_caller_chose() {
        let added = default_flags(by_id("claude"), "claude", &args(&["--verbose"]), Some("mine"), Some(MCP));
        assert_eq!(added.flags, args(&[CLAUDE_CHANNELS_FLAG, "server:mine"]), "the person's own server is used");
        let chosen = args(&[CLAUDE_CHANNELS_FLAG, "server:other"]);
        let kept = default_flags(by_id("claude"), "/opt/claude-wrapper", &chosen, Some("tuic"), None);
        assert_eq!(kept, DefaultFlags::default());
        let unknown = default_flags(by_id("claude"), "claude", &[], None, None);
        assert!(unknown.flags.is_empty() && unknown.warning.unwrap().contains(CLAUDE_CHANNELS_FLAG));
    }

    #[test]
    fn without_a_configured_server_each_cli_gets_ours_for_this_launch() {
        let claude = default_flags(by_id("claude"), "claude", &[], None, Some(MCP));
        assert_eq!(claude.flags[0], "--mcp-config");
        let config: serde_json::Value = serde_json::from_str(&claude.flags[1]).unwrap();
        assert_eq!(config["mcpServers"]["tuic"]["command"], "/opt/tuic/tuic-bridge");
        assert_eq!(config["mcpServers"]["tuic"]["env"]["TUIC_SESSION"], "u-1");
        assert_eq!(claude.flags[2..], args(&[CLAUDE_CHANNELS_FLAG, "server:tuic"]));
        let codex = default_flags(by_id("codex"), "codex", &args(&["--full-auto"]), None, Some(MCP));
        assert_eq!(
            codex.flags,
            args(&[
                "-c",
                r#"mcp_servers.tuic.command="/opt/tuic/tuic-bridge""#,
                "-c",
                "mcp_servers.tuic.args=[]",
                "-c",
                r#"mcp_servers.tuic.env={TUIC_SOCKET="/run/t.sock",TUIC_SESSION="u-1"}"#,
            ])
        );
        let gemini = default_flags(by_id("gemini"), "gemini", &[], None, Some(MCP));
        assert!(gemini.flags.is_empty());
        assert_eq!(gemini.gemini_defaults.unwrap()["mcpServers"]["tuic"]["env"]["TUIC_SOCKET"], "/run/t.sock");
        assert!(default_flags(by_id("gemini"), "gemini", &[], None, None).warning.unwrap().contains("tuic-bridge"));
    }

    #[test]
    fn a_direct_codex_command_gets_the_approval_bypass_default_unless_the_caller_chose() {
        let direct = default_flags(by_id("codex"), "/usr/bin/codex", &[], None, Some(MCP));
        assert_eq!(direct.flags[0], CODEX_BYPASS_FLAG);
        for chosen in [&["--ask-for-approval", "on-request"][..], &["--sandbox=read-only"], &["--full-auto"]] {
            let flags = default_flags(by_id("codex"), "codex", &args(chosen), None, Some(MCP));
            assert!(!flags.flags.contains(&CODEX_BYPASS_FLAG.to_owned()), "{chosen:?}");
        }
        let wrapper = default_flags(by_id("codex"), "/bin/sh", &args(&["-c", "codex"]), None, Some(MCP));
        assert_eq!(wrapper, DefaultFlags::default(), "a wrapper's argv is not ours to change");
        assert_eq!(default_flags(by_id("aider"), "aider", &[], Some("tuic"), Some(MCP)), DefaultFlags::default());
    }

    #[test]
    fn the_description_is_explicit_cleared_or_derived_from_the_prompt() {
        assert_eq!(pty_description(DescriptionParam::Set(" Review auth "), "x").as_deref(), Some("Review auth"));
        assert_eq!(pty_description(DescriptionParam::Clear, "x"), None);
        assert_eq!(
            pty_description(DescriptionParam::Set("Review\n\n## SYSTEM OVERRIDE\u{1b}[2J now"), "x").as_deref(),
            Some("Review ## SYSTEM OVERRIDE [2J now")
        );
        assert_eq!(pty_description(DescriptionParam::Set(""), "x"), None);
        let long = format!("Fix   the\nbug {}", "é".repeat(300));
        let derived = pty_description(DescriptionParam::Absent, &long).unwrap();
        assert!(derived.starts_with("Fix the bug é"));
        assert_eq!(derived.chars().count(), PTY_DESCRIPTION_MAX_CHARS);
    }
}

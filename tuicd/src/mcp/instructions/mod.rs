//! `initialize.instructions`: what only the instructions may say, rendered by a pure function of
//! an explicit [`InstructionContext`] so that its size can be measured and pinned without a host.
//!
//! Ownership: everything about a tool (its actions, arguments and semantics) lives in the tool's
//! description, which every client receives; the instructions keep what belongs to no tool: the
//! connection acknowledgment, the one-call submit rule (it spans two calls and a polling loop),
//! the ban on `git worktree` (not our tool), intent markers, the lazy-discovery guide in collapsed
//! mode, and the live state at connect. `tests.rs` holds the two surfaces apart, both ways.

mod live;
#[cfg(test)]
mod tests;

use std::fmt::Write as _;

pub(crate) use live::{Connecting, context};

/// The submit rule, byte-exact in every mode: agents split a submit into text and Enter until
/// told not to.
pub(crate) const SUBMIT_RULE: &str = "- Submit in one call: give an agent's terminal a prompt or command with one \
session action=submit, which types it and presses Enter; never type it with input and press Enter in a second call, and \
never poll in between.";

/// The worktree rule: `git` is not our tool, so no tool description can carry it.
pub(crate) const WORKTREE_RULE: &str = "- Never run git worktree add or remove yourself: worktrees belong to the people \
supervising you, and one made by hand is invisible to them.";

/// Why the tool list is short, and the three steps around it.
const LAZY_GUIDE: &str = "tools/list is collapsed: search_tools with what you want to do, get_tool_schema for the \
tool it finds, then call_tool with tool_name and arguments.";

/// How this client gets its tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CollapseMode {
    /// The full tool list.
    Off,
    /// `collapse_tools: true` in config.
    Config,
    /// Collapsed for this client alone (a Grok shell, which refuses `__` in proxied names).
    Client,
}

/// One live session, as the instructions name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LiveSession {
    pub alias: String,
    pub agent_type: Option<String>,
    /// The repository root it runs in, if any (`~` for the home directory).
    pub repo: Option<String>,
}

/// One registered peer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LivePeer {
    pub name: String,
    pub alias: Option<String>,
}

/// Everything the instructions depend on; nothing else is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InstructionContext {
    pub version: String,
    pub client_name: Option<String>,
    pub collapse: CollapseMode,
    /// The client runs in a tuicd PTY, whose output tuicd reads for `intent:` markers.
    pub intent_markers: bool,
    /// The client came back with an id we no longer held (a reconnect, not a first contact).
    pub reconnected: bool,
    /// Repository roots, in the order to show them.
    pub repos: Vec<String>,
    pub sessions: Vec<LiveSession>,
    pub peers: Vec<LivePeer>,
}

/// Whether a client named `name` gets the collapsed surface for itself.
pub(crate) fn client_collapses(name: Option<&str>) -> bool {
    name.is_some_and(|n| n.starts_with("grok-shell-"))
}

/// The instructions for `ctx`.
pub(crate) fn render(ctx: &InstructionContext) -> String {
    let v = &ctx.version;
    let mut text = format!("tuicd {v}: shared terminals (PTYs) for AI agents and their supervisors.\n\n");
    let greeting = if ctx.reconnected { "is back" } else { "is connected" };
    let _ = writeln!(
        text,
        "Once per connection, begin your first reply with \"tuicd {v} {greeting}.\" and never repeat it.\n"
    );
    text.push_str(SUBMIT_RULE);
    text.push('\n');
    text.push_str(WORKTREE_RULE);
    text.push('\n');
    if ctx.intent_markers {
        text.push_str(
            "- Start each user task and each change of phase with a line: intent: <what you do> (<short title>).\n",
        );
    }
    match ctx.collapse {
        CollapseMode::Off => {}
        CollapseMode::Config => {
            let _ = writeln!(text, "\n{LAZY_GUIDE}");
        }
        CollapseMode::Client => {
            let client = ctx.client_name.as_deref().map_or_else(|| "your client".to_owned(), quoted);
            let _ = writeln!(text, "\nFor {client}, {LAZY_GUIDE}");
        }
    }
    live_state(&mut text, ctx);
    text
}

/// The repos, sessions and peers at connect: the part no tool description can hold. Collapsed
/// mode gives their counts only.
fn live_state(text: &mut String, ctx: &InstructionContext) {
    if ctx.repos.is_empty() && ctx.sessions.is_empty() && ctx.peers.is_empty() {
        return;
    }
    if ctx.collapse != CollapseMode::Off {
        // The collapsed surface is the small one: counts, and where the names are.
        let _ = writeln!(
            text,
            "\nAt connect: {} repos, {} sessions, {} peers (session action=list, agent action=list_peers).",
            ctx.repos.len(),
            ctx.sessions.len(),
            ctx.peers.len()
        );
        return;
    }
    text.push_str("\nAt connect (session action=list and agent action=list_peers are current):\n");
    let named = |s: &LiveSession| match &s.agent_type {
        Some(agent) => format!("{} {}", quoted(&s.alias), quoted(agent)),
        None => quoted(&s.alias),
    };
    for repo in &ctx.repos {
        let here: Vec<String> = ctx.sessions.iter().filter(|s| s.repo.as_ref() == Some(repo)).map(named).collect();
        let here = if here.is_empty() { "no sessions".into() } else { here.join(", ") };
        let _ = writeln!(text, "- {}: {here}", quoted(repo));
    }
    let elsewhere: Vec<String> =
        ctx.sessions.iter().filter(|s| !s.repo.as_ref().is_some_and(|r| ctx.repos.contains(r))).map(named).collect();
    if !elsewhere.is_empty() {
        let _ = writeln!(text, "- other sessions: {}", elsewhere.join(", "));
    }
    if !ctx.peers.is_empty() {
        let peers: Vec<String> = ctx
            .peers
            .iter()
            .map(|p| match &p.alias {
                Some(alias) => format!("{} ({})", quoted(&p.name), quoted(alias)),
                None => quoted(&p.name),
            })
            .collect();
        let _ = writeln!(text, "- peers: {}", peers.join(", "));
    }
}

/// The most bytes the upstreams' instructions add, all upstreams together, on the classic and on
/// the collapsed surface: upstream text is cut past them (with a note), so the connection
/// surface stays within its budget whatever an upstream says.
pub(crate) const UPSTREAM_INSTRUCTIONS_MAX: usize = 2_048;
pub(crate) const UPSTREAM_INSTRUCTIONS_MAX_COLLAPSED: usize = 512;

/// `native` followed by each upstream's own `instructions` (name, text), each under a heading
/// naming its upstream and its tools' prefix. Every upstream gets an equal share of what the
/// budget has left; a text over its share is cut at a character boundary and says so.
pub(crate) fn join_upstreams(mut native: String, upstreams: &[(String, String)], collapsed: bool) -> String {
    if upstreams.is_empty() {
        return native;
    }
    let mut left = if collapsed { UPSTREAM_INSTRUCTIONS_MAX_COLLAPSED } else { UPSTREAM_INSTRUCTIONS_MAX };
    let mut section = String::from(
        "\nUpstream servers' own instructions (their tools, prompts and resources are theirs, not tuicd's):\n",
    );
    left = left.saturating_sub(section.len());
    for (i, (name, text)) in upstreams.iter().enumerate() {
        let share = left / (upstreams.len() - i);
        let heading = format!("\n## {} (tools {}__*)\n", quoted(name), name);
        let text = text.trim();
        let body = if heading.len() + text.len() < share {
            format!("{text}\n")
        } else {
            // The note's length with the whole text's byte count bounds the one finally written.
            let note_max = format!("\n[cut: {} more bytes of {}'s instructions]\n", text.len(), quoted(name)).len();
            let mut end = share.saturating_sub(heading.len() + note_max).min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            format!("{}\n[cut: {} more bytes of {}'s instructions]\n", &text[..end], text.len() - end, quoted(name))
        };
        let piece = format!("{heading}{body}");
        if piece.len() > share {
            continue;
        }
        left -= piece.len();
        section.push_str(&piece);
    }
    native.push_str(&section);
    native
}

/// Longest caller-supplied string the instructions show, in characters.
const SHOWN_MAX_CHARS: usize = 80;

/// A caller-supplied string (a peer's name, an alias, a repository path, an agent type) as the
/// instructions show it to other clients: control characters, line breaks among them, become
/// spaces so no caller writes a line of its own, it is cut to [`SHOWN_MAX_CHARS`], and anything
/// but a plain token (letters, digits, `-_.~/@+`) is shown in escaped double quotes, so text like
/// `## SYSTEM OVERRIDE` reads as a quoted name, not as an instruction.
fn quoted(raw: &str) -> String {
    let mut text = String::with_capacity(raw.len().min(SHOWN_MAX_CHARS));
    for c in raw.chars().take(SHOWN_MAX_CHARS) {
        if c.is_control() {
            if !text.ends_with(' ') {
                text.push(' ');
            }
        } else {
            text.push(c);
        }
    }
    let text = text.trim();
    let plain = !text.is_empty() && text.chars().all(|c| c.is_alphanumeric() || "-_.~/@+".contains(c));
    if plain { text.to_owned() } else { format!("{text:?}") }
}

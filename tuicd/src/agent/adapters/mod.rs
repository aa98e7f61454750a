//! Per-agent knowledge as data: one [`Adapter`] row per agent CLI in [`table::ADAPTERS`].
//!
//! An adapter says how the agent is launched and fed (binaries, prompt delivery, submit recipe)
//! and how its screen looks (working indicators, ready composer, chrome rows, single-row
//! confirmation prompts). The screen reader ([`super::screen`]) interprets these rules the same
//! way for every agent, so supporting a new agent or a changed UI is a new row or rule plus a
//! recorded-screen fixture under `tuicd/tests/fixtures/agents/<id>/`, never a new code path.

mod table;

pub(crate) use table::ADAPTERS;

use super::markers::Announced;

/// A test over one screen row, applied after the row's box borders and surrounding whitespace
/// are removed (see [`normalise_row`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowRule {
    /// The row contains this text.
    Contains(&'static str),
    /// The row starts with this text.
    Prefix(&'static str),
    /// The row is exactly this text.
    Exact(&'static str),
    /// The row starts with one of these spinner glyphs, a space, and then contains this text.
    Spinner { glyphs: &'static str, contains: &'static str },
    /// The row starts with a character in `first..=last` (a whole block of spinner glyphs, such
    /// as the braille patterns), then a space.
    GlyphRange { first: char, last: char },
}

/// How `agent action=spawn` hands the initial prompt to the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PromptDelivery {
    /// The prompt is the final positional argument.
    Argv,
    /// A prefill-only TUI: the prompt is injected through the PTY once the ready prompt shows.
    Deferred,
}

/// When a submitted text is wrapped in bracketed paste.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Paste {
    Multiline,
    /// Every prompt: the CLI mangles typed text (drops characters it takes as shortcuts).
    Always,
}

/// A window-title rule: while the title matches `rule`, the CLI announces `means`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TitleRule {
    pub rule: RowRule,
    pub means: Announced,
}

/// Where the composer's text is read from the screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ComposerRule {
    /// What starts the composer row before its text, matched on the row with only its box
    /// border removed (not trimmed: the prompt's own trailing space may be a no-break space that
    /// tells the composer from a transcript echo of a past prompt).
    pub prompts: &'static [&'static str],
    /// What the CLI shows in an empty composer (placeholder hints), matched on the text.
    pub placeholders: &'static [RowRule],
}

/// The byte recipe that submits a line to this agent's composer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SubmitRecipe {
    /// Send Ctrl-U first, so a stray partial composer cannot prefix the text.
    pub clear_first: bool,
    pub paste: Paste,
    /// Pause between the text and Enter: raw-mode TUIs read a paste and a CR in one read as a
    /// pasted newline, not a submit.
    pub enter_gap_ms: u64,
    /// The keys that empty a composer holding text without doing anything else, each written on
    /// its own after the recipe's gap (Claude Code reads two Escapes in one read as Alt+Esc).
    pub clear: &'static [&'static [u8]],
}

/// Everything tuicd knows about one agent CLI.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Adapter {
    /// The wire `agent_type`.
    pub id: &'static str,
    pub name: &'static str,
    /// Executable names that identify this agent (first is the canonical one).
    pub binaries: &'static [&'static str],
    pub prompt_delivery: PromptDelivery,
    pub submit: SubmitRecipe,
    /// Rows that mean the agent is working right now (spinners, "esc to interrupt").
    pub working: &'static [RowRule],
    /// Rows that mean the composer is ready for input.
    pub ready: &'static [RowRule],
    /// The ready row must be among this many bottom non-empty rows.
    pub ready_scope: usize,
    /// The ready row must also be the cursor row (line-oriented prompts such as Aider's).
    pub ready_at_cursor: bool,
    /// Rows that change by themselves (status bars, footers, timers): never output movement.
    pub chrome: &'static [RowRule],
    /// Single-row confident questions, e.g. Aider's `(Y)es/(N)o`, looked for in the bottom rows.
    pub confirm_prompts: &'static [RowRule],
    /// The flag that selects a model (`--model`), when the CLI has one tuicd knows.
    pub model_flag: Option<&'static str>,
    /// Window titles that announce the CLI's state; the first matching rule wins.
    pub titles: &'static [TitleRule],
    /// How to read the composer's text from the screen, when the CLI's composer is known.
    pub composer: Option<ComposerRule>,
    /// The prompt in argv goes after `--`: options before it take several values and would read
    /// it as one more (Claude Code's `--mcp-config` and channels flags).
    pub prompt_after_dashes: bool,
    /// Text in a descendant's command line that marks the CLI's own process (a native binary a
    /// launcher starts, a re-launch with other runtime flags): the agent itself, never work.
    pub own_processes: &'static [&'static str],
}

impl RowRule {
    /// Tests an already normalised row.
    pub(crate) fn matches(&self, row: &str) -> bool {
        match *self {
            RowRule::Contains(text) => row.contains(text),
            RowRule::Prefix(text) => row.starts_with(text),
            RowRule::Exact(text) => row == text,
            RowRule::Spinner { glyphs, contains } => {
                let mut chars = row.chars();
                chars.next().is_some_and(|c| glyphs.contains(c))
                    && chars.next() == Some(' ')
                    && chars.as_str().contains(contains)
            }
            RowRule::GlyphRange { first, last } => {
                let mut chars = row.chars();
                chars.next().is_some_and(|c| (first..=last).contains(&c)) && chars.next() == Some(' ')
            }
        }
    }
}

/// Whether any rule matches the row.
pub(crate) fn any_match(rules: &[RowRule], row: &str) -> bool {
    rules.iter().any(|rule| rule.matches(row))
}

const BORDERS: &[char] = &['│', '┃', '║', '▌', '▎', '|'];

/// The row without surrounding whitespace and one box border on each side.
pub(crate) fn normalise_row(row: &str) -> &str {
    let s = row.trim();
    let s = s.strip_prefix(BORDERS).map_or(s, str::trim_start);
    s.strip_suffix(BORDERS).map_or(s, str::trim_end)
}

/// A row of nothing but box-drawing and rule characters (or nothing at all).
pub(crate) fn is_border(row: &str) -> bool {
    row.chars().all(|c| c.is_whitespace() || ('\u{2500}'..='\u{257f}').contains(&c) || "▔▁▀▄-=_".contains(c))
}

impl Adapter {
    /// The state the window title announces, by the first matching title rule.
    pub(crate) fn title_state(&self, title: &str) -> Option<Announced> {
        let title = title.trim();
        self.titles.iter().find(|t| t.rule.matches(title)).map(|t| t.means)
    }

    /// The composer's text on this screen: `Some("")` for an empty composer (placeholder only),
    /// `None` when no composer row is in view among the bottom `ready_scope` rows.
    pub(crate) fn composer_text(&self, rows: &[&str]) -> Option<String> {
        let composer = self.composer?;
        let candidates = rows.iter().rev().filter(|r| !r.trim().is_empty() && !is_border(r)).take(self.ready_scope);
        for row in candidates {
            let row = strip_border(row);
            for prompt in composer.prompts {
                let text = if let Some(text) = row.strip_prefix(prompt) {
                    text
                } else if row.trim_end() == prompt.trim_end() {
                    ""
                } else {
                    continue;
                };
                let text = text.trim();
                // The selected option of a numbered dialog (`› 1. Yes, proceed`) is not a composer.
                if numbered_option(text) {
                    continue;
                }
                return Some(if any_match(composer.placeholders, text) { String::new() } else { text.to_owned() });
            }
        }
        None
    }
}

/// `1. Yes`: a digit run, a dot and a space.
fn numbered_option(text: &str) -> bool {
    let digits = text.chars().take_while(char::is_ascii_digit).count();
    digits > 0 && text[digits..].starts_with(". ")
}

/// The row with leading spaces and one box border on each side removed, its own spacing kept.
fn strip_border(row: &str) -> &str {
    let s = row.trim_start_matches(' ');
    let s = s.strip_prefix(BORDERS).map_or(s, |s| s.strip_prefix(' ').unwrap_or(s));
    let s = s.trim_end_matches(' ');
    s.strip_suffix(BORDERS).map_or(s, |s| s.trim_end_matches(' '))
}

/// The adapter whose wire id is `id`.
pub(crate) fn by_id(id: &str) -> Option<&'static Adapter> {
    ADAPTERS.iter().find(|adapter| adapter.id == id)
}

/// The adapter for an executable, by its file name (`/usr/bin/claude`, `codex.exe`).
pub(crate) fn by_binary(program: &str) -> Option<&'static Adapter> {
    let file = program.rsplit(['/', '\\']).next().unwrap_or(program);
    let file = file.strip_suffix(".exe").unwrap_or(file);
    ADAPTERS.iter().find(|adapter| adapter.binaries.contains(&file))
}

impl SubmitRecipe {
    /// See [`Adapter::submit_bytes`].
    pub(crate) fn frame(&self, text: &str) -> (Vec<u8>, &'static [u8]) {
        let mut first = Vec::with_capacity(text.len() + 16);
        if self.clear_first {
            first.push(0x15);
        }
        let paste = match self.paste {
            Paste::Multiline => text.contains('\n'),
            Paste::Always => true,
        };
        if paste {
            first.extend_from_slice(b"\x1b[200~");
            first.extend_from_slice(text.as_bytes());
            first.extend_from_slice(b"\x1b[201~");
        } else {
            first.extend_from_slice(text.replace('\n', " ").as_bytes());
        }
        (first, b"\r")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adapters_are_found_by_id_and_by_binary_path() {
        assert_eq!(by_id("codex").unwrap().name, "Codex");
        assert_eq!(by_binary("/usr/local/bin/claude").unwrap().id, "claude");
        assert_eq!(by_binary("C:\\tools\\gemini.exe").unwrap().id, "gemini");
        assert!(by_binary("bash").is_none());
    }

    #[test]
    fn every_adapter_has_a_unique_id_and_binaries() {
        let mut ids: Vec<_> = ADAPTERS.iter().map(|a| a.id).collect();
        let mut binaries: Vec<_> = ADAPTERS.iter().flat_map(|a| a.binaries.iter().copied()).collect();
        let (id_count, binary_count) = (ids.len(), binaries.len());
        ids.sort_unstable();
        ids.dedup();
        binaries.sort_unstable();
        binaries.dedup();
        assert_eq!((ids.len(), binaries.len()), (id_count, binary_count));
        assert!(ADAPTERS.iter().all(|a| !a.binaries.is_empty()));
    }

    #[test]
    fn a_prefill_only_agent_gets_the_framed_pasted_submit() {
        let codex = by_id("codex").unwrap();
        assert_eq!(codex.prompt_delivery, PromptDelivery::Deferred);
        let (first, enter) = codex.submit.frame("fix it\nplease");
        assert_eq!(first, b"\x15\x1b[200~fix it\nplease\x1b[201~");
        assert_eq!(enter, b"\r");
        assert_eq!(codex.submit.frame("one line").0, b"\x15\x1b[200~one line\x1b[201~", "codex pastes every prompt");
        let claude = by_id("claude").unwrap();
        assert_eq!(claude.submit.frame("one line").0, b"one line");
    }

    #[test]
    fn rows_are_normalised_before_rules_apply() {
        assert_eq!(normalise_row("  │ > Try \"fix lint\"   │ "), "> Try \"fix lint\"");
        assert!(RowRule::Spinner { glyphs: "✢✻", contains: "…" }.matches("✢ Reading files… (3s)"));
        assert!(!RowRule::Spinner { glyphs: "✢✻", contains: "…" }.matches("✻ Worked for 1m 25s"));
        assert!(is_border("╭────────╮"));
        assert!(!is_border("│ hi │"));
    }
}

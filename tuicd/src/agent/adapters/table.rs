//! The adapter table. Each rule was written against the recorded screens in
//! `tuicd/tests/fixtures/agents/<id>/`; change a rule only together with a fixture that shows why.

use super::RowRule::{Contains, Exact, GlyphRange, Prefix, Spinner};
use super::{Adapter, Paste, PromptDelivery, RowRule, SubmitRecipe};
use super::{ComposerRule, TitleRule};
use crate::agent::markers::Announced;

/// Raw pair semantics: the text then Enter, paste only for multiline text.
const PLAIN: SubmitRecipe =
    SubmitRecipe { clear_first: false, paste: Paste::Multiline, enter_gap_ms: 50, clear: CTRL_U };
/// The framed injection for prefill-only TUIs: Ctrl-U, paste if multiline, a 50 ms gap, CR.
const FRAMED: SubmitRecipe =
    SubmitRecipe { clear_first: true, paste: Paste::Multiline, enter_gap_ms: 50, clear: CTRL_U };
const CTRL_U: &[&[u8]] = &[b"\x15"];

const BRAILLE: &str = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏";
const NONE: &[RowRule] = &[];

/// Agents with no screen knowledge yet: detected on PATH, tracked by markers and movement.
const fn generic(id: &'static str, name: &'static str, binaries: &'static [&'static str]) -> Adapter {
    Adapter {
        id,
        name,
        binaries,
        prompt_delivery: PromptDelivery::Argv,
        submit: PLAIN,
        working: NONE,
        ready: NONE,
        ready_scope: 0,
        ready_at_cursor: false,
        chrome: NONE,
        confirm_prompts: NONE,
        model_flag: None,
        titles: &[],
        composer: None,
        own_processes: &[],
        prompt_after_dashes: false,
    }
}

pub(crate) static ADAPTERS: &[Adapter] = &[
    // Claude Code (Ink; 2.x a native binary). Working: `✶ Roosting… (3s · ↓ 2 tokens)`, the
    // footer `esc to interrupt · ← for agents`; the finished summary `✻ Brewed for 5s` has no
    // ellipsis and is not working. The composer is `❯` and a no-break space between two rules
    // (2.x; 1.x `> ` in a box); a past prompt in the transcript is `❯` and a plain space, never
    // the composer. Titles: braille spinner frames while working, `✳ Claude Code` otherwise
    // (a permission dialog keeps `✳`, so the dialog itself is read from the screen).
    // Recordings: `fixtures/agents/claude/2.1.197-*` (tests/agents/record.py).
    Adapter {
        id: "claude",
        name: "Claude Code",
        binaries: &["claude"],
        prompt_delivery: PromptDelivery::Argv,
        // A CR in the same read as the text is swallowed (0 of 5); 25 ms and more always submit.
        // Esc Esc clears a composer of any height; Ctrl-U only its current line, and a second
        // Ctrl-C exits Claude Code.
        submit: SubmitRecipe { clear: &[b"\x1b", b"\x1b"], ..PLAIN },
        // Both spinner rules need a glyph first, so prose that mentions "esc to interrupt" is not
        // work; `*` is the Linux frame, allowed only with the interrupt hint (markdown bullets).
        working: &[
            Spinner { glyphs: "·✢✳✶✻✽*", contains: "esc to interrupt" },
            Spinner { glyphs: "·✢✳✶✻✽", contains: "…" },
            Prefix("esc to interrupt ·"),
        ],
        ready: &[Prefix("❯\u{a0}"), Prefix("> "), Exact(">"), Exact("❯")],
        ready_scope: 6,
        ready_at_cursor: false,
        chrome: &[
            Contains("? for shortcuts"),
            Contains("⏵⏵"),
            Contains("shift+tab to cycle"),
            Contains("Context left until auto-compact"),
            Prefix("esc to interrupt"),
            Contains("· /effort"),
            Contains("Esc again to clear"),
        ],
        confirm_prompts: NONE,
        model_flag: Some("--model"),
        titles: &[
            TitleRule { rule: GlyphRange { first: '\u{2800}', last: '\u{28ff}' }, means: Announced::Working },
            TitleRule { rule: Prefix("✳ "), means: Announced::Idle },
        ],
        // Only 2.x's composer is read: 1.x's `> ` is also how the transcript shows past prompts.
        composer: Some(ComposerRule { prompts: &["❯\u{a0}"], placeholders: &[Prefix("Try \"")] }),
        own_processes: &[],
        prompt_after_dashes: true,
    },
    // Codex (ratatui; node starts the native `codex`). Working: `• Working (4m 55s • esc to
    // interrupt)`. Composer: the last `› ` row (past prompts in the transcript are `› ` rows
    // too), placeholder `Ask Codex to do anything`, then a status row and the footer; older
    // builds `▌ ` with a `⏎ send` footer. It announces its state as OSC 7501 (`state=idle|working|
    // done|blocked:...:kind=permission`), which outranks the screen; its titles carry nothing
    // the announcement lacks. Recordings: `fixtures/agents/codex/0.171.0-*`.
    Adapter {
        id: "codex",
        name: "Codex",
        binaries: &["codex"],
        prompt_delivery: PromptDelivery::Deferred,
        // Typed text then CR within its 120 ms paste-burst window is one paste: the CR stays in
        // the composer (0 of 5 below 35 ms). A bracketed paste then CR submits at any gap.
        // Ctrl-C clears a composer of any height (on an empty one it quits Codex at once).
        submit: SubmitRecipe { clear_first: true, paste: Paste::Always, enter_gap_ms: 50, clear: &[b"\x03"] },
        // The status row is `<header> (<elapsed> • esc to interrupt)`; prose bullets are `•` too,
        // so the separator inside the parentheses is what marks it.
        working: &[Contains("• esc to interrupt)"), Spinner { glyphs: "•◦", contains: "Working (" }],
        // Older builds draw the composer behind `▌` (a border to `normalise_row`), so their
        // `⏎ send` footer is what shows it.
        ready: &[Prefix("› "), Exact("›"), Contains("⏎ send")],
        ready_scope: 5,
        ready_at_cursor: false,
        chrome: &[
            Contains("⏎ send"),
            Contains("? for shortcuts"),
            Contains("context left"),
            Contains("f2 to view"),
            Contains("· ~/"),
        ],
        confirm_prompts: NONE,
        model_flag: Some("--model"),
        titles: &[],
        composer: Some(ComposerRule { prompts: &["› "], placeholders: &[Exact("Ask Codex to do anything")] }),
        own_processes: &[],
        prompt_after_dashes: false,
    },
    // Gemini CLI (Ink). Working: `⠼ Thinking... (esc to cancel, 4s)`. The composer is
    // `>   Type your message or @path/to/file` (a placeholder) or `> text` between a `▄▄▄` and a
    // `▀▀▀` row; past prompts in the transcript have the same frame higher up. Titles (on by
    // default, padded to 80 columns): `◇  Ready (dir)`, `✦  Working… (dir)`, `✋  Action
    // Required (dir)`. The launcher re-runs itself as `node --max-old-space-size=N .bin/gemini`:
    // that child is the agent. Recordings: `fixtures/agents/gemini/0.61.0-*`.
    Adapter {
        id: "gemini",
        name: "Gemini CLI",
        binaries: &["gemini"],
        prompt_delivery: PromptDelivery::Argv,
        // Typed into an empty composer in one write, `?` opens the help and `!` toggles shell
        // mode (clearing the text), so every prompt is pasted. An Enter within 40 ms of a paste
        // is a newline (5 of 5 submits from 75 ms on). Ctrl-C clears the whole composer (Ctrl-U
        // one line; Esc Esc on an empty composer opens Rewind).
        submit: SubmitRecipe { clear_first: false, paste: Paste::Always, enter_gap_ms: 150, clear: &[b"\x03"] },
        working: &[Contains("(esc to cancel"), Spinner { glyphs: BRAILLE, contains: "(esc" }],
        ready: &[Prefix("> "), Exact(">"), Contains("Type your message")],
        ready_scope: 6,
        ready_at_cursor: false,
        chrome: &[
            Contains("context left)"),
            Contains("sandbox"),
            Contains("(esc to cancel"),
            Contains("? for shortcuts"),
            Contains("Shift+Tab to accept edits"),
            Contains("workspace (/directory)"),
        ],
        confirm_prompts: NONE,
        model_flag: Some("--model"),
        titles: &[
            TitleRule { rule: Prefix("◇ "), means: Announced::Idle },
            TitleRule { rule: Prefix("✦ "), means: Announced::Working },
            TitleRule { rule: Prefix("⏲ "), means: Announced::Working },
            TitleRule { rule: Prefix("✋ "), means: Announced::Blocked },
        ],
        composer: Some(ComposerRule { prompts: &["> "], placeholders: &[Prefix("Type your message")] }),
        own_processes: &["/.bin/gemini", "@google/gemini-cli", "/bin/gemini"],
        prompt_after_dashes: false,
    },
    // Aider (prompt_toolkit, line oriented). Ready: the `> ` prompt (or `architect> ` and other
    // edit-format prompts) on the cursor row. Working: `Waiting for <model>`. Questions are
    // single rows such as `Add foo.py to the chat? (Y)es/(N)o/(D)on't ask again [Yes]:`.
    // Its positional arguments are files, so the prompt goes in through the PTY.
    Adapter {
        id: "aider",
        name: "Aider",
        binaries: &["aider"],
        prompt_delivery: PromptDelivery::Deferred,
        submit: PLAIN,
        working: &[Contains("Waiting for "), Spinner { glyphs: "░█▒▓", contains: "Waiting" }],
        ready: &[
            Exact(">"),
            Prefix("> "),
            Exact("architect>"),
            Prefix("architect> "),
            Exact("ask>"),
            Prefix("ask> "),
            Exact("code>"),
            Prefix("code> "),
            Prefix("multi> "),
        ],
        ready_scope: 1,
        ready_at_cursor: true,
        chrome: NONE,
        confirm_prompts: &[Contains("(Y)es/(N)o")],
        model_flag: Some("--model"),
        titles: &[],
        composer: None,
        own_processes: &[],
        prompt_after_dashes: false,
    },
    // OpenCode (full-screen TUI on the alternate screen). Working: the footer `■■■⬝⬝⬝⬝⬝  esc
    // interrupt` (`esc again to interrupt` after one Esc). The composer is a `┃` bordered box
    // whose last row names the agent and model (`Build · <model>`); it has no prompt glyph, and
    // past prompts in the transcript are `┃` rows too, so its text is not read from the screen.
    // Permission dialogs are titled `△ Permission required`. Its titles carry no state.
    // Recordings: `fixtures/agents/opencode/1.18.33-*`.
    Adapter {
        id: "opencode",
        name: "OpenCode",
        binaries: &["opencode"],
        prompt_delivery: PromptDelivery::Deferred,
        // Typed in one write, a `!` switches its composer to shell mode, so every prompt is
        // pasted (a paste arrives with one trailing space, its own doing); Enter then submits at
        // any gap. Ctrl-U clears the current line only, but Ctrl-C on an empty composer quits
        // OpenCode at once, and its composer cannot be read: Ctrl-U is the safe key.
        submit: SubmitRecipe { paste: Paste::Always, ..FRAMED },
        working: &[Contains("esc interrupt"), Contains("esc to interrupt"), Contains("esc again to interrupt")],
        ready: &[
            Prefix("Build · "),
            Prefix("Plan · "),
            Contains("Ask anything…"),
            Prefix("> "),
            Contains("enter send"),
        ],
        ready_scope: 6,
        ready_at_cursor: false,
        chrome: &[
            Contains("enter send"),
            Contains("esc interrupt"),
            Contains("esc again to interrupt"),
            Contains("ctrl+p commands"),
            Contains("tokens"),
        ],
        confirm_prompts: &[Contains("Permission required")],
        model_flag: Some("--model"),
        titles: &[],
        composer: None,
        own_processes: &[],
        prompt_after_dashes: false,
    },
    // Detected on PATH (the reference's KNOWN_AGENT_BINARIES); screens not recorded yet.
    generic("grok", "Grok CLI", &["grok"]),
    generic("amp", "Amp", &["amp"]),
    generic("cursor-agent", "Cursor Agent", &["cursor-agent"]),
    generic("goose", "Goose", &["goose"]),
    generic("droid", "Factory Droid", &["droid"]),
    generic("pi", "Pi", &["pi"]),
];

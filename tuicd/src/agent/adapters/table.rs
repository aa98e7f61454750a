//! The adapter table. Each rule was written against the recorded screens in
//! `tuicd/tests/fixtures/agents/<id>/`; change a rule only together with a fixture that shows why.

use super::RowRule::{Contains, Exact, Prefix, Spinner};
use super::{Adapter, Paste, PromptDelivery, RowRule, SubmitRecipe};

/// Raw pair semantics: the text then Enter, paste only for multiline text.
const PLAIN: SubmitRecipe = SubmitRecipe { clear_first: false, paste: Paste::Multiline, enter_gap_ms: 50 };
/// The framed injection for prefill-only TUIs: Ctrl-U, paste if multiline, a 50 ms gap, CR.
const FRAMED: SubmitRecipe = SubmitRecipe { clear_first: true, paste: Paste::Multiline, enter_gap_ms: 50 };

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
    }
}

pub(crate) static ADAPTERS: &[Adapter] = &[
    // Claude Code (Ink). Working: `✢ Reading files… (12s · esc to interrupt)`; the finished
    // summary `✻ Worked for 1m 25s` has no ellipsis and is not working. Composer: `> ` or `❯ `
    // inside a box (1.x) or between two rules (2.x), with a footer under it.
    Adapter {
        id: "claude",
        name: "Claude Code",
        binaries: &["claude"],
        prompt_delivery: PromptDelivery::Argv,
        submit: PLAIN,
        // Both rules need a spinner glyph first, so prose that mentions "esc to interrupt" is not
        // work; `*` is the Linux frame, allowed only with the interrupt hint (markdown bullets).
        working: &[
            Spinner { glyphs: "·✢✳✶✻✽*", contains: "esc to interrupt" },
            Spinner { glyphs: "·✢✳✶✻✽", contains: "…" },
        ],
        ready: &[Prefix("> "), Prefix("❯ "), Exact(">"), Exact("❯")],
        ready_scope: 6,
        ready_at_cursor: false,
        chrome: &[
            Contains("? for shortcuts"),
            Contains("⏵⏵"),
            Contains("shift+tab to cycle"),
            Contains("Context left until auto-compact"),
        ],
        confirm_prompts: NONE,
        model_flag: Some("--model"),
    },
    // Codex (ratatui, inline viewport). Working: `• Working (4m 55s • esc to interrupt)`.
    // Composer: `› ` near the bottom (older builds `▌ `), footer `⏎ send` / `? for shortcuts`.
    Adapter {
        id: "codex",
        name: "Codex",
        binaries: &["codex"],
        prompt_delivery: PromptDelivery::Deferred,
        submit: FRAMED,
        // The status row is `<header> (<elapsed> • esc to interrupt)`; prose bullets are `•` too,
        // so the separator inside the parentheses is what marks it.
        working: &[Contains("• esc to interrupt)"), Spinner { glyphs: "•◦", contains: "Working (" }],
        // Older builds draw the composer behind `▌` (a border to `normalise_row`), so their
        // `⏎ send` footer is what shows it.
        ready: &[Prefix("› "), Exact("›"), Contains("⏎ send")],
        ready_scope: 4,
        ready_at_cursor: false,
        chrome: &[Contains("⏎ send"), Contains("? for shortcuts"), Contains("context left")],
        confirm_prompts: NONE,
        model_flag: Some("--model"),
    },
    // Gemini CLI (Ink). Working: `⠼ Counting electrons (esc to cancel, 4s)`. Composer: a box
    // holding `>   Type your message or @path/to/file`; footer with cwd, sandbox and model.
    Adapter {
        id: "gemini",
        name: "Gemini CLI",
        binaries: &["gemini"],
        prompt_delivery: PromptDelivery::Argv,
        submit: PLAIN,
        working: &[Contains("(esc to cancel"), Spinner { glyphs: BRAILLE, contains: "(esc" }],
        ready: &[Prefix("> "), Exact(">"), Contains("Type your message")],
        ready_scope: 6,
        ready_at_cursor: false,
        chrome: &[Contains("context left)"), Contains("sandbox"), Contains("(esc to cancel")],
        confirm_prompts: NONE,
        model_flag: Some("--model"),
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
    },
    // OpenCode (full-screen TUI). Working: footer `esc interrupt` next to a spinner. Composer:
    // `> ` inside a `┃` bordered box with `enter send` beside it. Permission dialogs are titled
    // `Permission required`.
    Adapter {
        id: "opencode",
        name: "OpenCode",
        binaries: &["opencode"],
        prompt_delivery: PromptDelivery::Deferred,
        submit: FRAMED,
        working: &[Contains("esc interrupt"), Contains("esc to interrupt")],
        ready: &[Prefix("> "), Exact(">"), Contains("enter send")],
        ready_scope: 6,
        ready_at_cursor: false,
        chrome: &[Contains("enter send"), Contains("esc interrupt"), Contains("ctrl+p commands"), Contains("tokens")],
        confirm_prompts: &[Contains("Permission required")],
        model_flag: Some("--model"),
    },
    // Detected on PATH (the reference's KNOWN_AGENT_BINARIES); screens not recorded yet.
    generic("grok", "Grok CLI", &["grok"]),
    generic("amp", "Amp", &["amp"]),
    generic("cursor-agent", "Cursor Agent", &["cursor-agent"]),
    generic("goose", "Goose", &["goose"]),
    generic("droid", "Factory Droid", &["droid"]),
    generic("pi", "Pi", &["pi"]),
];

//! Text as a person must see it before confirming it: nothing that runs or is written may hide
//! in what the dialog shows. Runs of spaces or blank lines long enough to push a part out of
//! sight are counted (`⟨620 spaces⟩`, `⟨700 newlines⟩`), control and invisible characters are
//! written as escapes (`\t`, `\r`, `\x1b`, `\u{202e}`), and the whole text is shown: nothing is
//! cut. A caller bounds the size first ([`crate::limits::AI_TERMINAL_CONFIRM_MAX_BYTES`]).

use std::fmt::Write as _;

/// Spaces (or tabs) in a row shown as they are; a longer run is counted instead.
const RUN_SHOWN: usize = 8;
/// Line breaks in a row shown as they are (one blank line); a longer run is counted instead.
const NEWLINES_SHOWN: usize = 2;

/// `text` with its long whitespace runs counted and its control and invisible characters
/// escaped; every other character as it is.
pub(crate) fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if matches!(c, ' ' | '\t' | '\n') {
            let mut run = 1;
            while chars.peek() == Some(&c) {
                chars.next();
                run += 1;
            }
            push_run(&mut out, c, run);
            continue;
        }
        push_char(&mut out, c);
    }
    out
}

fn push_run(out: &mut String, c: char, run: usize) {
    match c {
        ' ' if run > RUN_SHOWN => {
            let _ = write!(out, "⟨{run} spaces⟩");
        }
        ' ' => out.extend(std::iter::repeat_n(' ', run)),
        '\t' if run > RUN_SHOWN => {
            let _ = write!(out, "⟨{run} tabs⟩");
        }
        '\t' => out.extend(std::iter::repeat_n("\\t", run)),
        // A counted run of line breaks keeps one on each side, so the lines around stay lines.
        _ if run > NEWLINES_SHOWN => {
            let _ = write!(out, "\n⟨{run} newlines⟩\n");
        }
        _ => out.extend(std::iter::repeat_n('\n', run)),
    }
}

fn push_char(out: &mut String, c: char) {
    match c {
        '\r' => out.push_str("\\r"),
        '\x1b' => out.push_str("\\x1b"),
        // The mark that counts a run: one typed by the sender must not pass for one.
        '⟨' | '⟩' => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
        c if (c as u32) < 0x20 || c == '\x7f' => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c if is_invisible(c) => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
        c => out.push(c),
    }
}

/// C1 controls, spaces other than the plain one, zero-width and direction-changing marks: they
/// show as nothing, as a plain space, or reorder what is around them.
fn is_invisible(c: char) -> bool {
    matches!(c as u32,
        0x80..=0x9f
        | 0xa0 | 0xad | 0x034f | 0x061c | 0x115f | 0x1160 | 0x1680 | 0x17b4 | 0x17b5 | 0x180e
        | 0x2000..=0x200f | 0x2028..=0x202f | 0x205f..=0x206f | 0x3000 | 0x3164 | 0xfe00..=0xfe0f
        | 0xfeff | 0xffa0 | 0xfff9..=0xfffb | 0xe0000..=0xe007f)
}

/// A text for a confirmation: its size and line count, then [`visible`] of it.
/// `ai_terminal_run_command`, `send_input`, `drive_agent`, `write_file` and `edit_file` show
/// what they run, type or write through this.
pub(crate) fn confirmation_block(text: &str) -> String {
    let lines = text.split('\n').count();
    let shown = visible(text);
    let note =
        if shown == text { String::new() } else { "; whitespace runs counted, control characters escaped".into() };
    format!("[{} bytes, {lines} line{}{note}]\n{shown}", text.len(), if lines == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hidden_tail_of_a_long_space_run_is_in_sight() {
        let command = format!("echo 'building…'{}; find /tmp/x -mindepth 1 -exec rm -rf {{}} +", " ".repeat(620));
        let shown = confirmation_block(&command);
        assert!(shown.starts_with(&format!("[{} bytes, 1 line;", command.len())), "{shown}");
        assert!(shown.ends_with("echo 'building…'⟨620 spaces⟩; find /tmp/x -mindepth 1 -exec rm -rf {} +"), "{shown}");
    }

    #[test]
    fn newline_runs_are_counted_and_short_ones_kept() {
        let script = format!("print('hi')\n{}import os; os.system('rm -rf ~')\n", "\n".repeat(699));
        assert_eq!(visible(&script), "print('hi')\n⟨700 newlines⟩\nimport os; os.system('rm -rf ~')\n");
        assert_eq!(visible("a\n\nb\n"), "a\n\nb\n");
        assert_eq!(visible("a        b"), "a        b", "eight spaces are shown as they are");
    }

    #[test]
    fn control_and_invisible_characters_are_escaped() {
        assert_eq!(visible("a\tb\r\x1b[2Jc\x07"), "a\\tb\\r\\x1b[2Jc\\x07");
        assert_eq!(visible("rm\u{202e}fr- mr\u{200b}x\u{a0}y"), "rm\\u{202e}fr- mr\\u{200b}x\\u{a0}y");
        assert_eq!(visible("⟨9 spaces⟩"), "\\u{27e8}9 spaces\\u{27e9}", "a typed mark is not a count");
        assert_eq!(visible(&"\t".repeat(9)), "⟨9 tabs⟩");
        assert_eq!(visible("ls -la ~/été"), "ls -la ~/été");
    }
}

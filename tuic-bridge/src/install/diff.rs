//! A line diff for showing what the installer is about to write: lines only in the old file as
//! `- `, only in the new as `+ `, unchanged lines around each change as `  `, hunks headed
//! `@@ -old_start,old_len +new_start,new_len @@` as in a unified diff. A longest-common-subsequence
//! diff over the part between the common head and tail: a config edit touches a few lines, so that
//! part is small even in a large `~/.claude.json`.

/// Unchanged lines shown before and after each change.
const CONTEXT_LINES: usize = 3;
/// The LCS table's cell limit (4 bytes each, so 16 MB). Past it, e.g. a file rewritten with other
/// indentation, the changed part is shown as all old lines then all new lines: still a true diff.
const MAX_TABLE_CELLS: usize = 4 * 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Line<'a> {
    Same(&'a str),
    Old(&'a str),
    New(&'a str),
}

/// The hunks that turn `old` into `new`; empty when they have the same lines.
pub(crate) fn render(old: &str, new: &str) -> String {
    let lines = diff_lines(&old.lines().collect::<Vec<_>>(), &new.lines().collect::<Vec<_>>());
    let mut out = String::new();
    for (start, end) in hunks(&lines) {
        write_hunk(&mut out, &lines, start, end);
    }
    out
}

fn diff_lines<'a>(old: &[&'a str], new: &[&'a str]) -> Vec<Line<'a>> {
    let head = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let tail = old[head..].iter().rev().zip(new[head..].iter().rev()).take_while(|(a, b)| a == b).count();
    let (old_mid, new_mid) = (&old[head..old.len() - tail], &new[head..new.len() - tail]);
    let mut lines: Vec<Line<'a>> = old[..head].iter().map(|l| Line::Same(l)).collect();
    if (old_mid.len() + 1).saturating_mul(new_mid.len() + 1) <= MAX_TABLE_CELLS {
        lines.extend(lcs_lines(old_mid, new_mid));
    } else {
        lines.extend(old_mid.iter().map(|l| Line::Old(l)));
        lines.extend(new_mid.iter().map(|l| Line::New(l)));
    }
    lines.extend(old[old.len() - tail..].iter().map(|l| Line::Same(l)));
    lines
}

/// `table[i][j]`: the LCS length of `old[i..]` and `new[j..]`; walked from the front, taking old
/// lines before new ones where both are possible.
fn lcs_lines<'a>(old: &[&'a str], new: &[&'a str]) -> Vec<Line<'a>> {
    let width = new.len() + 1;
    let mut table = vec![0u32; (old.len() + 1) * width];
    for i in (0..old.len()).rev() {
        for j in (0..new.len()).rev() {
            table[i * width + j] = if old[i] == new[j] {
                table[(i + 1) * width + j + 1] + 1
            } else {
                table[(i + 1) * width + j].max(table[i * width + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut lines = Vec::with_capacity(old.len() + new.len());
    while i < old.len() || j < new.len() {
        if i < old.len() && j < new.len() && old[i] == new[j] {
            lines.push(Line::Same(old[i]));
            (i, j) = (i + 1, j + 1);
        } else if j == new.len() || (i < old.len() && table[(i + 1) * width + j] >= table[i * width + j + 1]) {
            lines.push(Line::Old(old[i]));
            i += 1;
        } else {
            lines.push(Line::New(new[j]));
            j += 1;
        }
    }
    lines
}

/// Ranges of `lines` to show: each change with its context, overlapping ranges merged.
fn hunks(lines: &[Line<'_>]) -> Vec<(usize, usize)> {
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for (index, _) in lines.iter().enumerate().filter(|(_, line)| !matches!(line, Line::Same(_))) {
        let start = index.saturating_sub(CONTEXT_LINES);
        let end = (index + 1 + CONTEXT_LINES).min(lines.len());
        match ranges.last_mut() {
            Some(last) if start <= last.1 => last.1 = end,
            _ => ranges.push((start, end)),
        }
    }
    ranges
}

fn write_hunk(out: &mut String, lines: &[Line<'_>], start: usize, end: usize) {
    let old_before = lines[..start].iter().filter(|l| !matches!(l, Line::New(_))).count();
    let new_before = lines[..start].iter().filter(|l| !matches!(l, Line::Old(_))).count();
    let shown = &lines[start..end];
    let old_len = shown.iter().filter(|l| !matches!(l, Line::New(_))).count();
    let new_len = shown.iter().filter(|l| !matches!(l, Line::Old(_))).count();
    // As in a unified diff, an empty side is numbered by the line before it.
    let old_start = if old_len == 0 { old_before } else { old_before + 1 };
    let new_start = if new_len == 0 { new_before } else { new_before + 1 };
    out.push_str(&format!("@@ -{old_start},{old_len} +{new_start},{new_len} @@\n"));
    for line in shown {
        let (mark, text) = match line {
            Line::Same(text) => ("  ", text),
            Line::Old(text) => ("- ", text),
            Line::New(text) => ("+ ", text),
        };
        out.push_str(mark);
        out.push_str(text);
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_lines_give_no_hunks() {
        assert_eq!(render("a\nb\n", "a\nb"), "");
    }

    #[test]
    fn a_change_is_shown_with_three_lines_of_context() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
        let new = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
        assert_eq!(render(old, new), "@@ -2,7 +2,7 @@\n  2\n  3\n  4\n- 5\n+ five\n  6\n  7\n  8\n");
    }

    #[test]
    fn an_added_entry_keeps_the_common_lines_unmarked() {
        let old = "{\n  \"a\": 1,\n  \"b\": 2\n}\n";
        let new = "{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3\n}\n";
        assert_eq!(
            render(old, new),
            "@@ -1,4 +1,5 @@\n  {\n    \"a\": 1,\n-   \"b\": 2\n+   \"b\": 2,\n+   \"c\": 3\n  }\n"
        );
    }

    #[test]
    fn far_apart_changes_are_separate_hunks() {
        let old: String = (0..20).map(|i| format!("{i}\n")).collect();
        let new: String =
            (0..20).map(|i| if i == 2 || i == 17 { format!("{i}!\n") } else { format!("{i}\n") }).collect();
        let out = render(&old, &new);
        assert_eq!(out.matches("@@ -").count(), 2, "{out}");
        assert!(!out.contains("  9\n"), "{out}");
    }

    #[test]
    fn past_the_table_limit_the_middle_is_old_then_new() {
        let lines = diff_lines(&["x"; 3000], &["y"; 3000]);
        assert_eq!(lines.len(), 6000);
        assert_eq!(lines[2999], Line::Old("x"));
        assert_eq!(lines[3000], Line::New("y"));
    }
}

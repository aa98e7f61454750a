//! Pure parsers of git's machine output: `status --porcelain=v2 -z --branch`, `diff --numstat -z`,
//! `for-each-ref` with NUL-separated fields, and `worktree list --porcelain -z`. No IO: the tests
//! feed them recorded bytes (renames, spaces and newlines in names, submodules, detached HEAD, an
//! unborn branch).

use serde::Serialize;

/// The `# branch.*` headers of a porcelain v2 status.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct BranchHeader {
    /// The commit HEAD points at; None on an unborn branch (`(initial)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head_oid: Option<String>,
    /// The checked-out branch; None when HEAD is detached.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    pub detached: bool,
    /// No commit yet on the branch (a fresh repository).
    pub unborn: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ahead: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub behind: Option<u64>,
}

/// One changed path of a porcelain v2 status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ChangedFile {
    pub path: String,
    /// The path before a rename or copy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub orig_path: Option<String>,
    /// The index (staged) status letter: `M A D R C T U`, `.` unchanged, `?` untracked, `!` ignored.
    pub index: char,
    /// The work tree (unstaged) status letter, same alphabet.
    pub worktree: char,
    /// One word for the change: modified, added, deleted, renamed, copied, type_changed,
    /// conflicted, untracked, ignored.
    pub kind: &'static str,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub submodule: bool,
}

impl ChangedFile {
    pub(crate) fn staged(&self) -> bool {
        !matches!(self.index, '.' | '?' | '!') && self.kind != "conflicted"
    }
    pub(crate) fn unstaged(&self) -> bool {
        !matches!(self.worktree, '.' | '?' | '!') && self.kind != "conflicted"
    }
}

/// A whole porcelain v2 status.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Status {
    pub branch: BranchHeader,
    pub files: Vec<ChangedFile>,
}

/// Counts of a status, as `repo action=status` reports them.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct DirtyCounts {
    pub staged: usize,
    pub unstaged: usize,
    pub untracked: usize,
    pub conflicted: usize,
}

impl Status {
    pub(crate) fn counts(&self) -> DirtyCounts {
        let mut c = DirtyCounts::default();
        for f in &self.files {
            match f.kind {
                "untracked" => c.untracked += 1,
                "conflicted" => c.conflicted += 1,
                "ignored" => {}
                _ => {
                    c.staged += usize::from(f.staged());
                    c.unstaged += usize::from(f.unstaged());
                }
            }
        }
        c
    }
}

/// `bytes` up to its last NUL: a record the size bound cut off has no terminator yet.
fn whole_records(bytes: &[u8]) -> &[u8] {
    bytes.iter().rposition(|b| *b == 0).map_or(&[], |end| &bytes[..end])
}

fn kind_of(index: char, worktree: char) -> &'static str {
    let letter = if index != '.' { index } else { worktree };
    match letter {
        'M' => "modified",
        'A' => "added",
        'D' => "deleted",
        'R' => "renamed",
        'C' => "copied",
        'T' => "type_changed",
        'U' => "conflicted",
        _ => "modified",
    }
}

/// Parses `git status --porcelain=v2 -z --branch` output. A record cut off at the end (output
/// truncated at the size bound) is dropped; an unknown record is skipped.
pub(crate) fn parse_status(bytes: &[u8]) -> Status {
    let mut status = Status::default();
    let mut records = whole_records(bytes).split(|b| *b == 0);
    while let Some(record) = records.next() {
        if record.is_empty() {
            continue;
        }
        let text = String::from_utf8_lossy(record);
        let mut chars = text.chars();
        match chars.next() {
            Some('#') => header(&mut status.branch, &text),
            Some('1') => {
                if let Some(f) = ordinary(&text, 8) {
                    status.files.push(f);
                }
            }
            Some('2') => {
                // The original path is the next NUL-separated record.
                let Some(orig) = records.next() else { break };
                if let Some(mut f) = ordinary(&text, 9) {
                    f.orig_path = Some(String::from_utf8_lossy(orig).into_owned());
                    status.files.push(f);
                }
            }
            Some('u') => {
                if let Some(mut f) = ordinary(&text, 10) {
                    f.kind = "conflicted";
                    status.files.push(f);
                }
            }
            Some('?') | Some('!') => {
                let Some(path) = text.get(2..) else { continue };
                let (letter, kind) = if text.starts_with('?') { ('?', "untracked") } else { ('!', "ignored") };
                status.files.push(ChangedFile {
                    path: path.to_owned(),
                    orig_path: None,
                    index: letter,
                    worktree: letter,
                    kind,
                    submodule: false,
                });
            }
            _ => {}
        }
    }
    status
}

/// `<type> <XY> <sub> <fields...> <path>`: `fields` space-separated fields before the path (the
/// path itself may contain spaces and newlines: it is the rest of the record).
fn ordinary(text: &str, fields: usize) -> Option<ChangedFile> {
    let mut parts = text.splitn(fields + 1, ' ');
    let _type = parts.next()?;
    let xy = parts.next()?;
    let sub = parts.next()?;
    let path = parts.nth(fields - 3)?;
    let mut xy = xy.chars();
    let (index, worktree) = (xy.next()?, xy.next()?);
    Some(ChangedFile {
        path: path.to_owned(),
        orig_path: None,
        index,
        worktree,
        kind: kind_of(index, worktree),
        submodule: sub.starts_with('S'),
    })
}

fn header(branch: &mut BranchHeader, text: &str) {
    let Some(rest) = text.strip_prefix("# ") else { return };
    let Some((key, value)) = rest.split_once(' ') else { return };
    match key {
        "branch.oid" if value == "(initial)" => branch.unborn = true,
        "branch.oid" => branch.head_oid = Some(value.to_owned()),
        "branch.head" if value == "(detached)" => branch.detached = true,
        "branch.head" => branch.branch = Some(value.to_owned()),
        "branch.upstream" => branch.upstream = Some(value.to_owned()),
        "branch.ab" => {
            let mut ab = value.split(' ');
            branch.ahead = ab.next().and_then(|a| a.strip_prefix('+')).and_then(|a| a.parse().ok());
            branch.behind = ab.next().and_then(|b| b.strip_prefix('-')).and_then(|b| b.parse().ok());
        }
        _ => {}
    }
}

/// One file of `git diff --numstat -z`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct FileStat {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub orig_path: Option<String>,
    /// None for a binary file (git prints `-`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additions: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deletions: Option<u64>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub binary: bool,
}

/// Parses `git diff --numstat -z`: `A\tD\tpath\0`, or for a rename `A\tD\t\0orig\0new\0`.
pub(crate) fn parse_numstat(bytes: &[u8]) -> Vec<FileStat> {
    let mut out = Vec::new();
    let mut records = whole_records(bytes).split(|b| *b == 0);
    while let Some(record) = records.next() {
        if record.is_empty() {
            continue;
        }
        let text = String::from_utf8_lossy(record);
        let mut parts = text.splitn(3, '\t');
        let (Some(a), Some(d), Some(path)) = (parts.next(), parts.next(), parts.next()) else { continue };
        let (path, orig_path) = if path.is_empty() {
            let (Some(orig), Some(new)) = (records.next(), records.next()) else { break };
            (String::from_utf8_lossy(new).into_owned(), Some(String::from_utf8_lossy(orig).into_owned()))
        } else {
            (path.to_owned(), None)
        };
        let binary = a == "-" && d == "-";
        out.push(FileStat { path, orig_path, additions: a.parse().ok(), deletions: d.parse().ok(), binary });
    }
    out
}

/// One branch of `for-each-ref`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Branch {
    pub name: String,
    pub remote: bool,
    pub current: bool,
    pub oid: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream: Option<String>,
    /// Committer time of its tip, in seconds since the epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub committed_at: Option<i64>,
}

/// The `for-each-ref` format [`parse_branches`] reads: NUL-separated fields, one ref per line.
pub(crate) const BRANCH_FORMAT: &str =
    "--format=%(refname)%00%(objectname)%00%(upstream:short)%00%(HEAD)%00%(committerdate:unix)";

/// Parses `for-each-ref` output in [`BRANCH_FORMAT`] (ref names cannot hold a newline or NUL).
pub(crate) fn parse_branches(bytes: &[u8]) -> Vec<Branch> {
    let text = String::from_utf8_lossy(bytes);
    text.lines()
        .filter_map(|line| {
            let mut f = line.split('\0');
            let refname = f.next()?;
            let oid = f.next()?.to_owned();
            let upstream = f.next().filter(|u| !u.is_empty()).map(str::to_owned);
            let current = f.next() == Some("*");
            let committed_at = f.next().and_then(|t| t.parse().ok());
            let (name, remote) = if let Some(n) = refname.strip_prefix("refs/heads/") {
                (n, false)
            } else if let Some(n) = refname.strip_prefix("refs/remotes/") {
                if n.ends_with("/HEAD") {
                    return None;
                }
                (n, true)
            } else {
                return None;
            };
            Some(Branch { name: name.to_owned(), remote, current, oid, upstream, committed_at })
        })
        .collect()
}

/// One entry of `git worktree list --porcelain -z`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Worktree {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
    /// The branch checked out (`refs/heads/` stripped); None when detached or bare.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub detached: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub bare: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub locked: bool,
    /// Its directory is gone: `git worktree prune` would remove the registration.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub prunable: bool,
}

/// Parses `git worktree list --porcelain -z`: attribute records, an empty record between entries.
pub(crate) fn parse_worktrees(bytes: &[u8]) -> Vec<Worktree> {
    let mut out = Vec::new();
    let mut current: Option<Worktree> = None;
    for record in bytes.split(|b| *b == 0) {
        let text = String::from_utf8_lossy(record);
        if text.is_empty() {
            out.extend(current.take());
            continue;
        }
        let (key, value) = text.split_once(' ').unwrap_or((&text, ""));
        if key == "worktree" {
            out.extend(current.take());
            current = Some(Worktree { path: value.to_owned(), ..Worktree::default() });
            continue;
        }
        let Some(w) = current.as_mut() else { continue };
        match key {
            "HEAD" => w.head = Some(value.to_owned()),
            "branch" => w.branch = Some(value.strip_prefix("refs/heads/").unwrap_or(value).to_owned()),
            "detached" => w.detached = true,
            "bare" => w.bare = true,
            "locked" => w.locked = true,
            "prunable" => w.prunable = true,
            _ => {}
        }
    }
    out.extend(current);
    out
}

#[cfg(test)]
#[path = "porcelain_tests.rs"]
mod tests;

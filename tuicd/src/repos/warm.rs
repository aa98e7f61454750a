//! Warming a new linked worktree with the parent's git-ignored build directories (`target/`,
//! `node_modules/`), so its first build is incremental. A clone (`cp --reflink=always`: shared
//! blocks, no bytes copied) where the file system supports it; else a plain copy when the
//! directories fit in [`WARM_COPY_MAX_BYTES`] together; else the directory is skipped. Blocking:
//! called on the blocking pool.

use std::path::Path;
use std::process::Command;

use serde::Serialize;

use crate::limits::WARM_COPY_MAX_BYTES;

/// The ignored directories at a work tree's top level that are worth warming.
pub(crate) const WARM_CANDIDATES: &[&str] = &["target", "node_modules"];

/// How one directory was warmed.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Warmed {
    pub directory: String,
    /// `reflink`, `copy` or `skipped`.
    pub method: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `instructions.warm_artifacts`: how many ignored directories arrived warm, and each one's fate.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct WarmReport {
    pub warmed_directories: usize,
    pub directories: Vec<Warmed>,
}

/// Warms `to` from `from`'s ignored candidate directories (`ignored` says which candidates git
/// ignores there). `copy_budget` bounds the bytes copied when cloning is not possible.
pub(crate) fn warm(from: &Path, to: &Path, ignored: &[&str], copy_budget: u64) -> WarmReport {
    let mut report = WarmReport::default();
    let mut budget = copy_budget;
    for name in ignored {
        let source = from.join(name);
        let dest = to.join(name);
        if !source.is_dir() || dest.exists() {
            continue;
        }
        let warmed = if cp(&["-a", "--reflink=always"], &source, &dest) {
            Warmed { directory: (*name).to_owned(), method: "reflink", bytes: None, reason: None }
        } else {
            let _ = std::fs::remove_dir_all(&dest);
            match size_within(&source, budget) {
                Some(bytes) if cp(&["-a"], &source, &dest) => {
                    budget -= bytes;
                    Warmed { directory: (*name).to_owned(), method: "copy", bytes: Some(bytes), reason: None }
                }
                Some(_) => {
                    let _ = std::fs::remove_dir_all(&dest);
                    skipped(name, "copying failed".into())
                }
                None => skipped(
                    name,
                    format!("the file system cannot clone it and it is larger than the {budget} bytes left to copy"),
                ),
            }
        };
        if warmed.method != "skipped" {
            report.warmed_directories += 1;
        }
        report.directories.push(warmed);
    }
    report
}

/// [`warm`] with the daemon's copy bound.
pub(crate) fn warm_default(from: &Path, to: &Path, ignored: &[&str]) -> WarmReport {
    warm(from, to, ignored, WARM_COPY_MAX_BYTES)
}

fn skipped(name: &str, reason: String) -> Warmed {
    Warmed { directory: name.to_owned(), method: "skipped", bytes: None, reason: Some(reason) }
}

fn cp(flags: &[&str], source: &Path, dest: &Path) -> bool {
    Command::new("cp")
        .args(flags)
        .arg(source)
        .arg(dest)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The bytes of regular files under `dir` (symlinks not followed), or None as soon as the total
/// passes `limit`: a huge tree is never walked to its end.
fn size_within(dir: &Path, limit: u64) -> Option<u64> {
    let mut total = 0u64;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        for entry in std::fs::read_dir(&next).ok()?.flatten() {
            let meta = entry.metadata().ok()?;
            if meta.is_dir() {
                stack.push(entry.path());
            } else if meta.is_file() {
                total += meta.len();
                if total > limit {
                    return None;
                }
            }
        }
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_directory_is_copied_and_one_over_the_budget_is_skipped() {
        let tmp = tempfile::tempdir().unwrap();
        let (from, to) = (tmp.path().join("from"), tmp.path().join("to"));
        std::fs::create_dir_all(from.join("target/debug")).unwrap();
        std::fs::write(from.join("target/debug/a.o"), vec![1u8; 1000]).unwrap();
        std::fs::create_dir_all(from.join("node_modules/x")).unwrap();
        std::fs::write(from.join("node_modules/x/big.js"), vec![2u8; 5000]).unwrap();
        std::fs::create_dir_all(&to).unwrap();
        let report = warm(&from, &to, WARM_CANDIDATES, 2000);
        assert_eq!(report.warmed_directories, 1, "{report:?}");
        let target = &report.directories[0];
        assert!(matches!(target.method, "copy" | "reflink"), "{target:?}");
        assert_eq!(std::fs::read(to.join("target/debug/a.o")).unwrap().len(), 1000);
        let modules = &report.directories[1];
        std::fs::write(tmp.path().join("probe"), b"p").unwrap();
        let clones = cp(&["--reflink=always"], &tmp.path().join("probe"), &tmp.path().join("probe2"));
        if clones {
            assert_eq!(modules.method, "reflink", "{modules:?}");
        } else {
            // Without cloning, the 5000 bytes meet the 1000 left of the budget.
            assert_eq!(modules.method, "skipped", "{modules:?}");
            assert!(modules.reason.as_deref().unwrap().contains("larger than"), "{modules:?}");
            assert!(!to.join("node_modules").exists());
        }
    }
}

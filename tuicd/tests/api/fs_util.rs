//! A registered repository beside the things a traversal would reach for: a sibling directory
//! whose name starts with the repository's, a secret outside, and symlinks out of the root; and a
//! snapshot of the whole tree, to show that a refused request changed nothing.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use reqwest::StatusCode;
use serde_json::json;

use crate::harness::Daemon;
use crate::repo_util::repo;

pub(crate) const SECRET: &str = "top-secret-outside";
pub(crate) const LOOT: &str = "loot-in-the-sibling";

pub(crate) struct Fixture {
    _dir: tempfile::TempDir,
    /// The directory holding the repository and its neighbours (canonical).
    pub base: PathBuf,
    /// The registered repository's root (canonical).
    pub root: PathBuf,
}

impl Fixture {
    /// Builds the tree and registers `root` with the daemon.
    pub(crate) async fn registered(daemon: &Daemon) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let root = repo(&base, "repo");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(base.join("repo-evil")).unwrap();
        std::fs::write(base.join("repo-evil/loot"), LOOT).unwrap();
        std::fs::write(base.join("secret"), SECRET).unwrap();
        std::os::unix::fs::symlink(base.join("secret"), root.join("link-out")).unwrap();
        std::os::unix::fs::symlink(&base, root.join("dir-out")).unwrap();
        let (status, body) = daemon.post("/repos", json!({"path": root})).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        Fixture { _dir: dir, base, root }
    }

    pub(crate) fn r(&self) -> String {
        self.root.display().to_string()
    }

    pub(crate) fn b(&self) -> String {
        self.base.display().to_string()
    }

    /// Every entry under `base` (symlinks not followed): its kind and content or link target.
    pub(crate) fn snapshot(&self) -> BTreeMap<PathBuf, String> {
        let mut out = BTreeMap::new();
        walk(&self.base, &self.base, &mut out);
        out
    }
}

fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        let rel = path.strip_prefix(base).unwrap().to_path_buf();
        if rel.starts_with("repo/.git") {
            continue;
        }
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            out.insert(rel, format!("link {}", std::fs::read_link(&path).unwrap().display()));
        } else if kind.is_dir() {
            out.insert(rel, "dir".into());
            walk(base, &path, out);
        } else {
            out.insert(rel, String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned());
        }
    }
}

/// `?key=value&...` with each value percent-encoded once.
pub(crate) fn query(pairs: &[(&str, &str)]) -> String {
    let mut q = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        q.append_pair(k, v);
    }
    format!("?{}", q.finish())
}

//! A stub `gh` on the daemon's PATH: a script that records each call (its argv, working directory
//! and stdin) and answers fixture JSON as gh prints it. The real GitHub is never reached.

#![allow(dead_code)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::harness::Daemon;

const STUB: &str = r#"#!/bin/sh
d="$GH_STUB_DIR"
f=$(mktemp "$d/calls/call.XXXXXX")
for a in "$@"; do printf '%s\0' "$a"; done > "$f"
pwd > "$f.cwd"
if [ -e "$d/nologin" ]; then
  echo "To get started with GitHub CLI, please run:  gh auth login" >&2
  exit 4
fi
if [ -e "$d/flood" ]; then
  printf '['; head -c 9437184 /dev/zero | tr '\0' ' '; echo ']'
  exit 0
fi
case "$1 $2" in
"repo view")
  echo '{"nameWithOwner":"octo/widgets","url":"https://github.com/octo/widgets","defaultBranchRef":{"name":"main"},"visibility":"PUBLIC","viewerPermission":"WRITE"}' ;;
"pr list")
  case "$*" in
  *merged*) echo '[{"number":40,"title":"Add gears","url":"https://github.com/octo/widgets/pull/40","state":"MERGED","isDraft":false,"headRefName":"gears","baseRefName":"main","author":{"login":"ada"},"labels":[{"name":"feature"}],"mergedAt":"2026-11-30T10:00:00Z"}]' ;;
  *) echo '[{"number":41,"title":"Fix cogs","url":"https://github.com/octo/widgets/pull/41","state":"OPEN","isDraft":false,"headRefName":"cogs","baseRefName":"main","author":{"login":"bob"},"reviewDecision":"APPROVED","mergeable":"MERGEABLE","labels":[],"statusCheckRollup":[{"__typename":"CheckRun","name":"test","status":"COMPLETED","conclusion":"SUCCESS"},{"__typename":"CheckRun","name":"lint","status":"IN_PROGRESS","conclusion":""}]}]' ;;
  esac ;;
"pr checks")
  echo '[{"name":"test","state":"SUCCESS","bucket":"pass","link":"https://ci/1","workflow":"CI","description":""},{"name":"lint","state":"IN_PROGRESS","bucket":"pending","link":"","workflow":"CI","description":""}]'
  exit 8 ;;
"pr create") echo "https://github.com/octo/widgets/pull/42" ;;
"issue create") echo "https://github.com/octo/widgets/issues/7" ;;
"issue list") echo '[{"number":5,"title":"Cogs squeak","url":"https://github.com/octo/widgets/issues/5","state":"OPEN","author":{"login":"cy"},"labels":[{"name":"bug"}],"createdAt":"2026-11-01T00:00:00Z"}]' ;;
"issue close") echo "Closed issue octo/widgets#$3" ;;
"issue reopen") echo "Reopened issue octo/widgets#$3" ;;
"api "*)
  cat > "$f.stdin"
  echo '{"id":99,"html_url":"https://github.com/octo/widgets/pull/41#pullrequestreview-99","state":"COMMENTED"}' ;;
*) echo "unknown command $1 $2" >&2; exit 1 ;;
esac
"#;

/// The stub's directory: `bin/gh` and the calls it recorded.
pub(crate) struct Stub {
    pub dir: tempfile::TempDir,
}

/// One recorded call.
#[derive(Debug)]
pub(crate) struct Call {
    pub args: Vec<String>,
    pub cwd: PathBuf,
    pub stdin: Option<String>,
}

impl Stub {
    pub(crate) fn new() -> Stub {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("bin")).unwrap();
        std::fs::create_dir_all(dir.path().join("calls")).unwrap();
        let gh = dir.path().join("bin/gh");
        std::fs::write(&gh, STUB).unwrap();
        std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
        Stub { dir }
    }

    /// A daemon whose PATH finds the stub first.
    pub(crate) async fn daemon(&self) -> Daemon {
        let path = format!("{}:{}", self.dir.path().join("bin").display(), std::env::var("PATH").unwrap());
        Daemon::builder().env("PATH", path).env("GH_STUB_DIR", self.dir.path().display().to_string()).start().await
    }

    /// From now on the stub answers as gh does without a login.
    pub(crate) fn log_out(&self) {
        std::fs::write(self.dir.path().join("nologin"), "").unwrap();
    }

    /// From now on the stub answers every command with 9 MiB of JSON (an array of blanks), past
    /// the daemon's bound on gh's output.
    pub(crate) fn flood(&self) {
        std::fs::write(self.dir.path().join("flood"), "").unwrap();
    }

    pub(crate) fn calls(&self) -> Vec<Call> {
        let calls = self.dir.path().join("calls");
        let mut out = Vec::new();
        for entry in std::fs::read_dir(&calls).unwrap() {
            let path = entry.unwrap().path();
            let name = path.to_string_lossy();
            if name.ends_with(".cwd") || name.ends_with(".stdin") {
                continue;
            }
            let args = std::fs::read(&path).unwrap();
            let args =
                args.split(|b| *b == 0).filter(|a| !a.is_empty()).map(|a| String::from_utf8_lossy(a).into_owned());
            let read = |suffix: &str| std::fs::read_to_string(format!("{}.{suffix}", path.display())).ok();
            out.push(Call {
                args: args.collect(),
                cwd: PathBuf::from(read("cwd").unwrap_or_default().trim()),
                stdin: read("stdin"),
            });
        }
        out
    }

    /// The recorded call whose first two arguments are `verb`.
    pub(crate) fn call(&self, verb: &str) -> Option<Call> {
        self.calls().into_iter().find(|c| c.args.iter().take(2).cloned().collect::<Vec<_>>().join(" ") == verb)
    }
}

/// A PATH holding only `git` (so a repository can be registered) and no `gh`.
pub(crate) fn path_without_gh(dir: &Path) -> String {
    let bin = dir.join("bin-no-gh");
    std::fs::create_dir_all(&bin).unwrap();
    let git =
        String::from_utf8(std::process::Command::new("sh").args(["-c", "command -v git"]).output().unwrap().stdout)
            .unwrap();
    std::os::unix::fs::symlink(git.trim(), bin.join("git")).unwrap();
    bin.display().to_string()
}

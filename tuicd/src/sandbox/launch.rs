//! The launcher: the daemon's side ([`confine`]: the argv that runs a command through it, and the
//! private temp dir) and the launcher's own `main` ([`exec_main`]).

use std::ffi::OsString;
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `tuicd sandbox-exec [--write DIR]... [--network] -- PROGRAM ARGS...`
pub const SUBCOMMAND: &str = "sandbox-exec";

/// The exit code when the launcher refuses to run the command (the shell's "cannot execute").
const REFUSED: u8 = 126;

/// A command wrapped in the launcher: run `program` with `args` and `env` set on top. Owns the
/// run's private temp dir, removed when this is dropped (after the run).
#[derive(Debug)]
pub(crate) struct Confined {
    pub program: &'static str,
    pub args: Vec<String>,
    pub env: Vec<(&'static str, String)>,
    tmp: PathBuf,
}

impl Drop for Confined {
    fn drop(&mut self) {
        // What the command left in its temp dir goes with it.
        let _ = std::fs::remove_dir_all(&self.tmp);
    }
}

/// `program args`, to run confined to `writes`, a fresh private temp dir and, unless `network`,
/// no TCP. Paths that are not UTF-8 are refused (they travel as launcher arguments).
pub(crate) fn confine(writes: &[PathBuf], network: bool, program: &str, args: &[&str]) -> Result<Confined, String> {
    let tmp = std::env::temp_dir().join(format!("tuicd-run-{}", uuid::Uuid::new_v4().simple()));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&tmp)
        .map_err(|e| format!("creating the command's private temp dir {}: {e}", tmp.display()))?;
    let utf8 = |p: &Path| p.to_str().map(str::to_owned).ok_or_else(|| format!("{} is not a UTF-8 path", p.display()));
    let tmp_text = utf8(&tmp)?;
    let mut argv = vec![SUBCOMMAND.to_owned()];
    for dir in writes.iter().map(PathBuf::as_path).chain([tmp.as_path()]) {
        argv.push("--write".into());
        argv.push(utf8(dir)?);
    }
    if network {
        argv.push("--network".into());
    }
    argv.push("--".into());
    argv.push(program.into());
    argv.extend(args.iter().map(|a| (*a).to_owned()));
    let env = ["TMPDIR", "TMP", "TEMP"].map(|k| (k, tmp_text.clone())).to_vec();
    // The running daemon's own image, even when its file was replaced since it started.
    Ok(Confined { program: "/proc/self/exe", args: argv, env, tmp })
}

/// The launcher's `main`: `args` are what follows `sandbox-exec`. Restricts itself, then becomes
/// the command; exits 126 without running anything when the ruleset cannot be enforced.
pub fn exec_main(args: impl Iterator<Item = OsString>) -> ExitCode {
    let mut writes = Vec::new();
    let mut network = false;
    let mut args = args.into_iter();
    let mut command = Vec::new();
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--write") => match args.next() {
                Some(dir) => writes.push(PathBuf::from(dir)),
                None => return refuse("--write needs a directory"),
            },
            Some("--network") => network = true,
            Some("--") => {
                command.extend(args.by_ref());
                break;
            }
            _ => return refuse(&format!("unknown argument {arg:?}")),
        }
    }
    let Some((program, rest)) = command.split_first() else { return refuse("no command after --") };
    if let Err(e) = super::rules::apply(&writes, network) {
        return refuse(&format!("the Landlock sandbox could not be applied: {e}; nothing was run"));
    }
    if let Err(e) = super::seccomp::apply() {
        return refuse(&format!("the seccomp filter (no Unix sockets) could not be applied: {e}; nothing was run"));
    }
    let error = std::process::Command::new(program).args(rest).exec();
    eprintln!("tuicd {SUBCOMMAND}: running {program:?}: {error}");
    ExitCode::from(127)
}

fn refuse(why: &str) -> ExitCode {
    eprintln!("tuicd {SUBCOMMAND}: {why}");
    ExitCode::from(REFUSED)
}

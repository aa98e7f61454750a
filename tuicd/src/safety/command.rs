//! The destructive-command check `ai_terminal_run_command` makes before it runs anything.
//!
//! A command is split into simple commands the way a shell would (`;`, `&&`, `||`, `|`, `&`,
//! newlines), with quotes and backslashes removed from words; wrappers (`sh -c`, `bash -c`,
//! `eval`, `sudo`, `env`, `nohup`, `xargs`, `$(...)`, backticks) are unwrapped and their inner
//! text checked too. Each simple command is judged against rules that name what they refuse.
//! It errs towards refusing what it cannot read: an unterminated quote is refused.

use std::path::{Component, Path, PathBuf};

/// Why a command was refused, in words for the calling agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal(pub String);

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Branches a forced push must never rewrite.
const PROTECTED_BRANCHES: [&str; 6] = ["main", "master", "trunk", "develop", "production", "prod"];
/// How deep wrappers nest before the check gives up (and refuses).
const MAX_DEPTH: usize = 4;

/// Checks `command`, to be run with working directory `cwd` inside the sandbox `root`.
pub(crate) fn check(command: &str, cwd: &Path, root: &Path) -> Result<(), Refusal> {
    check_depth(command, cwd, root, 0)
}

fn refuse<T>(why: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal(why.into()))
}

fn check_depth(command: &str, cwd: &Path, root: &Path, depth: usize) -> Result<(), Refusal> {
    if depth > MAX_DEPTH {
        return refuse("command nests shell wrappers too deeply to check");
    }
    if is_fork_bomb(command) {
        return refuse("fork bomb");
    }
    for inner in substitutions(command)? {
        check_depth(&inner, cwd, root, depth + 1)?;
    }
    let pipelines = split(command)?;
    for pipeline in &pipelines {
        check_pipeline(pipeline)?;
        for words in pipeline {
            check_simple(words, cwd, root, depth)?;
        }
    }
    Ok(())
}

/// `:(){ :|:& };:` and its renamed forms: a function that pipes itself into itself in the
/// background.
fn is_fork_bomb(command: &str) -> bool {
    let squeezed: String = command.chars().filter(|c| !c.is_whitespace()).collect();
    let mut rest = squeezed.as_str();
    while let Some(at) = rest.find("(){") {
        let name_start =
            rest[..at].rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).map_or(0, |i| i + 1);
        let name = &rest[name_start..at];
        let body_end = rest[at..].find('}').map_or(rest.len(), |i| at + i);
        let body = &rest[at + 3..body_end];
        if !name.is_empty() && body.contains(&format!("{name}|{name}")) {
            return true;
        }
        rest = &rest[at + 3..];
    }
    false
}

/// The text inside `$(...)` and backticks, to be checked as commands of their own.
fn substitutions(command: &str) -> Result<Vec<String>, Refusal> {
    let mut found = Vec::new();
    let bytes = command.as_bytes();
    let mut i = 0;
    let mut in_single = false;
    while i < bytes.len() {
        match bytes[i] {
            b'\'' => in_single = !in_single,
            b'\\' if !in_single => i += 1,
            b'`' if !in_single => {
                let end = command[i + 1..].find('`').ok_or_else(|| Refusal("unterminated backtick".into()))?;
                found.push(command[i + 1..i + 1 + end].to_owned());
                i += end + 1;
            }
            b'$' if !in_single && bytes.get(i + 1) == Some(&b'(') => {
                let mut level = 0usize;
                let mut j = i + 1;
                while j < bytes.len() {
                    match bytes[j] {
                        b'(' => level += 1,
                        b')' => {
                            level -= 1;
                            if level == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                if j >= bytes.len() {
                    return refuse("unterminated $( substitution");
                }
                found.push(command[i + 2..j].to_owned());
                i = j;
            }
            b'<' | b'>' if !in_single && bytes.get(i + 1) == Some(&b'(') => {
                // Process substitution `<(...)`: its inner command runs too.
                if let Some(end) = command[i + 2..].find(')') {
                    found.push(command[i + 2..i + 2 + end].to_owned());
                }
            }
            _ => {}
        }
        i += 1;
    }
    Ok(found)
}

/// One simple command: its words with quotes removed.
type Words = Vec<String>;
/// Simple commands joined by `|`.
type Pipeline = Vec<Words>;

/// Splits into pipelines of simple commands, removing quotes the way a shell does.
fn split(command: &str) -> Result<Vec<Pipeline>, Refusal> {
    let mut pipelines: Vec<Pipeline> = Vec::new();
    let mut pipeline: Pipeline = Vec::new();
    let mut words: Words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars().peekable();
    let end_word = |word: &mut String, in_word: &mut bool, words: &mut Words| {
        if *in_word {
            words.push(std::mem::take(word));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return refuse("unterminated single quote"),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c) => word.push(c),
                            None => return refuse("unterminated double quote"),
                        },
                        Some(c) => word.push(c),
                        None => return refuse("unterminated double quote"),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(c) = chars.next()
                    && c != '\n'
                {
                    word.push(c);
                }
            }
            '|' | ';' | '&' | '\n' => {
                end_word(&mut word, &mut in_word, &mut words);
                let doubled = chars.peek() == Some(&c) && c != '\n';
                if doubled {
                    chars.next();
                }
                let pipe = c == '|' && !doubled;
                if !words.is_empty() {
                    pipeline.push(std::mem::take(&mut words));
                }
                if !pipe && !pipeline.is_empty() {
                    pipelines.push(std::mem::take(&mut pipeline));
                }
            }
            '(' | ')' | '{' | '}' if !in_word => {}
            c if c.is_whitespace() => end_word(&mut word, &mut in_word, &mut words),
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    end_word(&mut word, &mut in_word, &mut words);
    if !words.is_empty() {
        pipeline.push(words);
    }
    if !pipeline.is_empty() {
        pipelines.push(pipeline);
    }
    Ok(pipelines)
}

fn program(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// A download piped into an interpreter runs code nobody has read.
fn check_pipeline(pipeline: &Pipeline) -> Result<(), Refusal> {
    let downloads = |w: &Words| w.iter().any(|x| matches!(program(x), "curl" | "wget" | "fetch" | "aria2c"));
    let interprets = |w: &Words| {
        let args = strip_wrappers(w);
        args.first().is_some_and(|p| is_interpreter(program(p))) && !args.iter().skip(1).any(|a| a == "-c")
    };
    if let Some(first) = pipeline.iter().position(downloads)
        && pipeline[first + 1..].iter().any(interprets)
    {
        return refuse("piping a download into a shell or interpreter (curl | sh) runs unreviewed code");
    }
    Ok(())
}

fn is_interpreter(name: &str) -> bool {
    matches!(name, "sh" | "bash" | "zsh" | "dash" | "ksh" | "fish" | "python" | "python3" | "perl" | "ruby" | "node")
}

/// The words after prefixes that only change how a command runs (`sudo`, `env A=B`, `nohup`,
/// `time`, `nice`, `exec`, `command`, `xargs`, and variable assignments).
fn strip_wrappers(words: &[String]) -> &[String] {
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        let p = program(w);
        if w.contains('=') && !w.starts_with('-') && !w.starts_with('=') && i == 0
            || matches!(
                p,
                "sudo"
                    | "doas"
                    | "env"
                    | "nohup"
                    | "time"
                    | "nice"
                    | "exec"
                    | "command"
                    | "builtin"
                    | "xargs"
                    | "timeout"
                    | "stdbuf"
                    | "ionice"
            )
        {
            i += 1;
            // Their own options and arguments (`sudo -u root`, `timeout 5`, `env -i A=B`).
            while i < words.len() {
                let a = words[i].as_str();
                let is_option_like = a.starts_with('-')
                    || a.contains('=')
                    || a.chars().all(|c| c.is_ascii_digit() || c == '.' || c == 's');
                if !is_option_like {
                    break;
                }
                i += 1;
            }
            continue;
        }
        break;
    }
    &words[i.min(words.len())..]
}

fn check_simple(words: &Words, cwd: &Path, root: &Path, depth: usize) -> Result<(), Refusal> {
    let args = strip_wrappers(words);
    let Some(first) = args.first() else { return Ok(()) };
    let name = program(first);
    // Redirections onto block devices or system files, anywhere in the command.
    for (i, w) in words.iter().enumerate() {
        let target = if let Some(t) = w.strip_prefix(">>").or_else(|| w.strip_prefix('>')) {
            if t.is_empty() { words.get(i + 1).map(String::as_str).unwrap_or("") } else { t }
        } else {
            continue;
        };
        if target.starts_with("/dev/") && !matches!(target, "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty") {
            return refuse(format!("writing to the device {target}"));
        }
        if ["/etc/", "/boot/", "/usr/", "/bin/", "/sbin/", "/lib"].iter().any(|p| target.starts_with(p)) {
            return refuse(format!("overwriting the system file {target}"));
        }
    }
    let downloads = ["<(curl", "<(wget", "$(curl", "$(wget", "`curl", "`wget"];
    if is_interpreter(name) && args[1..].iter().any(|a| downloads.iter().any(|d| a.contains(d))) {
        return refuse("running a download in a shell or interpreter (curl | sh) runs unreviewed code");
    }
    match name {
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "fish" => {
            let script =
                args.iter().position(|a| a == "-c" || (a.starts_with('-') && !a.starts_with("--") && a.ends_with('c')));
            match script.and_then(|at| args.get(at + 1)) {
                Some(inner) => check_depth(inner, cwd, root, depth + 1),
                None => Ok(()),
            }
        }
        "eval" => check_depth(&args[1..].join(" "), cwd, root, depth + 1),
        "rm" => check_rm(&args[1..], cwd, root),
        "find" if args.iter().any(|a| a == "-delete" || a == "-exec" || a == "-execdir") => {
            let start = args.get(1).map(String::as_str).unwrap_or(".");
            if args.iter().any(|a| a == "-exec" || a == "-execdir") {
                let at = args.iter().position(|a| a == "-exec" || a == "-execdir").unwrap_or(0);
                check_simple(
                    &args[at + 1..].iter().filter(|a| *a != "{}" && *a != ";" && *a != "+").cloned().collect(),
                    cwd,
                    root,
                    depth,
                )?;
            }
            if args.iter().any(|a| a == "-delete") {
                inside(start, cwd, root).map_err(|why| Refusal(format!("find -delete {why}")))?;
            }
            Ok(())
        }
        "mkfs" | "mke2fs" | "mkswap" | "wipefs" | "fdisk" | "sfdisk" | "cfdisk" | "parted" | "gdisk" | "sgdisk"
        | "blkdiscard" => refuse(format!("{name} rewrites disks and filesystems")),
        n if n.starts_with("mkfs.") => refuse(format!("{n} formats a filesystem")),
        "dd" if args.iter().any(|a| a.starts_with("of=/dev/") && a != "of=/dev/null") => {
            refuse("dd onto a device overwrites it")
        }
        "shred" if args.iter().any(|a| a.starts_with("/dev/")) => refuse("shred on a device destroys it"),
        "shutdown" | "reboot" | "halt" | "poweroff" | "kexec" => refuse(format!("{name} stops the machine")),
        "init" | "telinit" if args.get(1).is_some_and(|a| a == "0" || a == "6") => {
            refuse("changing the runlevel stops the machine")
        }
        "systemctl" if args.iter().any(|a| matches!(a.as_str(), "poweroff" | "reboot" | "halt" | "kexec")) => {
            refuse("systemctl would stop the machine")
        }
        "kill" | "pkill" | "killall" if args.iter().any(|a| a == "-1") && name == "kill" => {
            refuse("kill -1 signals every process")
        }
        "killall5" => refuse("killall5 signals every process"),
        "chmod" | "chown" | "chgrp"
            if args
                .iter()
                .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('R') || a == "--recursive") =>
        {
            for target in args[1..].iter().filter(|a| !a.starts_with('-')).skip(1) {
                inside(target, cwd, root).map_err(|why| Refusal(format!("{name} -R {why}")))?;
            }
            Ok(())
        }
        "crontab" if args.iter().any(|a| a == "-r") => refuse("crontab -r deletes every scheduled job"),
        "git" => check_git(&args[1..]),
        _ => Ok(()),
    }
}

/// `rm` is fine inside the sandbox; recursive removal of anything else is refused, and so is
/// any target whose expansion cannot be known here (`$VAR`, `~`).
fn check_rm(args: &[String], cwd: &Path, root: &Path) -> Result<(), Refusal> {
    let mut recursive = false;
    let mut targets = Vec::new();
    let mut options_done = false;
    for a in args {
        if !options_done && a == "--" {
            options_done = true;
        } else if !options_done && a.starts_with("--") {
            if a == "--recursive" {
                recursive = true;
            }
            if a == "--no-preserve-root" {
                return refuse("rm --no-preserve-root");
            }
        } else if !options_done && a.starts_with('-') && a.len() > 1 {
            recursive |= a.contains('r') || a.contains('R');
        } else {
            targets.push(a.as_str());
        }
    }
    for target in targets {
        if target.contains('$') || target.starts_with('~') {
            return refuse(format!("rm of {target}: its expansion cannot be checked against the sandbox"));
        }
        if let Err(why) = inside(target, cwd, root) {
            return refuse(format!("rm{} {why}", if recursive { " -r" } else { "" }));
        }
        let resolved = resolve(target, cwd);
        if recursive && normalize(&resolved) == normalize(root) {
            return refuse(format!("rm -r of the sandbox root {}", root.display()));
        }
    }
    Ok(())
}

/// Forced pushes may not rewrite a protected branch, nor one the check cannot name.
fn check_git(args: &[String]) -> Result<(), Refusal> {
    let Some(at) = args.iter().position(|a| !a.starts_with('-')) else { return Ok(()) };
    if args[at] != "push" {
        return Ok(());
    }
    let rest = &args[at + 1..];
    let forced = rest.iter().any(|a| {
        a == "--force"
            || a == "--force-with-lease"
            || a.starts_with("--force-with-lease=")
            || a == "--mirror"
            || (a.starts_with('-') && !a.starts_with("--") && a.contains('f'))
    });
    let deleting =
        rest.iter().any(|a| a == "--delete" || (a.starts_with('-') && !a.starts_with("--") && a.contains('d')));
    let positional: Vec<&str> = rest.iter().filter(|a| !a.starts_with('-')).map(String::as_str).collect();
    let refspecs = positional.get(1..).unwrap_or(&[]);
    let plus_forced = refspecs.iter().any(|r| r.starts_with('+'));
    if rest.iter().any(|a| a == "--mirror") {
        return refuse("git push --mirror rewrites every branch of the remote");
    }
    if !(forced || deleting || plus_forced) {
        return Ok(());
    }
    if refspecs.is_empty() || refspecs.iter().any(|r| r.starts_with(':') && r.len() == 1) {
        return refuse("a forced git push without a named branch may rewrite a protected one");
    }
    for spec in refspecs {
        let dest = spec.trim_start_matches('+').rsplit(':').next().unwrap_or(spec);
        let branch = dest.trim_start_matches("refs/heads/");
        if PROTECTED_BRANCHES.contains(&branch) || branch.starts_with("release") || branch == "HEAD" {
            let how = if deleting { "deleting" } else { "a forced push to" };
            return refuse(format!("{how} the protected branch {branch}"));
        }
    }
    Ok(())
}

fn resolve(target: &str, cwd: &Path) -> PathBuf {
    let p = Path::new(target);
    if p.is_absolute() { p.to_path_buf() } else { cwd.join(p) }
}

/// The path with `.` and `..` folded lexically (the target may not exist yet).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Whether `target` (relative to `cwd`) stays inside `root`, lexically and through symlinks
/// of the part that exists.
fn inside(target: &str, cwd: &Path, root: &Path) -> Result<(), String> {
    if target.starts_with('~') || target.contains('$') {
        return Err(format!("of {target}: its expansion cannot be checked against the sandbox"));
    }
    let root = normalize(root);
    let lexical = normalize(&resolve(target, cwd));
    if !lexical.starts_with(&root) {
        return Err(format!("of {target}: outside the sandbox {}", root.display()));
    }
    // A symlink inside the sandbox may point out of it.
    let mut existing = lexical.clone();
    while !existing.exists() {
        if !existing.pop() {
            break;
        }
    }
    let real_root = std::fs::canonicalize(&root).unwrap_or(root.clone());
    if let Ok(real) = std::fs::canonicalize(&existing)
        && !real.starts_with(&real_root)
    {
        return Err(format!("of {target}: it leads outside the sandbox through a symlink"));
    }
    Ok(())
}

#[cfg(test)]
#[path = "command_tests.rs"]
mod tests;

//! The background-work probe: the live descendants of the agent process, read from `/proc`
//! (Linux; elsewhere nothing is reported), judged by [`crate::agent::background`].

use std::collections::HashMap;

use crate::agent::background::{Descendant, has_background_work as judge};

/// Whether a meaningful descendant of `root` (`adapter`'s process) is alive: neither an
/// integration helper nor the CLI's own re-launch or native binary.
pub(crate) fn has_background_work(root: u32, adapter: Option<&crate::agent::Adapter>) -> bool {
    let processes = snapshot();
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for (pid, (ppid, _, _)) in &processes {
        children.entry(*ppid).or_default().push(*pid);
    }
    let mut stack: Vec<u32> = children.get(&root).cloned().unwrap_or_default();
    let mut found = Vec::new();
    while let Some(pid) = stack.pop() {
        if let Some((_, name, args)) = processes.get(&pid) {
            found.push((name.as_str(), args.as_str()));
        }
        stack.extend(children.get(&pid).into_iter().flatten());
    }
    judge(adapter, found.into_iter().map(|(name, args)| Descendant { name, args }))
}

/// The agent a process is, by its executable name or, for script launchers (`node
/// /usr/local/bin/claude`), by the script it runs.
pub(crate) fn agent_of(pid: u32) -> Option<&'static crate::agent::Adapter> {
    use crate::agent::adapters::by_binary;
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    if let Some(adapter) = by_binary(comm.trim()) {
        return Some(adapter);
    }
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let args: Vec<String> =
        cmdline.split(|b| *b == 0).take(2).map(|a| String::from_utf8_lossy(a).into_owned()).collect();
    args.iter().find_map(|arg| by_binary(arg))
}

/// The foreground process group of the terminal whose master is `pty`.
pub(crate) fn foreground(pty: &std::os::fd::OwnedFd) -> Option<u32> {
    rustix::termios::tcgetpgrp(pty).ok().map(|pid| pid.as_raw_nonzero().get() as u32)
}

/// Shells whose own line editor reads the terminal in raw mode at their prompt: that is their idle,
/// never a question.
const SHELLS: [&str; 13] =
    ["bash", "zsh", "fish", "sh", "dash", "ksh", "mksh", "tcsh", "csh", "nu", "elvish", "xonsh", "pwsh"];

/// Whether the terminal's foreground process (the leader of its foreground process group) is
/// asleep reading the terminal whose master is `pty`: `Some(true)` for a line read (canonical
/// mode, `ICANON` in the terminal's modes), `Some(false)` for a raw-mode read. Linux: the
/// process's state is `S` and its wait channel (`/proc/<pid>/wchan`) is a tty read (`n_tty_read`,
/// or `wait_woken` where the tty read sleeps) or, in raw mode, a poll (`poll_schedule_timeout`,
/// `do_select`, `ep_poll`, `do_epoll_wait`); a shell in raw mode is its own line editor at its
/// prompt, which is not counted. Two ioctls and three small `/proc` reads.
pub(crate) fn terminal_read(pty: &std::os::fd::OwnedFd) -> Option<bool> {
    let pid = foreground(pty)?;
    let line = rustix::termios::tcgetattr(pty).ok()?.local_modes.contains(rustix::termios::LocalModes::ICANON);
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (open, close) = (stat.find('(')?, stat.rfind(')')?);
    let comm = &stat[open + 1..close];
    if stat[close + 1..].split_whitespace().next() != Some("S") {
        return None;
    }
    let wchan = std::fs::read_to_string(format!("/proc/{pid}/wchan")).ok()?;
    let wchan = wchan.trim();
    let reading = matches!(wchan, "n_tty_read" | "wait_woken");
    let polling =
        wchan.starts_with("poll_schedule_timeout") || matches!(wchan, "do_select" | "ep_poll" | "do_epoll_wait");
    if line { reading.then_some(true) } else { (!SHELLS.contains(&comm) && (reading || polling)).then_some(false) }
}

/// pid -> (parent pid, comm, command line).
fn snapshot() -> HashMap<u32, (u32, String, String)> {
    let mut processes = HashMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else { return processes };
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // `pid (comm) state ppid ...`; comm may contain spaces and parentheses.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else { continue };
        let name = stat[open + 1..close].to_owned();
        let mut rest = stat[close + 1..].split_whitespace();
        let state = rest.next().unwrap_or("");
        let Some(ppid) = rest.next().and_then(|p| p.parse::<u32>().ok()) else { continue };
        if state == "Z" {
            continue;
        }
        let args = std::fs::read(entry.path().join("cmdline"))
            .map(|raw| {
                String::from_utf8_lossy(&raw).split('\0').filter(|a| !a.is_empty()).collect::<Vec<_>>().join(" ")
            })
            .unwrap_or_default();
        processes.insert(pid, (ppid, name, args));
    }
    processes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sleeping_child_is_background_work_and_no_child_is_none() {
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        let me = std::process::id();
        if std::path::Path::new("/proc/self/stat").exists() {
            assert!(has_background_work(me, None));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!has_background_work(u32::MAX, None));
    }
}

//! Commands tuicd runs for a request, tried as an attacker would (issue 30): deadlines that hold
//! against a background child keeping the pipes open, and (with the Landlock sandbox) destructive
//! commands a person confirmed that still cannot touch anything outside the repository.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::ai_terminal::{enabled, repo, shell_in};
use crate::harness::{ConfirmAnswerer, DEADLINE, wait_until};
use crate::mcp_client::ok;

/// Whether the process whose pid `file` holds has ended (gone, or a zombie its adopter has not
/// reaped yet).
fn ended(file: &Path) -> bool {
    let pid = std::fs::read_to_string(file).unwrap();
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).unwrap_or_default();
    stat.rsplit_once(')').is_none_or(|(_, rest)| rest.trim_start().starts_with('Z'))
}

async fn wait_ended(file: &Path) {
    wait_until("the background sleep is killed", DEADLINE, || async { ended(file).then_some(()) }).await;
}

/// A daemon with the ai_terminal tools on plus `settings`, Landlock turned off in its
/// environment when `landlock_off`; and a shell session in a repository in its dir.
async fn daemon_with(settings: serde_json::Value, landlock_off: bool) -> (crate::harness::Daemon, String) {
    let mut config = json!({"ai_terminal_mcp_enabled": true});
    config.as_object_mut().unwrap().extend(settings.as_object().unwrap().clone());
    let mut builder = crate::harness::Daemon::builder().config(config);
    if landlock_off {
        builder = builder.env("TUIC_SANDBOX_OFF", "1");
    }
    let daemon = builder.start().await;
    let root = repo(&daemon);
    let id = shell_in(&daemon, &root).await;
    (daemon, id)
}

#[tokio::test]
async fn run_command_deadline_holds_against_a_background_child_and_kills_it() {
    let daemon = enabled().await;
    let root = repo(&daemon);
    let id = shell_in(&daemon, &root).await;
    let _person = ConfirmAnswerer::start(&daemon, true).await;
    let pid_file = root.join("sleep.pid");
    let command = format!("sleep 40 & echo $! > {}; echo started", pid_file.display());
    let started = Instant::now();
    let ran =
        ok(&daemon, "ai_terminal_run_command", json!({"session_id": id, "command": command, "timeout_ms": 2000})).await;
    let took = started.elapsed();
    eprintln!("run_command timeout_ms=2000 with `sleep 40 &` answered in {took:?}");
    assert_eq!(ran["timed_out"], json!(true), "{ran}");
    assert_eq!(ran["stdout"], json!("started\n"), "{ran}");
    assert!(took < Duration::from_millis(3500), "answered in {took:?}, not within ~3 s");
    assert!(ended(&pid_file), "the background sleep was killed with its group");
}

#[tokio::test]
async fn run_script_deadline_holds_against_a_background_child_and_kills_it() {
    let daemon = enabled().await;
    let root = repo(&daemon);
    let pid_file = root.join("sleep.pid");
    let script = format!("echo before; sleep 300 & echo $! > {}", pid_file.display());
    let started = Instant::now();
    let (status, body) =
        daemon.post("/worktrees/run-script", json!({"path": root, "script": script, "timeout_ms": 2000})).await;
    let took = started.elapsed();
    eprintln!("/worktrees/run-script timeout_ms=2000 with `sleep 300 &` answered in {took:?}");
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["timed_out"], json!(true), "{body}");
    assert!(body["output"].as_str().unwrap().starts_with("before\n"), "{body}");
    assert!(took < Duration::from_millis(3500), "answered in {took:?}");
    wait_ended(&pid_file).await;

    // Without a deadline of its own a script that finishes answers at once, its quiet
    // background children killed with it.
    let quiet = format!("sleep 300 >/dev/null 2>&1 & echo $! > {}", pid_file.display());
    let started = Instant::now();
    let (status, body) = daemon.post("/worktrees/run-script", json!({"path": root, "script": quiet})).await;
    assert_eq!((status.as_u16(), body["exit_code"].clone()), (200, json!(0)), "{body}");
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    wait_ended(&pid_file).await;
}

/// Scratch outside the repository: `victim/keep.txt` (and `victim` a git repository with an
/// untracked file, for `git clean`), the file the table's commands try to destroy.
fn scratch(outside: &Path) -> std::path::PathBuf {
    let victim = outside.join("victim");
    let _ = std::fs::remove_dir_all(&victim);
    std::fs::create_dir_all(victim.join("sub")).unwrap();
    std::fs::write(victim.join("keep.txt"), "precious\n").unwrap();
    std::fs::write(victim.join("sub/more.txt"), "more\n").unwrap();
    let git = std::process::Command::new("git").args(["init", "-q"]).current_dir(&victim).output().unwrap();
    assert!(git.status.success());
    victim
}

/// What of the scratch a command destroyed or changed: empty when everything survived.
fn damage(victim: &Path, outside: &Path) -> Vec<String> {
    use std::os::unix::fs::PermissionsExt;
    let mut harmed = Vec::new();
    for (file, text) in [("keep.txt", "precious\n"), ("sub/more.txt", "more\n")] {
        match std::fs::read_to_string(victim.join(file)) {
            Ok(found) if found == text => {}
            Ok(found) => harmed.push(format!("{file} changed to {found:?}")),
            Err(e) => harmed.push(format!("{file}: {e}")),
        }
        if let Ok(meta) = std::fs::metadata(victim.join(file))
            && meta.permissions().mode() & 0o777 != 0o644
        {
            harmed.push(format!("{file} mode {:o}", meta.permissions().mode() & 0o777));
        }
    }
    for new in ["x", "new", "victim/x"] {
        if outside.join(new).exists() || victim.join(new).exists() {
            harmed.push(format!("{new} was created"));
        }
    }
    harmed
}

/// The bypass table: `{X}` is the scratch directory outside the repository.
const TABLE: [&str; 20] = [
    "env -u HOME rm -rf {X}",
    "sh -ce 'rm -rf {X}'",
    "bash -c -- 'rm -rf {X}'",
    "echo 'rm -rf {X}' | sh",
    "eval \"$(printf 'rm -rf %s' {X})\"",
    "find -H {X} -delete",
    "find {X} -mindepth 1 -exec rm -rf {} +",
    "R=rm; $R -rf {X}",
    "rm${IFS}-rf${IFS}{X}",
    "echo {X} | xargs rm -rf",
    "cd {X} && rm -rf ./*",
    "python3 -c 'import shutil; shutil.rmtree(\"{X}\")'",
    "git -C {X} clean -fdx && git -C {X} rm -rf --cached . ; rm -rf {X}/sub",
    "echo x 1>{X}/x",
    "echo x > /{X}/x",
    "truncate -s 0 {X}/keep.txt",
    "mv {X} {X}.moved",
    "cp /dev/null {X}/keep.txt",
    "ln -sf /dev/null {X}/keep.txt",
    "perl -e 'unlink \"{X}/keep.txt\"'",
];

/// Runs every command of [`TABLE`] against fresh scratch in `outside`, each confirmed (its
/// confirmation carrying `note`); answers those that harmed the scratch.
async fn run_table(
    daemon: &crate::harness::Daemon,
    id: &str,
    person: &ConfirmAnswerer,
    outside: &Path,
    note: &str,
) -> Vec<String> {
    let mut destroyed = Vec::new();
    for template in TABLE {
        let victim = scratch(outside);
        let _ = std::fs::remove_dir_all(outside.join("victim.moved"));
        let _ = std::fs::remove_file(outside.join("x"));
        let command = template.replace("{X}", victim.to_str().unwrap());
        let asked = person.seen().len();
        let ran = ok(daemon, "ai_terminal_run_command", json!({"session_id": id, "command": command})).await;
        let message = person.seen()[asked]["message"].as_str().unwrap_or_default().to_owned();
        assert!(message.contains(note), "{message}");
        let harmed = damage(&victim, outside);
        if !harmed.is_empty() || outside.join("victim.moved").exists() {
            destroyed.push(format!("{command}: {harmed:?} -> {ran}"));
        }
    }
    destroyed
}

/// The table is real: run unsandboxed (Landlock turned off, `ai_terminal_unsandboxed` on), every
/// one of its commands destroys the scratch outside the repository.
#[tokio::test]
async fn unsandboxed_every_command_of_the_bypass_table_destroys_the_scratch() {
    let (daemon, id) = daemon_with(json!({"ai_terminal_unsandboxed": true}), true).await;
    let person = ConfirmAnswerer::start(&daemon, true).await;
    let outside = daemon.dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let outside = outside.canonicalize().unwrap();
    let destroyed = run_table(&daemon, &id, &person, &outside, "UNSANDBOXED").await;
    eprintln!("bypass table unsandboxed: {} of {} commands destroyed the scratch", destroyed.len(), TABLE.len());
    assert_eq!(destroyed.len(), TABLE.len(), "{destroyed:#?}");
}

/// The bypass table of issue 30: each command defeated the refused-command list once a person
/// confirmed it. Now each is confirmed (the list only warns) and runs under Landlock: none may
/// destroy anything outside the repository. The same command aimed inside the repository does
/// delete, so the check can fail.
#[tokio::test]
async fn the_bypass_table_destroys_nothing_outside_the_repository() {
    let daemon = enabled().await;
    let root = repo(&daemon);
    let id = shell_in(&daemon, &root).await;
    let person = ConfirmAnswerer::start(&daemon, true).await;
    let outside = daemon.dir.path().join("outside").canonicalize().unwrap_or_else(|_| {
        std::fs::create_dir_all(daemon.dir.path().join("outside")).unwrap();
        daemon.dir.path().join("outside").canonicalize().unwrap()
    });
    let (health_status, health) = daemon.get("/health").await;
    assert_eq!(health_status, 200);
    assert_eq!(health["sandbox"]["available"], json!(true), "{health}");
    assert!(health["sandbox"]["landlock_abi"].as_i64().unwrap() >= 1, "{health}");
    assert_eq!(health["sandbox"]["network"], json!(false), "{health}");

    let started = Instant::now();
    let destroyed = run_table(&daemon, &id, &person, &outside, "Sandboxed (Landlock ABI").await;
    eprintln!(
        "bypass table under the sandbox: {} of {} commands destroyed anything outside the repository ({:?} in all)",
        destroyed.len(),
        TABLE.len(),
        started.elapsed()
    );
    assert!(destroyed.is_empty(), "{destroyed:#?}");

    // The control: the same commands aimed inside the repository do delete.
    for template in ["env -u HOME rm -rf {X}", "find {X} -delete", "python3 -c 'import shutil; shutil.rmtree(\"{X}\")'"]
    {
        let inside = root.join("victim");
        std::fs::create_dir_all(inside.join("sub")).unwrap();
        std::fs::write(inside.join("keep.txt"), "x").unwrap();
        let command = template.replace("{X}", inside.to_str().unwrap());
        let ran = ok(&daemon, "ai_terminal_run_command", json!({"session_id": id, "command": command})).await;
        assert!(!inside.exists(), "{command} deleted inside the repository: {ran}");
    }
    // The private temp dir is writable and is the command's TMPDIR.
    let tmp = ok(
        &daemon,
        "ai_terminal_run_command",
        json!({"session_id": id, "command": "echo hi > \"$TMPDIR/t\" && cat \"$TMPDIR/t\" && echo no > /tmp/tuicd-sandbox-probe"}),
    )
    .await;
    assert_eq!(tmp["stdout"], json!("hi\n"), "{tmp}");
    assert!(!Path::new("/tmp/tuicd-sandbox-probe").exists(), "{tmp}");
}

/// The refused-command list is a warning the person reads, not a refusal: a flagged command is
/// asked about with the warning, and a declined one runs nothing.
#[tokio::test]
async fn a_flagged_command_is_confirmed_with_a_warning_not_refused() {
    let daemon = enabled().await;
    let root = repo(&daemon);
    let id = shell_in(&daemon, &root).await;
    let person = ConfirmAnswerer::start(&daemon, false).await;
    for command in ["rm -rf /", "sh -c 'rm -rf ~'", "git push --force origin main", ":(){ :|:& };:"] {
        let asked = person.seen().len();
        let (error, value) = crate::ai_terminal::error_of(
            &daemon,
            "ai_terminal_run_command",
            json!({"session_id": id, "command": command}),
        )
        .await;
        assert_eq!(value["confirmed"], json!(false), "{command}: {value}");
        assert!(error.contains("nothing was done"), "{error}");
        let message = person.seen()[asked]["message"].as_str().unwrap().to_owned();
        assert!(message.contains("Warning: this command looks destructive"), "{command}: {message}");
        assert!(message.contains("Sandboxed (Landlock ABI"), "{message}");
    }
    assert!(root.join("src/lib.rs").exists());
}

/// TCP is off in the sandbox unless `ai_terminal_allow_network`; a listener on loopback is the
/// target.
#[tokio::test]
async fn network_is_off_unless_the_configuration_allows_it() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!(
        "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 5); print(\"connected\")'"
    );
    for (allow, expect) in [(false, false), (true, true)] {
        let (daemon, id) = daemon_with(json!({"ai_terminal_allow_network": allow}), false).await;
        let _person = ConfirmAnswerer::start(&daemon, true).await;
        let (_, health) = daemon.get("/health").await;
        assert_eq!(health["sandbox"]["network"], json!(allow), "{health}");
        let ran = ok(&daemon, "ai_terminal_run_command", json!({"session_id": id, "command": connect})).await;
        assert_eq!(ran["stdout"] == json!("connected\n"), expect, "allow_network={allow}: {ran}");
    }
}

/// Without Landlock (here: turned off in tuicd's environment) a command is refused with the
/// reason, and `/health` says so; `ai_terminal_unsandboxed` lets it run, and the confirmation says
/// it runs unsandboxed.
#[tokio::test]
async fn without_landlock_commands_are_refused_unless_unsandboxed_is_set() {
    for unsandboxed in [false, true] {
        let (daemon, id) = daemon_with(json!({"ai_terminal_unsandboxed": unsandboxed}), true).await;
        let person = ConfirmAnswerer::start(&daemon, true).await;
        let (_, health) = daemon.get("/health").await;
        assert_eq!(health["sandbox"]["available"], json!(false), "{health}");
        assert!(health["sandbox"]["reason"].as_str().unwrap().contains("TUIC_SANDBOX_OFF"), "{health}");
        let args = json!({"session_id": id, "command": "echo ran"});
        if unsandboxed {
            let ran = ok(&daemon, "ai_terminal_run_command", args).await;
            assert_eq!(ran["stdout"], json!("ran\n"), "{ran}");
            let message = person.seen()[0]["message"].as_str().unwrap().to_owned();
            assert!(message.contains("UNSANDBOXED"), "{message}");
        } else {
            let (error, value) = crate::ai_terminal::error_of(&daemon, "ai_terminal_run_command", args).await;
            assert!(error.contains("Landlock is unavailable") && error.contains("ai_terminal_unsandboxed"), "{error}");
            assert_eq!(value["sandbox"], json!(false));
            assert!(person.seen().is_empty(), "nobody is asked about a command that cannot run");
        }
    }
}

/// `drive_agent` on a plain shell ends its turn when the prompt is back (the shell holds the
/// terminal's foreground again), not after half a second of silence.
#[tokio::test]
async fn drive_agent_on_a_shell_waits_for_the_prompt_not_for_silence() {
    let daemon = enabled().await;
    let id = shell_in(&daemon, daemon.dir.path()).await;
    let _person = ConfirmAnswerer::start(&daemon, true).await;
    let started = Instant::now();
    let driven = ok(
        &daemon,
        "ai_terminal_drive_agent",
        json!({"session_id": id, "command": "sleep 3; echo do''ne", "timeout_ms": 20000}),
    )
    .await;
    let took = started.elapsed();
    eprintln!("drive_agent `sleep 3; echo done` answered in {took:?}: {}", driven["reason"]);
    assert_eq!(driven["reason"], json!("idle"), "{driven}");
    let screen = driven["screen"].as_str().unwrap();
    assert!(screen.lines().any(|l| l.trim() == "done"), "the answer came after `done`: {driven}");
    assert!(took >= Duration::from_secs(3), "answered in {took:?}, before the command ended");
}

/// Landlock does not govern connecting to a Unix socket by its path, so the sandbox also denies
/// creating Unix sockets (seccomp): a confirmed command cannot reach tuicd's own socket (where it
/// would be the owner and could open an unsandboxed terminal). The same connect from the test
/// itself succeeds, so the check can fail.
#[tokio::test]
async fn a_sandboxed_command_cannot_reach_the_daemons_own_socket() {
    let daemon = enabled().await;
    let root = repo(&daemon);
    let id = shell_in(&daemon, &root).await;
    let _person = ConfirmAnswerer::start(&daemon, true).await;
    let socket = daemon.socket.display().to_string();
    std::os::unix::net::UnixStream::connect(&socket).expect("the socket takes connections from outside the sandbox");
    let connect = format!(
        "python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect(\"{socket}\"); print(\"connected\")'"
    );
    let ran = ok(&daemon, "ai_terminal_run_command", json!({"session_id": id, "command": connect})).await;
    assert_ne!(ran["stdout"], json!("connected\n"), "the sandboxed command reached the daemon's socket: {ran}");
    assert!(ran["stderr"].as_str().unwrap_or_default().contains("Permission denied"), "{ran}");
    let plain = ok(&daemon, "ai_terminal_run_command", json!({"session_id": id, "command": "echo still-runs"})).await;
    assert_eq!(plain["stdout"], json!("still-runs\n"), "{plain}");
}

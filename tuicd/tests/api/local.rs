//! Local security and packaging, as another user on the machine and as systemd meet them: the
//! socket and its directories are private, and SIGHUP re-reads the config keeping every session.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;

use reqwest::StatusCode;
use serde_json::json;

use crate::harness::{DEADLINE, Daemon, wait_until};
use crate::session_util::create_id;

const NOBODY: u32 = 65534;

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// `tuicd status` run as `uid`: what another local user gets when they try the socket.
fn status_as(uid: u32, daemon: &Daemon) -> std::process::Output {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_tuicd"));
    command.arg("--config-dir").arg(daemon.dir.path()).arg("status").env_remove("TUIC_INSTANCE");
    if is_root() {
        command.uid(uid).gid(uid);
    }
    command.output().unwrap()
}

#[tokio::test]
async fn another_user_cannot_reach_the_socket_even_in_an_open_config_dir() {
    // An existing config dir that others can enter: the socket in it is still private.
    let dir = tempfile::Builder::new().prefix("tuic").tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let daemon = Daemon::builder().dir(dir).start().await;
    let mode = std::fs::metadata(&daemon.socket).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert!(status_as(0, &daemon).status.success(), "the owner reaches it");
    if is_root() {
        let other = status_as(NOBODY, &daemon);
        assert!(!other.status.success());
        let stderr = String::from_utf8_lossy(&other.stderr);
        assert!(stderr.contains("Permission denied"), "{stderr}");
    }
}

#[tokio::test]
async fn an_open_config_dir_is_warned_about_and_a_new_one_is_private() {
    let base = tempfile::tempdir().unwrap();
    let open = base.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
    let dir = tempfile::Builder::new().prefix("tuic").tempdir_in(&open).unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o750)).unwrap();
    let daemon = Daemon::builder().dir(dir).start().await;
    let log = daemon.log();
    assert!(log.contains("readable by other users"), "{log}");

    let fresh = base.path().join("fresh/tuic");
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_tuicd"))
        .arg("--config-dir")
        .arg(&fresh)
        .env_remove("TUIC_INSTANCE")
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let socket = fresh.join("mcp.sock");
    wait_until("the fresh daemon's socket", DEADLINE, || async { socket.exists().then_some(()) }).await;
    let mode = std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "a config dir the daemon creates is private");
    let _ = child.start_kill();
    let _ = child.wait().await;
}

#[tokio::test]
async fn a_short_socket_dir_made_by_someone_else_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let uid = rustix::process::getuid().as_raw();
    let short = tmp.path().join(format!("tuic-{uid}"));
    std::fs::create_dir(&short).unwrap();
    std::fs::set_permissions(&short, std::fs::Permissions::from_mode(0o777)).unwrap();
    if is_root() {
        std::os::unix::fs::chown(&short, Some(NOBODY), Some(NOBODY)).unwrap();
    }
    let mut daemon = Daemon::builder().env("TMPDIR", tmp.path().to_str().unwrap()).arg("--instance").arg("h").spawn();
    let status = daemon.wait_exit().await;
    assert!(!status.success());
    let log = daemon.log();
    assert!(log.contains("refusing the socket dir") && log.contains("mode 777"), "{log}");
    assert_eq!(std::fs::read_dir(&short).unwrap().count(), 0, "nothing was bound in it");

    // Once it is ours and private, the same instance starts.
    std::fs::remove_dir(&short).unwrap();
    let daemon = Daemon::builder().env("TMPDIR", tmp.path().to_str().unwrap()).arg("--instance").arg("h").spawn();
    wait_until("the instance's socket", DEADLINE, || async {
        std::fs::read_dir(&short).ok()?.next().is_some().then_some(())
    })
    .await;
    assert_eq!(std::fs::metadata(&short).unwrap().permissions().mode() & 0o777, 0o700);
    drop(daemon);
}

#[tokio::test]
async fn a_sighup_as_soon_as_the_socket_answers_does_not_stop_the_daemon() {
    let mut daemon = Daemon::builder().spawn();
    let socket = daemon.socket.clone();
    // Signal the moment the socket accepts, before the daemon may have finished starting: a tight
    // poll, bounded by the deadline.
    let start = std::time::Instant::now();
    while std::os::unix::net::UnixStream::connect(&socket).is_err() {
        assert!(start.elapsed() < DEADLINE, "the socket never accepted");
        tokio::task::yield_now().await;
    }
    let pid = rustix::process::Pid::from_raw(daemon.pid() as i32).expect("a pid");
    rustix::process::kill_process(pid, rustix::process::Signal::HUP).expect("signal the daemon");
    daemon.wait_ready().await;
    assert_eq!(daemon.get("/health").await.0, reqwest::StatusCode::OK);
}

#[tokio::test]
async fn sighup_rereads_the_config_and_keeps_every_session() {
    let daemon = Daemon::start().await;
    let id = create_id(&daemon, json!({})).await;
    let path = daemon.dir.path().join("config.json");

    // A broken file is refused: the daemon keeps running on the config it has.
    std::fs::write(&path, "{\"max_sessions\": ").unwrap();
    let _ = std::process::Command::new("kill").arg("-HUP").arg(daemon.pid().to_string()).status();
    wait_until("the refused reload in the log", DEADLINE, || async {
        daemon.log().contains("config.json not reloaded").then_some(())
    })
    .await;
    assert_eq!(daemon.get("/config").await.1["max_sessions"], json!(50));

    std::fs::write(&path, json!({"max_sessions": 1}).to_string()).unwrap();
    let _ = std::process::Command::new("kill").arg("-HUP").arg(daemon.pid().to_string()).status();
    wait_until("max_sessions 1 live after SIGHUP", DEADLINE, || async {
        (daemon.get("/config").await.1["max_sessions"] == json!(1)).then_some(())
    })
    .await;
    let (_, info) = daemon.get(&format!("/sessions/{id}")).await;
    assert_eq!(info["exited"], json!(false), "the session survived the reload: {info}");
    let (status, body) = daemon.post("/sessions", json!({"shell": "/bin/sh", "cwd": "/"})).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "the new limit applies: {body}");
    assert!(body["error"].as_str().unwrap().contains("max_sessions"), "{body}");
}

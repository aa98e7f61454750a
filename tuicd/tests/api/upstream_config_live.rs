//! `mcp-upstreams.json` saves meeting the live daemon: a save waits for another process holding
//! the file lock and keeps its write, SIGHUP applies a hand edit, and a saved stdio upstream is
//! connected (its tools listed) while an unchanged one keeps its process.

use std::os::unix::fs::MetadataExt;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{DEADLINE, Daemon, START_DEADLINE, wait_until};
use crate::mcp_client::rpc;
use crate::upstream_config::{FILE, disabled, disk_text, on_disk, save, servers};

const LOCK: &str = "mcp-upstreams.json.lock";

/// Whether `/proc/locks` lists `pid` blocked (`->`) on the file with inode `inode`.
fn waits_on(pid: u32, inode: u64) -> bool {
    let locks = std::fs::read_to_string("/proc/locks").expect("/proc/locks");
    locks.lines().any(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        fields.get(1) == Some(&"->")
            && fields.get(5) == Some(&pid.to_string().as_str())
            && fields.get(6).is_some_and(|f| f.ends_with(&format!(":{inode}")))
    })
}

#[tokio::test]
async fn a_save_waits_for_another_process_holding_the_lock_and_keeps_its_write() {
    let daemon = std::sync::Arc::new(Daemon::start().await);
    let lock_path = daemon.dir.path().join(LOCK);
    let lock = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&lock_path).unwrap();
    lock.lock().unwrap();
    let put = tokio::spawn({
        let daemon = daemon.clone();
        async move { save(&daemon, servers(json!([])), servers(json!([disabled("mine", "mine")]))).await }
    });
    let inode = std::fs::metadata(&lock_path).unwrap().ino();
    let pid = daemon.pid();
    wait_until("the daemon's save to wait on the lock", DEADLINE, || async { waits_on(pid, inode).then_some(()) })
        .await;
    // The other process writes while it holds the lock.
    let theirs = servers(json!([disabled("theirs", "theirs")]));
    std::fs::write(daemon.dir.path().join(FILE), serde_json::to_vec(&theirs).unwrap()).unwrap();
    assert!(!put.is_finished(), "the save went ahead while another process held the lock");
    drop(lock);
    let (status, answer) = put.await.unwrap();
    assert_eq!(status, StatusCode::OK, "{answer}");
    let names: Vec<&str> =
        answer["config"]["servers"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(names, ["theirs", "mine"]);
    assert_eq!(on_disk(&daemon)["servers"].as_array().unwrap().len(), 2);
}

async fn status_names(daemon: &Daemon) -> Vec<(String, String)> {
    let (status, body) = daemon.get("/mcp/upstream-status").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["upstreams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| (u["name"].as_str().unwrap().to_owned(), u["status"].as_str().unwrap().to_owned()))
        .collect()
}

#[tokio::test]
async fn sighup_applies_a_hand_edit_and_keeps_the_upstreams_when_the_file_is_broken() {
    let daemon = Daemon::start().await;
    save(&daemon, servers(json!([])), servers(json!([disabled("a", "first")]))).await;
    wait_until("first listed", DEADLINE, || async {
        (status_names(&daemon).await == [("first".to_owned(), "disabled".to_owned())]).then_some(())
    })
    .await;
    let edited = servers(json!([disabled("a", "first"), disabled("b", "by-hand")]));
    std::fs::write(daemon.dir.path().join(FILE), serde_json::to_vec(&edited).unwrap()).unwrap();
    hangup(&daemon);
    wait_until("the hand-added upstream live after SIGHUP", DEADLINE, || async {
        status_names(&daemon).await.iter().any(|(name, _)| name == "by-hand").then_some(())
    })
    .await;

    std::fs::write(daemon.dir.path().join(FILE), "{\"servers\": [").unwrap();
    hangup(&daemon);
    wait_until("the broken file named in the log", DEADLINE, || async {
        daemon.log().contains("mcp-upstreams.json not reloaded").then_some(())
    })
    .await;
    assert_eq!(status_names(&daemon).await.len(), 2, "a broken file dropped the running upstreams");
}

fn hangup(daemon: &Daemon) {
    let _ = std::process::Command::new("kill").arg("-HUP").arg(daemon.pid().to_string()).status();
}

/// `node <server-everything>` as a stdio upstream, tagged through its environment so its process
/// can be told apart.
fn everything(id: &str, name: &str) -> Value {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        script.exists(),
        "{} is missing: run `bash tests/interop/setup.sh` to install the test peers",
        script.display()
    );
    json!({"id": id, "name": name, "transport": {"type": "stdio", "command": "node",
        "args": [script, "stdio"], "env": {"TUIC_TEST_UPSTREAM": name}}})
}

/// The pid of the daemon's child tagged `name`, if it runs.
fn upstream_pid(daemon: &Daemon, name: &str) -> Option<u32> {
    let tag = format!("TUIC_TEST_UPSTREAM={name}");
    std::fs::read_dir("/proc").ok()?.filter_map(Result::ok).find_map(|entry| {
        let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
        let ppid: u32 = stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()?;
        let environ = std::fs::read(entry.path().join("environ")).ok()?;
        let tagged = environ.split(|b| *b == 0).any(|var| var == tag.as_bytes());
        (ppid == daemon.pid() && tagged).then_some(pid)
    })
}

async fn wait_ready(daemon: &Daemon, name: &str) {
    wait_until(&format!("upstream {name} ready"), START_DEADLINE, || async {
        status_names(daemon).await.iter().any(|(n, s)| n == name && s == "ready").then_some(())
    })
    .await;
}

async fn listed_tools(daemon: &Daemon) -> Vec<String> {
    let reply = rpc(daemon, "tools/list", json!({}), &[]).await;
    let tools = reply.body["result"]["tools"].as_array().unwrap_or_else(|| panic!("tools/list: {}", reply.body));
    tools.iter().filter_map(|t| t["name"].as_str().map(str::to_owned)).collect()
}

#[tokio::test]
async fn a_saved_stdio_upstream_goes_live_and_an_unchanged_one_keeps_its_process() {
    let dir = tempfile::Builder::new().prefix("tuic").tempdir().unwrap();
    std::fs::write(dir.path().join(FILE), serde_json::to_vec(&servers(json!([everything("1", "one")]))).unwrap())
        .unwrap();
    let daemon = Daemon::builder().dir(dir).start().await;
    wait_ready(&daemon, "one").await;
    let first = wait_until("one's process", DEADLINE, || async { upstream_pid(&daemon, "one") }).await;

    let (_, base) = daemon.get("/mcp/upstreams").await;
    let both = servers(json!([everything("1", "one"), everything("2", "two")]));
    let (status, answer) = save(&daemon, base, both).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    wait_ready(&daemon, "two").await;
    let tools = listed_tools(&daemon).await;
    assert!(tools.iter().any(|t| t == "two__echo") && tools.iter().any(|t| t == "one__echo"), "{tools:?}");
    let second = wait_until("two's process", DEADLINE, || async { upstream_pid(&daemon, "two") }).await;
    assert_eq!(upstream_pid(&daemon, "one"), Some(first), "the unchanged upstream was restarted");

    let (_, base) = daemon.get("/mcp/upstreams").await;
    let (status, answer) = save(&daemon, base, servers(json!([everything("1", "one")]))).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    wait_until("two's process to end", DEADLINE, || async {
        (upstream_pid(&daemon, "two") != Some(second)).then_some(())
    })
    .await;
    assert!(!listed_tools(&daemon).await.iter().any(|t| t.starts_with("two__")));
    assert_eq!(upstream_pid(&daemon, "one"), Some(first));
    assert!(disk_text(&daemon).unwrap().contains("TUIC_TEST_UPSTREAM"));
}

#[tokio::test]
async fn a_remote_caller_may_read_the_upstreams_but_not_save_them() {
    let host = crate::netns::RemoteHost::create();
    let port = crate::harness::free_port();
    let config = json!({"services": {
        "server": {"enabled": true, "port": port, "bind_address": host.host_ip, "allow_insecure_remote": true},
        "auth": {"username": "me", "password_hash": crate::harness::quick_hash("right")}}});
    let daemon = Daemon::builder().config(config).start().await;
    let url = format!("http://{}:{port}/mcp/upstreams", host.host_ip);
    let curl = |args: Vec<String>| {
        let host = &host;
        async move {
            let mut all = vec!["-sS".to_owned(), "-m".into(), "10".into(), "-w".into(), "\n%{http_code}".into()];
            all.extend(args);
            let all: Vec<&str> = all.iter().map(String::as_str).collect();
            let out = host.exec("curl", &all, std::time::Duration::from_secs(15)).await;
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            let (body, code) = text.rsplit_once('\n').unwrap_or(("", &text));
            (code.trim().to_owned(), serde_json::from_str::<Value>(body).unwrap_or(Value::Null))
        }
    };
    let (code, shown) = curl(vec!["-u".into(), "me:right".into(), url.clone()]).await;
    assert_eq!((code.as_str(), shown.clone()), ("200", servers(json!([]))), "{shown}");
    let body = json!({"base": servers(json!([])), "config": servers(json!([disabled("a", "fs")]))}).to_string();
    let put = ["-u", "me:right", "-X", "PUT", "-H", "Content-Type: application/json", "--data", &body, &url];
    let (code, refused) = curl(put.iter().map(|a| (*a).to_owned()).collect()).await;
    assert_eq!((code.as_str(), refused["code"].as_str()), ("403", Some("loopback_only")), "{refused}");
    assert_eq!(disk_text(&daemon), None);
}

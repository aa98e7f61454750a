//! Helpers for the upstream proxy tests: real MCP servers as upstreams, the fake misbehaving one,
//! a daemon started on an `mcp-upstreams.json`, and the daemon's child processes.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::harness::{DEADLINE, Daemon, DaemonBuilder, wait_until};
use crate::mcp_client::{Reply, initialize, post_raw};

/// The entry script of an npm MCP server installed by `tests/interop/setup.sh`.
pub(crate) fn node_server(package: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/node_modules/@modelcontextprotocol")
        .join(package)
        .join("dist/index.js");
    assert!(path.exists(), "{} is missing: run `bash tests/interop/setup.sh` first", path.display());
    path.to_string_lossy().into_owned()
}

pub(crate) fn everything(name: &str) -> Value {
    json!({"id": name, "name": name, "transport": {"type": "stdio", "command": "node", "args": [node_server("server-everything")]}})
}

pub(crate) fn filesystem(name: &str, root: &Path) -> Value {
    json!({"id": name, "name": name, "transport": {"type": "stdio", "command": "node",
        "args": [node_server("server-filesystem"), root.to_string_lossy()]}})
}

/// The fake server of `tests/fixtures/upstream/fake_mcp.py` in `mode`.
pub(crate) fn fake(name: &str, mode: &str, flag: Option<&Path>) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upstream/fake_mcp.py");
    let mut args = vec![script.to_string_lossy().into_owned(), mode.to_owned()];
    args.extend(flag.map(|f| f.to_string_lossy().into_owned()));
    json!({"id": name, "name": name, "transport": {"type": "stdio", "command": "python3", "args": args}})
}

pub(crate) fn write_upstreams(dir: &Path, servers: &[Value]) {
    std::fs::write(dir.join("mcp-upstreams.json"), json!({"servers": servers}).to_string()).unwrap();
}

/// A daemon builder whose config dir already holds `servers` as its upstreams.
pub(crate) fn with_upstreams(servers: &[Value]) -> DaemonBuilder {
    let dir = tempfile::Builder::new().prefix("tuic").tempdir().unwrap();
    write_upstreams(dir.path(), servers);
    Daemon::builder().dir(dir)
}

/// The upstream `name` in `GET /mcp/upstream-status`.
pub(crate) async fn upstream(daemon: &Daemon, name: &str) -> Value {
    let (_, body) = daemon.get("/mcp/upstream-status").await;
    body["upstreams"].as_array().unwrap().iter().find(|u| u["name"] == name).cloned().unwrap_or(Value::Null)
}

/// Waits until upstream `name` reports `status`; returns its status entry.
pub(crate) async fn wait_status(daemon: &Daemon, name: &str, status: &str) -> Value {
    wait_until(&format!("upstream {name} {status}"), DEADLINE, || async {
        let entry = upstream(daemon, name).await;
        (entry["status"] == status).then_some(entry)
    })
    .await
}

/// A fresh MCP protocol session.
pub(crate) async fn session(daemon: &Daemon) -> String {
    initialize(daemon, &[]).await.session().expect("initialize mints a session")
}

/// One JSON-RPC request in `session`; the whole response body.
pub(crate) async fn request(daemon: &Daemon, session: &str, id: u64, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let reply: Reply = post_raw(daemon, body.to_string(), &[("mcp-session-id", session)]).await;
    reply.body
}

pub(crate) async fn call_tool(daemon: &Daemon, session: &str, name: &str, arguments: Value) -> Value {
    request(daemon, session, 7, "tools/call", json!({"name": name, "arguments": arguments})).await
}

/// The names `tools/list` answers in `session`.
pub(crate) async fn listed_names(daemon: &Daemon, session: &str) -> Vec<String> {
    let body = request(daemon, session, 3, "tools/list", json!({})).await;
    body["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

/// The daemon's direct children: `(pid, command line)`.
pub(crate) fn children(daemon_pid: u32) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        // The fields after the parenthesised command: state, then ppid.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r.to_owned()) else { continue };
        let ppid: u32 = rest.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
        if ppid == daemon_pid {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            out.push((pid, String::from_utf8_lossy(&cmdline).replace('\0', " ")));
        }
    }
    out
}

/// The daemon's children whose command line contains `needle`.
pub(crate) fn children_running(daemon_pid: u32, needle: &str) -> Vec<u32> {
    children(daemon_pid).into_iter().filter(|(_, cmd)| cmd.contains(needle)).map(|(pid, _)| pid).collect()
}

/// The resident set of a process in KiB.
pub(crate) fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

pub(crate) fn scratch_dir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new().prefix("tuic-up").tempdir().unwrap();
    let path = dir.path().canonicalize().unwrap();
    (dir, path)
}

/// Calls `tool` on a fresh server-everything over plain stdio, without tuicd: the reference a
/// proxied result is compared with.
pub(crate) async fn direct_everything_call(tool: &str, arguments: Value) -> Value {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let mut child = tokio::process::Command::new("node")
        .arg(node_server("server-everything"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
            "capabilities": {}, "clientInfo": {"name": "direct", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}),
    ];
    for message in messages {
        stdin.write_all(format!("{message}\n").as_bytes()).await.unwrap();
    }
    tokio::time::timeout(DEADLINE, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == 2 {
                return message["result"].clone();
            }
        }
        panic!("server-everything closed without answering");
    })
    .await
    .expect("server-everything answers directly")
}

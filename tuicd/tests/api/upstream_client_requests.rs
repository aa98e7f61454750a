//! Requests an upstream sends while it serves a call (sampling, elicitation, roots), put to the
//! MCP client whose call caused them: a Python `mcp` SDK upstream asking a Python SDK client
//! with the three callbacks over POST /mcp and through tuic-bridge; a client without the
//! capability refused by name; a request outside any call refused saying why.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{Value, json};
use tokio::process::{Child, Command};

use crate::harness::{DEADLINE, Daemon, START_DEADLINE, free_port, wait_until};
use crate::upstream_util::{call_tool, scratch_dir, session, wait_status, with_upstreams};

/// The Python of the `mcp` 1.x venv `tests/interop/setup.sh` makes.
pub(crate) fn sdk_python() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/.venv-mcp1/bin/python");
    assert!(path.exists(), "{} is missing: run `bash tests/interop/setup.sh` first", path.display());
    path.to_string_lossy().into_owned()
}

/// A script of `tests/interop/`.
pub(crate) fn interop(script: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/interop").join(script).to_string_lossy().into_owned()
}

/// `tests/interop/sdk_upstream.py` over stdio as the upstream `name`.
pub(crate) fn sdk_upstream(name: &str) -> Value {
    json!({"id": name, "name": name,
        "transport": {"type": "stdio", "command": sdk_python(), "args": [interop("sdk_upstream.py")]}})
}

/// `sdk_upstream.py` serving Streamable HTTP on a free loopback port.
pub(crate) struct SdkHttp {
    pub url: String,
    _child: Child,
}

impl SdkHttp {
    pub(crate) async fn start() -> Self {
        let port = free_port();
        let child = Command::new(sdk_python())
            .args([interop("sdk_upstream.py"), "http".into(), port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("the venv's python runs");
        let address = format!("127.0.0.1:{port}");
        wait_until("sdk_upstream.py accepting over HTTP", START_DEADLINE, || async {
            tokio::net::TcpStream::connect(&address).await.ok().map(|_| ())
        })
        .await;
        Self { url: format!("http://{address}/mcp"), _child: child }
    }
}

/// The text of a `tools/call` answer's first content block (the call must have succeeded).
pub(crate) fn text_of(answer: &Value) -> String {
    assert!(answer["result"]["isError"] != json!(true), "the call failed: {answer}");
    answer["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text in {answer}")).to_owned()
}

fn bridge_bin() -> PathBuf {
    let path = PathBuf::from(env!("CARGO_BIN_EXE_tuicd")).with_file_name("tuic-bridge");
    assert!(path.exists(), "{} is missing: run `cargo test -p tuicd -p tuic-bridge`", path.display());
    path
}

/// Runs `server_requests_v1.py` with `args` and fails with its output unless every check passed.
async fn python_client(args: &[String]) {
    let mut command = Command::new(sdk_python());
    command.arg(interop("server_requests_v1.py")).args(args).kill_on_drop(true);
    let run = tokio::time::timeout(START_DEADLINE * 3, command.output()).await;
    let output = run.expect("the Python client finishes within its deadline").expect("python runs");
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "the Python SDK client failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("PASS roots-refused-without-capability"), "{stdout}");
}

async fn daemon_with_sdk_upstream() -> Daemon {
    let daemon = with_upstreams(&[sdk_upstream("sdk")]).start().await;
    wait_status(&daemon, "sdk", "ready").await;
    daemon
}

#[tokio::test]
async fn an_sdk_clients_sampling_elicitation_and_roots_answer_its_upstream_over_post_mcp() {
    let daemon = daemon_with_sdk_upstream().await;
    let socket = daemon.socket.to_string_lossy().into_owned();
    python_client(&["sdk".into(), "http".into(), socket]).await;
    assert!(!daemon.log().contains("panicked"), "{}", daemon.log());
}

#[tokio::test]
async fn an_sdk_clients_sampling_elicitation_and_roots_answer_its_upstream_through_tuic_bridge() {
    let daemon = daemon_with_sdk_upstream().await;
    let bridge = bridge_bin().to_string_lossy().into_owned();
    let socket = daemon.socket.to_string_lossy().into_owned();
    python_client(&["sdk".into(), "stdio".into(), bridge, "--socket".into(), socket]).await;
}

#[tokio::test]
async fn a_client_without_the_capability_is_refused_by_name_and_its_call_answers_as_json() {
    let daemon = daemon_with_sdk_upstream().await;
    let session = session(&daemon).await;
    let answer = call_tool(&daemon, &session, "sdk__ask_llm", json!({"prompt": "hi"})).await;
    let text = text_of(&answer);
    assert!(
        text.starts_with("refused: ") && text.contains("\"sampling\" capability") && text.contains("api-test"),
        "{text}"
    );
}

#[tokio::test]
async fn a_request_from_an_upstream_outside_any_call_is_refused_saying_why() {
    let daemon = daemon_with_sdk_upstream().await;
    let (_dir, scratch) = scratch_dir();
    let (flag, out) = (scratch.join("flag"), scratch.join("out"));
    let session = session(&daemon).await;
    let arguments = json!({"flag": flag, "out": out});
    assert_eq!(text_of(&call_tool(&daemon, &session, "sdk__ask_later", arguments).await), "armed");
    std::fs::write(&flag, "go").unwrap();
    let answered = wait_until("the upstream's late request to be answered", DEADLINE, || async {
        std::fs::read_to_string(&out).ok()
    })
    .await;
    assert!(answered.starts_with("refused: ") && answered.contains("no tool call is in flight"), "{answered}");
}

//! What `agent action=spawn` refuses before anything starts, and the default flags it adds to an
//! agent's command line, seen through the argv the fake agent records.

use std::path::Path;

use serde_json::{Value, json};

use crate::agents::fake_agent;
use crate::harness::*;
use crate::mcp_client::*;
use crate::peers::Peer;

#[tokio::test]
async fn agent_spawn_refuses_an_empty_prompt_or_a_blank_name_as_register_does() {
    let daemon = Daemon::start().await;
    let peer = Peer::external(&daemon).await;
    let register = peer.fails(json!({"action": "register", "name": "   "})).await;
    let spawn = |extra: Value| {
        let mut args = json!({"action": "spawn", "binary_path": fake_agent(), "agent_type": "claude",
            "prompt": "a task", "cwd": daemon.dir.path()});
        merge(&mut args, extra);
        args
    };
    for name in ["", "   "] {
        let error = peer.fails(spawn(json!({"name": name}))).await;
        assert_eq!(error.replace("action=spawn", "action=register"), register, "name {name:?}: {error}");
    }
    for prompt in ["", " \n "] {
        let error = peer.fails(spawn(json!({"prompt": prompt}))).await;
        assert_eq!(error, "agent action=spawn: prompt must not be empty", "prompt {prompt:?}");
    }
    assert_eq!(ok(&daemon, "session", json!({"action": "list"})).await, json!([]), "nothing started");
    let metrics = ok(&daemon, "agent", json!({"action": "metrics"})).await;
    assert_eq!((metrics["spawned"].clone(), metrics["spawn_failures"].clone()), (json!(0), json!(0)));
}

/// A daemon whose agents see `home` as `$HOME` and record their argv.
async fn recording_daemon(home: &Path, argv_file: &Path) -> Daemon {
    Daemon::builder()
        .env("HOME", home.display().to_string())
        .env("FAKE_AGENT_ARGV_FILE", argv_file.display().to_string())
        .start()
        .await
}

async fn spawn_argv(daemon: &Daemon, argv_file: &Path, extra: Value) -> (Value, Vec<String>) {
    let before = std::fs::read_to_string(argv_file).unwrap_or_default().lines().count();
    let mut args = json!({"action": "spawn", "binary_path": fake_agent(), "prompt": "the task"});
    merge(&mut args, extra);
    let spawned = ok(daemon, "agent", args).await;
    let argv = wait_until("the agent records its argv", DEADLINE, || async {
        let text = std::fs::read_to_string(argv_file).unwrap_or_default();
        text.lines().nth(before).map(|line| serde_json::from_str::<Vec<String>>(line).unwrap())
    })
    .await;
    (spawned, argv)
}

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[tokio::test]
async fn a_spawned_claude_code_may_take_channel_pushes_from_the_server_its_config_names() {
    let dir = tempfile::tempdir().unwrap();
    let (home, repo, argv_file) = (dir.path().join("home"), dir.path().join("repo"), dir.path().join("argv"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(repo.join(".mcp.json"), r#"{"mcpServers":{"tuicd-here":{"command":"/opt/bin/tuic-bridge"}}}"#)
        .unwrap();
    let daemon = recording_daemon(&home, &argv_file).await;

    // Both flags take several values: the prompt comes after `--`.
    let (spawned, argv) = spawn_argv(&daemon, &argv_file, json!({"agent_type": "claude", "cwd": repo})).await;
    assert_eq!(argv, strings(&["--dangerously-load-development-channels", "server:tuicd-here", "--", "the task"]));
    assert!(spawned.get("launch_warning").is_none(), "{spawned}");

    // The caller's own choice stands, once.
    let own = json!({"agent_type": "claude", "cwd": repo,
        "args": ["--dangerously-load-development-channels", "server:mine"]});
    let (_, argv) = spawn_argv(&daemon, &argv_file, own).await;
    assert_eq!(argv, strings(&["--dangerously-load-development-channels", "server:mine", "--", "the task"]));

    // No config names a tuic-bridge server: tuicd's own, for this launch only, named `tuic`.
    let (spawned, argv) = spawn_argv(&daemon, &argv_file, json!({"agent_type": "claude", "cwd": home})).await;
    assert_eq!(argv[0], "--mcp-config");
    let config: Value = serde_json::from_str(&argv[1]).unwrap();
    let bridge = config["mcpServers"]["tuic"]["command"].as_str().unwrap();
    assert!(bridge.ends_with("/tuic-bridge") && std::path::Path::new(bridge).is_file(), "{config}");
    assert_eq!(config["mcpServers"]["tuic"]["env"]["TUIC_SESSION"], spawned["tuic_session"]);
    assert_eq!(argv[2..], strings(&["--dangerously-load-development-channels", "server:tuic", "--", "the task"]));
    assert!(spawned.get("launch_warning").is_none(), "{spawned}");
    assert!(!home.join(".claude.json").exists(), "the person's config is never written");
}

#[tokio::test]
async fn a_direct_codex_command_gets_the_approval_bypass_default_unless_the_caller_chose() {
    let dir = tempfile::tempdir().unwrap();
    let argv_file = dir.path().join("argv");
    // A direct Codex command: the program is named codex.
    let codex = dir.path().join("bin/codex");
    std::fs::create_dir_all(codex.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(fake_agent(), &codex).unwrap();
    let daemon = recording_daemon(dir.path(), &argv_file).await;
    // Codex is prefill-only: its prompt goes in through the PTY, so the argv is the flags alone.
    let direct = json!({"binary_path": codex, "cwd": dir.path()});
    let (spawned, argv) = spawn_argv(&daemon, &argv_file, direct).await;
    assert_eq!(spawned["agent_type"], json!("codex"), "the executable selects the agent");
    assert_eq!(argv[0], "--dangerously-bypass-approvals-and-sandbox");
    assert_eq!((argv[1].as_str(), argv[3].as_str()), ("-c", "-c"), "tuic's MCP server for this launch: {argv:?}");
    assert!(argv[2].starts_with("mcp_servers.tuic.command=") && argv[2].contains("tuic-bridge"), "{argv:?}");
    let chosen = json!({"binary_path": codex, "cwd": dir.path(), "args": ["--ask-for-approval", "on-request"]});
    let (_, argv) = spawn_argv(&daemon, &argv_file, chosen).await;
    assert!(!argv.contains(&"--dangerously-bypass-approvals-and-sandbox".to_owned()), "{argv:?}");
    assert_eq!(argv[argv.len() - 2..], strings(&["--ask-for-approval", "on-request"]));
    // The fake agent given codex's type is a wrapper, not a direct Codex command: untouched.
    let wrapper = json!({"agent_type": "codex", "cwd": dir.path()});
    let (_, argv) = spawn_argv(&daemon, &argv_file, wrapper).await;
    assert_eq!(argv, Vec::<String>::new());
}

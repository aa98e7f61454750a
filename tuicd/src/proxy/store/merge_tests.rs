use serde_json::{Value, json};

use super::*;
use crate::proxy::config::Transport;
use crate::proxy::store::redact::{REDACTED, redacted};

fn file(servers: Value) -> UpstreamsFile {
    serde_json::from_value(json!({ "servers": servers })).expect("a valid file")
}

fn parsed(whole: Value) -> UpstreamsFile {
    serde_json::from_value(whole).expect("a valid file")
}

fn stdio(id: &str, name: &str) -> Value {
    json!({"id": id, "name": name, "transport": {"type": "stdio", "command": format!("{name}-server")}})
}

fn with(mut server: Value, key: &str, value: Value) -> Value {
    server[key] = value;
    server
}

#[test]
fn the_delta_is_applied_to_the_latest_file() {
    let oauth = json!({"type": "oauth2", "client_id": "registered-meanwhile", "scopes": ["read"]});
    let bearer = json!({"type": "bearer", "token": "t"});
    let filter = json!({"mode": "deny", "patterns": ["write*"]});
    // (what, base, desired, latest on disk, expected result)
    let cases = [
        (
            "a stale save does not erase auth written concurrently for an otherwise unchanged server",
            vec![stdio("a", "fs")],
            vec![with(stdio("a", "fs"), "enabled", json!(false))],
            vec![with(stdio("a", "fs"), "auth", oauth.clone())],
            vec![with(with(stdio("a", "fs"), "auth", oauth.clone()), "enabled", json!(false))],
        ),
        (
            "a stale save of nothing changed keeps the concurrent auth",
            vec![stdio("a", "fs")],
            vec![stdio("a", "fs")],
            vec![with(stdio("a", "fs"), "auth", oauth.clone())],
            vec![with(stdio("a", "fs"), "auth", oauth.clone())],
        ),
        (
            "a server added concurrently survives, and ours goes last",
            vec![stdio("a", "fs")],
            vec![stdio("a", "fs"), stdio("b", "git")],
            vec![stdio("a", "fs"), stdio("c", "web")],
            vec![stdio("a", "fs"), stdio("c", "web"), stdio("b", "git")],
        ),
        (
            "removal removes only that id",
            vec![stdio("a", "fs"), stdio("b", "git")],
            vec![stdio("a", "fs")],
            vec![stdio("a", "fs"), stdio("b", "git"), stdio("c", "web")],
            vec![stdio("a", "fs"), stdio("c", "web")],
        ),
        (
            "removing what another save removed already is no conflict",
            vec![stdio("a", "fs"), stdio("b", "git")],
            vec![stdio("a", "fs")],
            vec![stdio("a", "fs")],
            vec![stdio("a", "fs")],
        ),
        (
            "an optional field absent from desired but present in base clears",
            vec![with(with(stdio("a", "fs"), "auth", bearer.clone()), "tool_filter", filter.clone())],
            vec![stdio("a", "fs")],
            vec![with(with(stdio("a", "fs"), "auth", bearer.clone()), "tool_filter", filter.clone())],
            vec![stdio("a", "fs")],
        ),
        (
            "a rename keeps the id and the fields changed elsewhere",
            vec![stdio("a", "fs")],
            vec![stdio("a", "files")],
            vec![with(stdio("a", "fs"), "tool_filter", filter.clone())],
            vec![with(stdio("a", "files"), "tool_filter", filter.clone())],
        ),
        (
            "the same server added twice with the same content is one server",
            vec![],
            vec![stdio("b", "git")],
            vec![stdio("b", "git")],
            vec![stdio("b", "git")],
        ),
        (
            "two saves changing different fields of one server both land",
            vec![stdio("a", "fs")],
            vec![with(stdio("a", "fs"), "timeout_secs", json!(5))],
            vec![with(stdio("a", "fs"), "enabled", json!(false))],
            vec![with(with(stdio("a", "fs"), "enabled", json!(false)), "timeout_secs", json!(5))],
        ),
    ];
    for (what, base, desired, latest, expected) in cases {
        let merged = merge(&file(json!(base)), &file(json!(desired)), &file(json!(latest)));
        assert_eq!(merged, Ok(file(json!(expected))), "{what}");
    }
}

#[test]
fn the_same_id_added_by_two_saves_is_a_conflict_naming_it() {
    let error = merge(&file(json!([])), &file(json!([stdio("b", "git")])), &file(json!([stdio("b", "other")])))
        .expect_err("added twice, differently");
    assert_eq!(error, MergeError::AddedConcurrently { id: "b".into() });
    assert!(error.to_string().contains("\"b\""), "{error}");
}

#[test]
fn changing_a_server_removed_meanwhile_is_a_conflict() {
    let error = merge(&file(json!([stdio("a", "fs")])), &file(json!([stdio("a", "files")])), &file(json!([])))
        .expect_err("a is gone");
    assert_eq!(error, MergeError::RemovedConcurrently { id: "a".into() });
}

#[test]
fn an_unchanged_save_is_an_empty_delta() {
    let servers =
        file(json!([stdio("a", "fs"), with(stdio("b", "git"), "auth", json!({"type": "bearer", "token": "t"}))]));
    let shown = parsed(redacted(&servers));
    assert_eq!(Delta::between(&servers, &servers), Ok(Delta::default()));
    assert_eq!(Delta::between(&shown, &shown), Ok(Delta::default()));
}

#[test]
fn a_redacted_secret_in_a_changed_field_keeps_the_latest_stored_value() {
    let stored = file(json!([with(
        json!({"id": "a", "name": "fs", "transport": {"type": "stdio", "command": "srv", "env": {"KEY": "secret"}}}),
        "enabled",
        json!(true)
    )]));
    let base = parsed(redacted(&stored));
    let mut desired = base.clone();
    let Transport::Stdio { command, .. } = &mut desired.servers[0].transport else { panic!("stdio") };
    *command = "srv2".into();
    let merged = merge(&base, &desired, &stored).expect("merges");
    let Transport::Stdio { command, env, .. } = &merged.servers[0].transport else { panic!("stdio") };
    assert_eq!((command.as_str(), env["KEY"].as_str()), ("srv2", "secret"));
    assert_ne!(env["KEY"], REDACTED);
}

#[test]
fn a_duplicate_id_in_base_is_refused() {
    let base = UpstreamsFile { servers: vec![file(json!([stdio("a", "x")])).servers[0].clone(); 2] };
    assert_eq!(Delta::between(&base, &base), Err(MergeError::DuplicateBaseId { id: "a".into() }));
}

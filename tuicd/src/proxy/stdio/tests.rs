use super::read::answer_of;
use super::*;

#[test]
fn tilde_expands_to_home_only_at_the_start() {
    let home = std::env::var("HOME").expect("HOME is set in tests");
    assert_eq!(expand_tilde("~"), home);
    assert_eq!(expand_tilde("~/bin/x"), format!("{home}/bin/x"));
    assert_eq!(expand_tilde("~other/x"), "~other/x");
    assert_eq!(expand_tilde("/a/~/b"), "/a/~/b");
}

#[test]
fn responses_become_results_or_named_errors() {
    assert_eq!(answer_of(json!({"id": 1, "result": {"a": 1}})), Ok(json!({"a": 1})));
    let error = answer_of(json!({"id": 1, "error": {"code": -32602, "message": "bad"}})).expect_err("an error");
    assert_eq!(error, UpstreamError::Rpc { code: -32602, message: "bad".into(), data: None });
}

#[test]
fn the_environment_keeps_only_the_allowlist() {
    let env = allowed_env();
    assert!(env.iter().all(|(k, _)| ENV_ALLOWLIST.contains(&k.as_str()) || k.starts_with("LC_")));
}

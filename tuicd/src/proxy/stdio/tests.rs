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
fn the_id_of_an_oversized_answer_is_read_from_its_start() {
    assert_eq!(leading_id(br#"{"jsonrpc":"2.0","id": 42,"result":{"#), Some(42));
    assert_eq!(leading_id(br#"{"id":7"#), Some(7));
    assert_eq!(leading_id(br#"{"method":"x"}"#), None);
}

#[test]
fn responses_become_results_or_named_errors() {
    assert_eq!(answer_of(json!({"id": 1, "result": {"a": 1}})), Ok(json!({"a": 1})));
    let error = answer_of(json!({"id": 1, "error": {"code": -32602, "message": "bad"}})).expect_err("an error");
    assert_eq!(error, UpstreamError::Rpc { code: -32602, message: "bad".into(), data: None });
}

#[tokio::test]
async fn lines_over_the_limit_are_refused_and_the_next_line_still_reads() {
    let input = format!("{}\n{{\"ok\":1}}\n", "x".repeat(100));
    let mut reader = BufReader::new(input.as_bytes());
    let mut buf = Vec::new();
    assert!(matches!(read_line_bounded(&mut reader, &mut buf, 50).await, Ok(Line::TooLong(101))));
    buf.clear();
    assert!(matches!(read_line_bounded(&mut reader, &mut buf, 50).await, Ok(Line::Complete)));
    assert_eq!(buf, b"{\"ok\":1}\n");
    buf.clear();
    assert!(matches!(read_line_bounded(&mut reader, &mut buf, 50).await, Ok(Line::Eof)));
}

#[test]
fn the_environment_keeps_only_the_allowlist() {
    let env = allowed_env();
    assert!(env.iter().all(|(k, _)| ENV_ALLOWLIST.contains(&k.as_str()) || k.starts_with("LC_")));
}

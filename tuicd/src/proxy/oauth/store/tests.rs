//! The credential store over the file, and the keyring item's format.

use super::*;
use std::os::unix::fs::PermissionsExt;

fn tokens(access: &str) -> TokenSet {
    TokenSet {
        access_token: access.into(),
        refresh_token: Some("r".into()),
        expires_at: None,
        issued_at: None,
        scope: None,
    }
}

fn file_store(dir: &Path) -> CredentialStore {
    CredentialStore::with_mode(dir, Mode::File)
}

#[tokio::test]
async fn tokens_persist_in_a_0600_file_and_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let store = file_store(dir.path());
    assert_eq!(store.tokens("u1", "http://a/mcp").await, None);
    store.set_tokens("u1", "http://a/mcp", tokens("t1")).await.unwrap();
    let path = dir.path().join(FILE_NAME);
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    let reopened = file_store(dir.path());
    assert_eq!(reopened.tokens("u1", "http://a/mcp").await, Some(tokens("t1")));
}

#[tokio::test]
async fn a_token_is_never_handed_to_another_url() {
    let dir = tempfile::tempdir().unwrap();
    let store = file_store(dir.path());
    store.set_tokens("u1", "http://a/mcp", tokens("t1")).await.unwrap();
    assert_eq!(store.tokens("u1", "http://evil/mcp").await, None);
    // Storing for the new URL drops what was issued for the old one.
    let client = RegisteredClient { client_id: "c".into(), client_secret: None, registration_endpoint: "r".into() };
    store.set_client("u1", "http://b/mcp", client.clone()).await.unwrap();
    assert_eq!(store.tokens("u1", "http://b/mcp").await, None);
    assert_eq!(store.tokens("u1", "http://a/mcp").await, None);
    assert_eq!(store.client("u1", "r").await, Some(client));
    assert_eq!(store.client("u1", "other").await, None);
}

#[tokio::test]
async fn an_unreadable_file_is_never_overwritten_and_a_refused_write_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(FILE_NAME);
    std::fs::write(&path, b"{not json").unwrap();
    let store = file_store(dir.path());
    let err = store.set_tokens("u1", "http://a/mcp", tokens("t1")).await.unwrap_err();
    assert!(err.to_string().contains("credentials.json"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), b"{not json");
    assert_eq!(store.tokens("u1", "http://a/mcp").await, None, "nothing remembered that was not stored");
}

#[tokio::test]
async fn forgetting_an_upstream_removes_it_from_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = file_store(dir.path());
    store.set_tokens("u1", "http://a/mcp", tokens("t1")).await.unwrap();
    store.set_tokens("u2", "http://b/mcp", tokens("t2")).await.unwrap();
    store.forget("u1").await.unwrap();
    assert_eq!(store.tokens("u1", "http://a/mcp").await, None);
    let reopened = file_store(dir.path());
    assert_eq!(reopened.tokens("u1", "http://a/mcp").await, None);
    assert_eq!(reopened.tokens("u2", "http://b/mcp").await, Some(tokens("t2")));
    store.forget("never-stored").await.unwrap();
}

#[test]
fn a_keyring_secret_is_the_structured_json_with_type_oauth2() {
    let mut entry = Entry::new("http://a/mcp");
    entry.tokens = Some(tokens("t1"));
    let secret = secret_of(&entry);
    let json: serde_json::Value = serde_json::from_slice(&secret).unwrap();
    assert_eq!(json["type"], "oauth2");
    assert_eq!(json["resource"], "http://a/mcp");
    assert_eq!(json["tokens"]["access_token"], "t1");
    assert!(json.get("grant").is_none() && json.get("client").is_none(), "absent parts are omitted: {json}");
    let back = serde_json::from_slice::<Entry>(&secret).unwrap();
    assert_eq!(secret_of(&back), secret, "the item reads back as it was stored");
}

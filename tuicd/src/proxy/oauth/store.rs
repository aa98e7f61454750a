//! The credential store: OAuth tokens and dynamically registered clients, per upstream id, in
//! `<config_dir>/credentials.json` (mode 0600, replaced atomically). Never in
//! `mcp-upstreams.json`, never in an answer or a log line.
//!
//! The OS keyring is not used: on this daemon's hosts (headless, no D-Bus session bus) the
//! `keyring` crate's Secret Service store answers `NoDefaultStore`, and the kernel keyutils
//! store is refused in sandboxes; a daemon needs a store that works unattended, which is this
//! file in the private (0700) config dir.
//!
//! Each entry remembers the upstream URL it was issued for, and a token is handed out only for
//! that URL, so an upstream whose URL is edited never receives the previous server's token.

use std::collections::BTreeMap;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::fetch::Client;
use super::tokens::TokenSet;
use crate::lock::Recover;

pub(crate) const FILE_NAME: &str = "credentials.json";

/// A client registered at an authorization server (RFC 7591), kept for later flows.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RegisteredClient {
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// The registration endpoint it was obtained from; another server gets a new registration.
    pub registration_endpoint: String,
}

impl std::fmt::Debug for RegisteredClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredClient").field("client_id", &self.client_id).finish_non_exhaustive()
    }
}

/// What a refresh needs: where, as which client, for which resource (RFC 8707).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Grant {
    pub token_endpoint: String,
    pub client: Client,
    pub resource: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Entry {
    /// Always "oauth2": the reference implementation's structured credential format.
    #[serde(rename = "type")]
    kind: String,
    /// The upstream URL the tokens were issued for.
    resource: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tokens: Option<TokenSet>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    grant: Option<Grant>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client: Option<RegisteredClient>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    #[serde(default)]
    upstreams: BTreeMap<String, Entry>,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum StoreError {
    #[error("{path} cannot be read as a credential file ({reason}); fix or remove it to store credentials")]
    Unreadable { path: String, reason: String },
    #[error("cannot write {path}: {reason}")]
    Write { path: String, reason: String },
}

pub(crate) struct CredentialStore {
    path: PathBuf,
    /// The file's content; `Err` when the file exists but cannot be parsed (never overwritten).
    /// A std lock held for a lookup or one small file write, never across an await.
    file: Mutex<Result<File, String>>,
}

impl std::fmt::Debug for CredentialStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CredentialStore").field("path", &self.path).finish_non_exhaustive()
    }
}

impl CredentialStore {
    /// Loads `<config_dir>/credentials.json`; a missing file is an empty store.
    pub(crate) fn open(config_dir: &Path) -> Self {
        let path = config_dir.join(FILE_NAME);
        let file = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice::<File>(&bytes).map_err(|e| e.to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(File::default()),
            Err(e) => Err(e.to_string()),
        };
        if let Err(reason) = &file {
            tracing::error!(path = %path.display(), %reason, "the OAuth credential file cannot be read; it is left as it is");
        }
        Self { path, file: Mutex::new(file) }
    }

    /// The tokens stored for upstream `id`, if they were issued for `resource`.
    pub(crate) fn tokens(&self, id: &str, resource: &str) -> Option<TokenSet> {
        let file = self.file.locked();
        let entry = file.as_ref().ok()?.upstreams.get(id)?;
        if entry.resource != resource {
            return None;
        }
        entry.tokens.clone()
    }

    /// The client registered for upstream `id` at `registration_endpoint`, if any.
    pub(crate) fn client(&self, id: &str, registration_endpoint: &str) -> Option<RegisteredClient> {
        let file = self.file.locked();
        let client = file.as_ref().ok()?.upstreams.get(id)?.client.clone()?;
        (client.registration_endpoint == registration_endpoint).then_some(client)
    }

    /// How the tokens of upstream `id` at `resource` are refreshed.
    pub(crate) fn grant(&self, id: &str, resource: &str) -> Option<Grant> {
        let file = self.file.locked();
        let entry = file.as_ref().ok()?.upstreams.get(id)?;
        if entry.resource != resource {
            return None;
        }
        entry.grant.clone()
    }

    /// Stores the tokens of a completed authorization and how to refresh them.
    pub(crate) fn set_authorized(
        &self,
        id: &str,
        resource: &str,
        tokens: TokenSet,
        grant: Grant,
    ) -> Result<(), StoreError> {
        self.update(id, resource, |entry| {
            entry.tokens = Some(tokens);
            entry.grant = Some(grant);
        })
    }

    pub(crate) fn set_tokens(&self, id: &str, resource: &str, tokens: TokenSet) -> Result<(), StoreError> {
        self.update(id, resource, |entry| entry.tokens = Some(tokens))
    }

    pub(crate) fn set_client(&self, id: &str, resource: &str, client: RegisteredClient) -> Result<(), StoreError> {
        self.update(id, resource, |entry| entry.client = Some(client))
    }

    /// Forgets the tokens of upstream `id` (a refresh token the server refused).
    pub(crate) fn clear_tokens(&self, id: &str) -> Result<(), StoreError> {
        let mut guard = self.file.locked();
        let file = self.usable(&mut guard)?;
        if let Some(entry) = file.upstreams.get_mut(id) {
            entry.tokens = None;
        }
        write_atomic(&self.path, file)
    }

    fn update(&self, id: &str, resource: &str, change: impl FnOnce(&mut Entry)) -> Result<(), StoreError> {
        let mut guard = self.file.locked();
        let file = self.usable(&mut guard)?;
        let entry = file.upstreams.entry(id.to_owned()).or_default();
        if entry.resource != resource {
            // Credentials issued for another URL never follow an edited upstream.
            *entry = Entry { kind: "oauth2".into(), resource: resource.to_owned(), ..Entry::default() };
        }
        change(entry);
        write_atomic(&self.path, file)
    }

    fn usable<'a>(&self, guard: &'a mut Result<File, String>) -> Result<&'a mut File, StoreError> {
        guard
            .as_mut()
            .map_err(|reason| StoreError::Unreadable { path: self.path.display().to_string(), reason: reason.clone() })
    }
}

/// Writes `file` privately and atomically ([`crate::private_file`]).
fn write_atomic(path: &Path, file: &File) -> Result<(), StoreError> {
    let fail = |e: std::io::Error| StoreError::Write { path: path.display().to_string(), reason: e.to_string() };
    let bytes = serde_json::to_vec_pretty(file).map_err(|e| fail(std::io::Error::other(e)))?;
    crate::private_file::write(path, &bytes).map_err(fail)
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn tokens_persist_in_a_0600_file_and_survive_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let store = CredentialStore::open(dir.path());
        assert_eq!(store.tokens("u1", "http://a/mcp"), None);
        store.set_tokens("u1", "http://a/mcp", tokens("t1")).unwrap();
        let path = dir.path().join(FILE_NAME);
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        let reopened = CredentialStore::open(dir.path());
        assert_eq!(reopened.tokens("u1", "http://a/mcp"), Some(tokens("t1")));
    }

    #[test]
    fn a_token_is_never_handed_to_another_url() {
        let dir = tempfile::tempdir().unwrap();
        let store = CredentialStore::open(dir.path());
        store.set_tokens("u1", "http://a/mcp", tokens("t1")).unwrap();
        assert_eq!(store.tokens("u1", "http://evil/mcp"), None);
        // Storing for the new URL drops what was issued for the old one.
        let client = RegisteredClient { client_id: "c".into(), client_secret: None, registration_endpoint: "r".into() };
        store.set_client("u1", "http://b/mcp", client.clone()).unwrap();
        assert_eq!(store.tokens("u1", "http://b/mcp"), None);
        assert_eq!(store.tokens("u1", "http://a/mcp"), None);
        assert_eq!(store.client("u1", "r"), Some(client));
        assert_eq!(store.client("u1", "other"), None);
    }

    #[test]
    fn an_unreadable_file_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        std::fs::write(&path, b"{not json").unwrap();
        let store = CredentialStore::open(dir.path());
        let err = store.set_tokens("u1", "http://a/mcp", tokens("t1")).unwrap_err();
        assert!(err.to_string().contains("credentials.json"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), b"{not json");
    }
}

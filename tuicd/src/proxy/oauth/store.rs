//! The credential store: OAuth tokens and dynamically registered clients, per upstream id, in
//! the OS keyring when it works ([`keyring`]: one Secret Service item per upstream), else in
//! `<config_dir>/credentials.json` (mode 0600, replaced atomically). Never in
//! `mcp-upstreams.json`, never in an answer or a log line.
//!
//! Opening the store (at daemon start, else the first use) probes the keyring once, bounded by a
//! timeout (`TUIC_CREDENTIALS_STORE`, [`placement::Mode`], chooses), logs which store serves and
//! why, and moves what the file holds into a working keyring. Headless hosts often have no
//! session bus: there the file in the private (0700) config dir serves. Reads answer from memory;
//! writes go to the store first and change memory only once stored.
//!
//! Each entry remembers the upstream URL it was issued for, and a token is handed out only for
//! that URL, so an upstream whose URL is edited never receives the previous server's token.

mod keyring;
pub(crate) mod placement;

use std::collections::BTreeMap;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::fetch::Client;
use super::tokens::TokenSet;
use crate::lock::Recover;
use keyring::Keyring;
use placement::Mode;

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

/// One upstream's credentials: a `credentials.json` value, and the secret of its keyring item.
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

impl Entry {
    fn new(resource: &str) -> Self {
        Self { kind: "oauth2".into(), resource: resource.to_owned(), ..Self::default() }
    }
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum StoreError {
    #[error("{path} cannot be read as a credential file ({reason}); fix or remove it to store credentials")]
    Unreadable { path: String, reason: String },
    #[error("cannot write {path}: {reason}")]
    Write { path: String, reason: String },
    #[error("the OS keyring cannot store credentials ({reason})")]
    Keyring { reason: String },
}

/// The store that serves, decided once when the store opens.
#[derive(Debug)]
enum Backend {
    Keyring(Keyring),
    File,
    /// `TUIC_CREDENTIALS_STORE=keyring` and the keyring does not work: writes are refused.
    Refused(String),
}

pub(crate) struct CredentialStore {
    path: PathBuf,
    mode: Mode,
    /// Why `mode` is the file store when `TUIC_CREDENTIALS_STORE` holds no valid mode.
    invalid_mode: Option<String>,
    /// What `credentials.json` holds; `Err` when it exists but cannot be parsed (never overwritten).
    /// A std lock held for a lookup or one small file write, never across an await.
    file: Mutex<Result<File, String>>,
    /// Every upstream's entry, from whichever store holds it; what reads answer from.
    known: Mutex<BTreeMap<String, Entry>>,
    backend: tokio::sync::OnceCell<Backend>,
    /// Writes one at a time, so a store receives one upstream's entries in the order they were
    /// made (held across the keyring call, hence a tokio lock).
    writing: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for CredentialStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CredentialStore").field("path", &self.path).finish_non_exhaustive()
    }
}

impl CredentialStore {
    /// Loads `<config_dir>/credentials.json` (a missing file is an empty store); the keyring is
    /// probed when the store opens ([`Self::open`]), as `TUIC_CREDENTIALS_STORE` asks.
    pub(crate) fn new(config_dir: &Path) -> Self {
        let (mode, invalid_mode) = Mode::from_env();
        Self { invalid_mode, ..Self::with_mode(config_dir, mode) }
    }

    pub(crate) fn with_mode(config_dir: &Path, mode: Mode) -> Self {
        let path = config_dir.join(FILE_NAME);
        let file = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice::<File>(&bytes).map_err(|e| e.to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(File::default()),
            Err(e) => Err(e.to_string()),
        };
        if let Err(reason) = &file {
            tracing::error!(path = %path.display(), %reason, "the OAuth credential file cannot be read; it is left as it is");
        }
        let known = file.as_ref().map(|f| f.upstreams.clone()).unwrap_or_default();
        Self {
            path,
            mode,
            invalid_mode: None,
            file: Mutex::new(file),
            known: Mutex::new(known),
            backend: tokio::sync::OnceCell::new(),
            writing: tokio::sync::Mutex::new(()),
        }
    }

    /// Chooses the store and loads what it holds, if no call has yet.
    pub(crate) async fn open(&self) {
        self.backend().await;
    }

    /// The tokens stored for upstream `id`, if they were issued for `resource`.
    pub(crate) async fn tokens(&self, id: &str, resource: &str) -> Option<TokenSet> {
        self.backend().await;
        self.loaded_tokens(id, resource)
    }

    /// [`Self::tokens`] without waiting for the store to open (the daemon opens it at start).
    pub(crate) fn loaded_tokens(&self, id: &str, resource: &str) -> Option<TokenSet> {
        self.issued_for(id, resource, |entry| entry.tokens.clone())
    }

    /// `read` of upstream `id`'s entry, when it was issued for `resource`.
    fn issued_for<T>(&self, id: &str, resource: &str, read: impl FnOnce(&Entry) -> Option<T>) -> Option<T> {
        let known = self.known.locked();
        known.get(id).filter(|entry| entry.resource == resource).and_then(read)
    }

    /// The client registered for upstream `id` at `registration_endpoint`, if any.
    pub(crate) async fn client(&self, id: &str, registration_endpoint: &str) -> Option<RegisteredClient> {
        self.backend().await;
        let client = self.known.locked().get(id)?.client.clone()?;
        (client.registration_endpoint == registration_endpoint).then_some(client)
    }

    /// How the tokens of upstream `id` at `resource` are refreshed.
    pub(crate) async fn grant(&self, id: &str, resource: &str) -> Option<Grant> {
        self.backend().await;
        self.issued_for(id, resource, |entry| entry.grant.clone())
    }

    /// Stores the tokens of a completed authorization and how to refresh them.
    pub(crate) async fn set_authorized(
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
        .await
    }

    pub(crate) async fn set_tokens(&self, id: &str, resource: &str, tokens: TokenSet) -> Result<(), StoreError> {
        self.update(id, resource, |entry| entry.tokens = Some(tokens)).await
    }

    pub(crate) async fn set_client(
        &self,
        id: &str,
        resource: &str,
        client: RegisteredClient,
    ) -> Result<(), StoreError> {
        self.update(id, resource, |entry| entry.client = Some(client)).await
    }

    /// Forgets the tokens of upstream `id` (a refresh token the server refused).
    pub(crate) async fn clear_tokens(&self, id: &str) -> Result<(), StoreError> {
        let backend = self.backend().await;
        let _in_order = self.writing.lock().await;
        let Some(mut next) = self.known.locked().get(id).cloned() else {
            return Ok(());
        };
        next.tokens = None;
        self.persist(backend, id, &next).await?;
        self.known.locked().insert(id.to_owned(), next);
        Ok(())
    }

    /// Deletes everything stored for upstream `id`, in whichever store holds it (the upstream
    /// left the configuration).
    pub(crate) async fn forget(&self, id: &str) -> Result<(), StoreError> {
        let backend = self.backend().await;
        let _in_order = self.writing.lock().await;
        if let Backend::Keyring(keyring) = backend {
            keyring.remove(id).await.map_err(|reason| StoreError::Keyring { reason })?;
        }
        self.write_file_entry(id, None, false)?;
        self.known.locked().remove(id);
        Ok(())
    }

    async fn update(&self, id: &str, resource: &str, change: impl FnOnce(&mut Entry)) -> Result<(), StoreError> {
        let backend = self.backend().await;
        let _in_order = self.writing.lock().await;
        let mut next = self.known.locked().get(id).cloned().unwrap_or_default();
        if next.resource != resource {
            // Credentials issued for another URL never follow an edited upstream.
            next = Entry::new(resource);
        }
        change(&mut next);
        self.persist(backend, id, &next).await?;
        self.known.locked().insert(id.to_owned(), next);
        Ok(())
    }

    /// Writes `entry` to the store that serves. A keyring that refuses one write leaves the entry
    /// in the file (moved into the keyring at the next start); the file keeps nothing the
    /// keyring holds.
    async fn persist(&self, backend: &Backend, id: &str, entry: &Entry) -> Result<(), StoreError> {
        match backend {
            Backend::File => self.write_file_entry(id, Some(entry), true),
            Backend::Refused(reason) => Err(StoreError::Keyring { reason: reason.clone() }),
            Backend::Keyring(keyring) => match keyring.put(id, &secret_of(entry)).await {
                Ok(()) => self.write_file_entry(id, None, false),
                Err(reason) => {
                    tracing::warn!(source = "oauth", upstream = id, %reason, "the OS keyring refused the credentials; they are kept in credentials.json");
                    self.write_file_entry(id, Some(entry), true)
                }
            },
        }
    }

    /// Sets (`Some`) or removes (`None`) upstream `id` in `credentials.json`. A removal from a file
    /// that is missing the entry writes nothing; from an unreadable file it is an error only when
    /// `strict` (the keyring holds the entry, and the file is left as it is).
    fn write_file_entry(&self, id: &str, entry: Option<&Entry>, strict: bool) -> Result<(), StoreError> {
        let mut guard = self.file.locked();
        let file = match guard.as_mut() {
            Ok(file) => file,
            Err(_) if !strict => return Ok(()),
            Err(reason) => {
                return Err(StoreError::Unreadable { path: self.path.display().to_string(), reason: reason.clone() });
            }
        };
        match entry {
            Some(entry) => {
                file.upstreams.insert(id.to_owned(), entry.clone());
            }
            None if file.upstreams.remove(id).is_none() => return Ok(()),
            None => {}
        }
        write_atomic(&self.path, file)
    }

    /// The store that serves, decided at the first call: every read and write waits for it, so
    /// nothing is read before the keyring's entries are loaded.
    async fn backend(&self) -> &Backend {
        self.backend.get_or_init(|| self.choose()).await
    }

    async fn choose(&self) -> Backend {
        let path = self.path.display().to_string();
        if self.mode == Mode::File {
            match &self.invalid_mode {
                Some(e) => tracing::error!(source = "oauth", %path, error = %e, "credential store: the 0600 file"),
                None => {
                    tracing::info!(source = "oauth", %path, "credential store: the 0600 file, as TUIC_CREDENTIALS_STORE=file asks")
                }
            }
            return Backend::File;
        }
        let opened = match Keyring::probe().await {
            Ok(keyring) => self.adopt(&keyring).await.map(|()| keyring),
            Err(reason) => Err(reason),
        };
        match opened {
            Ok(keyring) => {
                tracing::info!(
                    source = "oauth",
                    "credential store: the OS keyring (Secret Service), one item per upstream"
                );
                Backend::Keyring(keyring)
            }
            Err(reason) if self.mode == Mode::Keyring => {
                tracing::error!(source = "oauth", %reason, "credential store: TUIC_CREDENTIALS_STORE=keyring and the OS keyring does not work; OAuth credentials cannot be stored");
                Backend::Refused(reason)
            }
            Err(reason) => {
                tracing::info!(source = "oauth", %path, %reason, "credential store: the 0600 file, because the OS keyring does not work");
                Backend::File
            }
        }
    }

    /// Loads the keyring's entries and moves the file's into it ([`placement::migrate`]).
    async fn adopt(&self, keyring: &Keyring) -> Result<(), String> {
        let mut stored = BTreeMap::new();
        for (id, secret) in keyring.load_all().await? {
            match serde_json::from_slice::<Entry>(&secret) {
                Ok(entry) => {
                    stored.insert(id, entry);
                }
                Err(e) => {
                    tracing::warn!(source = "oauth", upstream = %id, error = %e, "a keyring item of tuic is not a credential entry; it is ignored")
                }
            }
        }
        let in_file = self.file.locked().as_ref().map(|f| f.upstreams.clone()).unwrap_or_default();
        let migration = placement::migrate(&in_file, stored);
        *self.known.locked() = migration.merged;
        let mut moved = 0;
        for id in &migration.to_keyring {
            match keyring.put(id, &secret_of(&in_file[id])).await {
                Ok(()) => match self.write_file_entry(id, None, false) {
                    Ok(()) => moved += 1,
                    Err(e) => {
                        tracing::warn!(source = "oauth", upstream = %id, error = %e, "credentials moved into the OS keyring are still in the file")
                    }
                },
                Err(reason) => {
                    tracing::warn!(source = "oauth", upstream = %id, %reason, "credentials stay in credentials.json")
                }
            }
        }
        if moved > 0 {
            tracing::info!(
                source = "oauth",
                upstreams = moved,
                "credentials moved from credentials.json into the OS keyring"
            );
        }
        Ok(())
    }
}

/// The keyring item's secret: the entry's JSON, `"type": "oauth2"` first.
fn secret_of(entry: &Entry) -> Vec<u8> {
    serde_json::to_vec(entry).unwrap_or_default()
}

/// Writes `file` privately and atomically ([`crate::private_file`]).
fn write_atomic(path: &Path, file: &File) -> Result<(), StoreError> {
    let fail = |e: std::io::Error| StoreError::Write { path: path.display().to_string(), reason: e.to_string() };
    let bytes = serde_json::to_vec_pretty(file).map_err(|e| fail(std::io::Error::other(e)))?;
    crate::private_file::write(path, &bytes).map_err(fail)
}

#[cfg(test)]
mod tests;

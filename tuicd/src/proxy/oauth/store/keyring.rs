//! The OS keyring: the freedesktop Secret Service (gnome-keyring, KeePassXC, KWallet's bridge)
//! over the D-Bus session bus, through `secret-service`'s async API on tokio, so no call blocks a
//! runtime thread. Every call is bounded by [`KEYRING_CALL_TIMEOUT`]: a bus that never answers
//! (or a collection that would prompt a person nobody sees) costs an error, not a hang.
//!
//! One item per upstream, found by the attributes `service` = `tuic` and `username` =
//! `mcp-upstream:<id>` (the attribute names of the `keyring` crate, so `secret-tool lookup
//! service tuic username mcp-upstream:<id>` reads it), its secret the upstream's entry as JSON.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;

use secret_service::{EncryptionType, SecretService};

use crate::limits::{KEYRING_CALL_TIMEOUT, KEYRING_PROBE_TIMEOUT};

const SERVICE: &str = "tuic";
const ACCOUNT_PREFIX: &str = "mcp-upstream:";
/// Written, read back and deleted by the probe; never an upstream's account.
const PROBE_ACCOUNT: &str = "probe";
const CONTENT_TYPE: &str = "application/json";

pub(crate) struct Keyring {
    ss: SecretService<'static>,
}

impl std::fmt::Debug for Keyring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Keyring(Secret Service)")
    }
}

/// The keyring account of upstream `id`.
pub(crate) fn account(id: &str) -> String {
    format!("{ACCOUNT_PREFIX}{id}")
}

impl Keyring {
    /// Connects and proves the keyring works: stores a probe item, reads it back and deletes it,
    /// all within [`KEYRING_PROBE_TIMEOUT`]. The error says why it does not (no secret in it).
    pub(crate) async fn probe() -> Result<Self, String> {
        let attempt = async {
            let ss = SecretService::connect(EncryptionType::Dh)
                .await
                .map_err(|e| format!("no Secret Service on the session bus ({e})"))?;
            let keyring = Self { ss };
            let value = format!("probe {}", std::process::id());
            keyring.store(PROBE_ACCOUNT, "tuic keyring probe", value.as_bytes()).await?;
            let back = keyring.read(PROBE_ACCOUNT).await?;
            keyring.delete(PROBE_ACCOUNT).await?;
            if back.as_deref() != Some(value.as_bytes()) {
                return Err("the probe item read back differently from what was stored".to_owned());
            }
            Ok(keyring)
        };
        match tokio::time::timeout(KEYRING_PROBE_TIMEOUT, attempt).await {
            Ok(result) => result,
            Err(_) => Err(format!("the Secret Service did not answer within {} ms", KEYRING_PROBE_TIMEOUT.as_millis())),
        }
    }

    /// Every upstream item: `(id, secret)`. Locked items cannot be read and are named in a log line.
    pub(crate) async fn load_all(&self) -> Result<BTreeMap<String, Vec<u8>>, String> {
        bounded(async {
            let found = self.ss.search_items(HashMap::from([("service", SERVICE)])).await.map_err(describe)?;
            if !found.locked.is_empty() {
                tracing::warn!(
                    source = "oauth",
                    items = found.locked.len(),
                    "keyring items of tuic are locked and are not read"
                );
            }
            let mut out = BTreeMap::new();
            for item in found.unlocked {
                let attributes = item.get_attributes().await.map_err(describe)?;
                let Some(id) = attributes.get("username").and_then(|a| a.strip_prefix(ACCOUNT_PREFIX)) else {
                    continue;
                };
                out.insert(id.to_owned(), item.get_secret().await.map_err(describe)?);
            }
            Ok(out)
        })
        .await
    }

    /// Stores (or replaces) the item of upstream `id`.
    pub(crate) async fn put(&self, id: &str, secret: &[u8]) -> Result<(), String> {
        let label = format!("tuic: OAuth credentials of MCP upstream {id}");
        bounded(self.store(&account(id), &label, secret)).await
    }

    /// Deletes the item of upstream `id`, if there is one.
    pub(crate) async fn remove(&self, id: &str) -> Result<(), String> {
        bounded(self.delete(&account(id))).await
    }

    async fn store(&self, account: &str, label: &str, secret: &[u8]) -> Result<(), String> {
        let collection =
            self.ss.get_default_collection().await.map_err(|e| format!("no default keyring collection ({e})"))?;
        if collection.is_locked().await.map_err(describe)? {
            // Unlocking asks a person through a prompt; a daemon has nobody to ask.
            return Err("the default keyring collection is locked".to_owned());
        }
        let attributes = HashMap::from([("service", SERVICE), ("username", account)]);
        collection.create_item(label, attributes, secret, true, CONTENT_TYPE).await.map_err(describe)?;
        Ok(())
    }

    async fn read(&self, account: &str) -> Result<Option<Vec<u8>>, String> {
        let found = self.ss.search_items(attributes(account)).await.map_err(describe)?;
        match found.unlocked.first() {
            Some(item) => Ok(Some(item.get_secret().await.map_err(describe)?)),
            None if found.locked.is_empty() => Ok(None),
            None => Err("the keyring item is locked".to_owned()),
        }
    }

    async fn delete(&self, account: &str) -> Result<(), String> {
        let found = self.ss.search_items(attributes(account)).await.map_err(describe)?;
        if !found.locked.is_empty() {
            return Err("the keyring item is locked and cannot be deleted".to_owned());
        }
        for item in found.unlocked {
            item.delete().await.map_err(describe)?;
        }
        Ok(())
    }
}

fn attributes(account: &str) -> HashMap<&str, &str> {
    HashMap::from([("service", SERVICE), ("username", account)])
}

fn describe(e: secret_service::Error) -> String {
    format!("Secret Service: {e}")
}

async fn bounded<T>(call: impl Future<Output = Result<T, String>>) -> Result<T, String> {
    match tokio::time::timeout(KEYRING_CALL_TIMEOUT, call).await {
        Ok(result) => result,
        Err(_) => Err(format!("the Secret Service did not answer within {} ms", KEYRING_CALL_TIMEOUT.as_millis())),
    }
}

//! Scoped, revocable access tokens: `tuic_<id>_<secret>`, shown once at creation and stored as
//! the SHA-256 of the secret in `<config>/tokens.json` (0600). The secret is 256 random bits, so
//! a fast hash is enough: no guess can be checked offline faster than the secret space allows,
//! and checking one costs the daemon a hash, not bcrypt.
//!
//! Revoking a token, or its expiry, ends every request and stream it authenticated
//! ([`TokenStore::ended`]).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio::sync::watch;

use super::{Kind, Scope, TokenGrant};
use crate::limits::{TOKEN_NAME_MAX_CHARS, TOKENS_MAX};
use crate::lock::Recover;

const FILE: &str = "tokens.json";
const PREFIX: &str = "tuic_";

/// One token as stored: never its secret.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Record {
    id: String,
    name: String,
    kind: Kind,
    scope: Scope,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sessions: Option<BTreeMap<String, Scope>>,
    created_at: u64,
    #[serde(default)]
    expires_at: Option<u64>,
    secret_sha256: String,
}

/// What `token list` and `GET /auth/tokens` show of a token.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub(crate) struct TokenInfo {
    pub id: String,
    pub name: String,
    pub kind: Kind,
    pub scope: Scope,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sessions: Option<BTreeMap<String, Scope>>,
    /// Unix seconds.
    pub created_at: u64,
    pub expires_at: Option<u64>,
    pub last_used_at: Option<u64>,
}

/// A token to create; `sessions` are canonical session ids.
#[derive(Debug, Clone)]
pub(crate) struct NewToken {
    pub name: String,
    pub kind: Kind,
    pub scope: Scope,
    pub sessions: Option<BTreeMap<String, Scope>>,
    /// `None`: until revoked.
    pub ttl: Option<Duration>,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum TokenError {
    #[error("{0}")]
    Invalid(String),
    #[error("{TOKENS_MAX} tokens exist already: revoke one first (tuicd token list, tuicd token revoke ID)")]
    Full,
    #[error("cannot save {FILE}: {0}")]
    Save(std::io::Error),
}

#[derive(Debug)]
pub(crate) struct TokenStore {
    path: PathBuf,
    records: Mutex<Vec<Record>>,
    last_used: Mutex<HashMap<String, u64>>,
    /// Bumped on every revocation, so that streams a token opened can end at once.
    revoked: watch::Sender<u64>,
}

impl TokenStore {
    /// The tokens saved in `config_dir`; an unreadable file is logged and no token is valid.
    pub(crate) fn load(config_dir: &Path) -> Self {
        let path = config_dir.join(FILE);
        let records = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                tracing::error!(path = %path.display(), error = %e, "unreadable tokens file: no token is accepted until it is fixed or removed");
                Vec::new()
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => {
                tracing::error!(path = %path.display(), error = %e, "cannot read the tokens file: no token is accepted");
                Vec::new()
            }
        };
        Self { path, records: Mutex::new(records), last_used: Mutex::default(), revoked: watch::Sender::new(0) }
    }

    /// Creates a token: its description and the token itself, which is never shown again.
    pub(crate) fn create(&self, new: NewToken) -> Result<(TokenInfo, String), TokenError> {
        let name = new.name.trim();
        if name.is_empty() || name.chars().count() > TOKEN_NAME_MAX_CHARS || name.chars().any(char::is_control) {
            return Err(TokenError::Invalid(format!(
                "name: 1 to {TOKEN_NAME_MAX_CHARS} characters without control characters"
            )));
        }
        if new.kind == Kind::Agent && new.scope == Scope::Admin {
            return Err(TokenError::Invalid("scope: an agent's token is observe or drive, never admin".into()));
        }
        if let Some(sessions) = &new.sessions {
            if sessions.is_empty() {
                return Err(TokenError::Invalid("sessions: name at least one session, or none for all".into()));
            }
            if sessions.values().any(|s| *s == Scope::Admin) {
                return Err(TokenError::Invalid(
                    "sessions: a session is reached at observe or drive; admin is across the daemon".into(),
                ));
            }
        }
        let now = unix_now();
        let secret_bytes = random_bytes();
        let secret = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(secret_bytes);
        let id = hex(&random_bytes()[..4]);
        let record = Record {
            id: id.clone(),
            name: name.to_owned(),
            kind: new.kind,
            scope: new.sessions.as_ref().map_or(new.scope, |s| s.values().copied().max().unwrap_or(Scope::Observe)),
            sessions: new.sessions,
            created_at: now,
            expires_at: new.ttl.map(|ttl| now.saturating_add(ttl.as_secs())),
            secret_sha256: hex(&Sha256::digest(secret.as_bytes())),
        };
        let mut records = self.records.locked();
        records.retain(|r| !expired(r, now));
        if records.len() >= TOKENS_MAX {
            return Err(TokenError::Full);
        }
        records.push(record.clone());
        if let Err(e) = self.save(&records) {
            records.pop();
            return Err(TokenError::Save(e));
        }
        Ok((self.info(&record), format!("{PREFIX}{id}_{secret}")))
    }

    /// Every token not expired, oldest first.
    pub(crate) fn list(&self) -> Vec<TokenInfo> {
        let now = unix_now();
        self.records.locked().iter().filter(|r| !expired(r, now)).map(|r| self.info(r)).collect()
    }

    /// Revokes the token `id`: false when there is none.
    pub(crate) fn revoke(&self, id: &str) -> Result<bool, TokenError> {
        let mut records = self.records.locked();
        let Some(at) = records.iter().position(|r| r.id == id) else { return Ok(false) };
        let removed = records.remove(at);
        if let Err(e) = self.save(&records) {
            records.insert(at, removed);
            return Err(TokenError::Save(e));
        }
        drop(records);
        self.last_used.locked().remove(id);
        self.revoked.send_modify(|generation| *generation += 1);
        Ok(true)
    }

    /// The grant of a presented token, if it is one of ours and not expired. The secret's digest
    /// is compared without stopping early.
    pub(crate) fn verify(&self, presented: &str) -> Option<Arc<TokenGrant>> {
        let (id, secret) = presented.strip_prefix(PREFIX)?.split_once('_')?;
        let digest = hex(&Sha256::digest(secret.as_bytes()));
        let now = unix_now();
        let records = self.records.locked();
        let record = records.iter().find(|r| r.id == id && !expired(r, now))?;
        let same = record.secret_sha256.bytes().zip(digest.bytes()).fold(0u8, |d, (a, b)| d | (a ^ b)) == 0
            && record.secret_sha256.len() == digest.len();
        if !same {
            return None;
        }
        let grant = Arc::new(TokenGrant {
            id: record.id.clone(),
            name: record.name.clone(),
            kind: record.kind,
            scope: record.scope,
            sessions: record.sessions.clone(),
        });
        drop(records);
        self.last_used.locked().insert(id.to_owned(), now);
        Some(grant)
    }

    /// Seconds the token `id` has left (`None`: no expiry); `Err` once it is revoked or expired.
    fn remaining(&self, id: &str) -> Result<Option<u64>, ()> {
        let now = unix_now();
        let records = self.records.locked();
        let record = records.iter().find(|r| r.id == id && !expired(r, now)).ok_or(())?;
        Ok(record.expires_at.map(|at| at.saturating_sub(now)))
    }

    /// Resolves once the token `id` is revoked or expires: a stream it opened ends then.
    pub(crate) async fn ended(&self, id: &str) {
        let mut revoked = self.revoked.subscribe();
        loop {
            let left = match self.remaining(id) {
                Err(()) => return,
                Ok(left) => left,
            };
            let expiry = async {
                match left {
                    Some(secs) => tokio::time::sleep(Duration::from_secs(secs.max(1))).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                changed = revoked.changed() => if changed.is_err() { return },
                () = expiry => {}
            }
        }
    }

    /// Seconds until the token `id` expires, for a cookie's `Max-Age`.
    pub(crate) fn seconds_left(&self, id: &str) -> Option<u64> {
        self.remaining(id).ok().flatten()
    }

    fn info(&self, record: &Record) -> TokenInfo {
        TokenInfo {
            id: record.id.clone(),
            name: record.name.clone(),
            kind: record.kind,
            scope: record.scope,
            sessions: record.sessions.clone(),
            created_at: record.created_at,
            expires_at: record.expires_at,
            last_used_at: self.last_used.locked().get(&record.id).copied(),
        }
    }

    fn save(&self, records: &[Record]) -> std::io::Result<()> {
        let bytes = serde_json::to_vec_pretty(records).map_err(std::io::Error::other)?;
        crate::private_file::write(&self.path, &bytes)
    }
}

fn expired(record: &Record, now: u64) -> bool {
    record.expires_at.is_some_and(|at| at <= now)
}

fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// 32 bytes from the OS's random source (two v4 UUIDs' bytes are `getrandom`'s output).
fn random_bytes() -> [u8; 32] {
    let mut out = [0u8; 32];
    out[..16].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    out[16..].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A duration as `tuicd token create --ttl` takes it: `90s`, `30m`, `12h`, `7d`, or `never`.
pub(crate) fn parse_ttl(text: &str) -> Result<Option<Duration>, String> {
    if text == "never" {
        return Ok(None);
    }
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 =
        number.parse().map_err(|_| format!("ttl {text:?}: a number then s, m, h or d (12h), or never"))?;
    let unit_secs = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        _ => return Err(format!("ttl {text:?}: the unit is s, m, h or d (12h), or say never")),
    };
    if number == 0 {
        return Err(format!("ttl {text:?}: must be more than zero"));
    }
    number
        .checked_mul(unit_secs)
        .map(|s| Some(Duration::from_secs(s)))
        .ok_or_else(|| format!("ttl {text:?} is too long"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new(name: &str) -> NewToken {
        NewToken { name: name.into(), kind: Kind::Person, scope: Scope::Drive, sessions: None, ttl: None }
    }

    #[test]
    fn a_token_is_shown_once_stored_hashed_verified_and_revoked() {
        let dir = tempfile::tempdir().unwrap();
        let store = TokenStore::load(dir.path());
        let (info, token) = store.create(new("phone")).unwrap();
        assert!(token.starts_with(&format!("tuic_{}_", info.id)), "{token}");
        let saved = std::fs::read_to_string(dir.path().join(FILE)).unwrap();
        let secret = token.rsplit('_').next().unwrap();
        assert!(!saved.contains(secret), "the secret is not stored: {saved}");
        let mode =
            std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(dir.path().join(FILE)).unwrap().permissions());
        assert_eq!(mode & 0o777, 0o600);

        let grant = store.verify(&token).expect("valid");
        assert_eq!((grant.name.as_str(), grant.scope, grant.kind), ("phone", Scope::Drive, Kind::Person));
        let mut wrong = token.clone();
        wrong.pop();
        wrong.push(if token.ends_with('A') { 'B' } else { 'A' });
        assert!(store.verify(&wrong).is_none());
        assert!(store.verify("tuic_nothing").is_none() && store.verify("Basic x").is_none());

        let reloaded = TokenStore::load(dir.path());
        assert_eq!(reloaded.list()[0].last_used_at, None);
        assert!(reloaded.verify(&token).is_some(), "tokens survive a restart");
        assert!(store.list()[0].last_used_at.is_some());
        assert!(reloaded.revoke(&info.id).unwrap());
        assert!(reloaded.verify(&token).is_none());
        assert!(!reloaded.revoke(&info.id).unwrap());
        assert!(TokenStore::load(dir.path()).verify(&token).is_none(), "revocation is saved");
    }

    #[test]
    fn bad_names_scopes_and_session_lists_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let store = TokenStore::load(dir.path());
        let err = |t: NewToken| store.create(t).unwrap_err().to_string();
        assert!(err(new("")).contains("name"));
        assert!(err(new("a\nb")).contains("control"));
        assert!(err(new(&"x".repeat(65))).contains("64"));
        assert!(err(NewToken { kind: Kind::Agent, scope: Scope::Admin, ..new("a") }).contains("never admin"));
        assert!(err(NewToken { sessions: Some(BTreeMap::new()), ..new("a") }).contains("at least one"));
        let admin_session = BTreeMap::from([("s1".to_owned(), Scope::Admin)]);
        assert!(err(NewToken { sessions: Some(admin_session), ..new("a") }).contains("across the daemon"));
    }

    #[tokio::test]
    async fn revoking_ends_what_the_token_opened_and_an_expired_token_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(TokenStore::load(dir.path()));
        let (info, token) = store.create(new("phone")).unwrap();
        let ended = tokio::spawn({
            let store = store.clone();
            let id = info.id.clone();
            async move { store.ended(&id).await }
        });
        assert!(!ended.is_finished());
        store.revoke(&info.id).unwrap();
        tokio::time::timeout(Duration::from_secs(5), ended).await.expect("ended on revocation").unwrap();
        assert!(store.verify(&token).is_none());

        let (info, token) = store.create(NewToken { ttl: Some(Duration::from_secs(1)), ..new("short") }).unwrap();
        assert!(store.verify(&token).is_some());
        tokio::time::timeout(Duration::from_secs(5), store.ended(&info.id)).await.expect("ended on expiry");
        assert!(store.verify(&token).is_none());
        assert!(store.list().is_empty());
    }

    #[test]
    fn ttls_read_as_the_cli_takes_them() {
        assert_eq!(parse_ttl("12h"), Ok(Some(Duration::from_secs(43_200))));
        assert_eq!(parse_ttl("90s"), Ok(Some(Duration::from_secs(90))));
        assert_eq!(parse_ttl("7d"), Ok(Some(Duration::from_secs(604_800))));
        assert_eq!(parse_ttl("never"), Ok(None));
        for bad in ["", "h", "12", "12w", "0h", "-1h", "99999999999999999999d"] {
            assert!(parse_ttl(bad).is_err(), "{bad}");
        }
    }
}

//! Basic Auth for the TCP listener: bcrypt verification off the async workers, one at a time
//! ([`BCRYPT_CONCURRENCY`]); a cache of verified credentials so bcrypt runs once per credential;
//! and a failed-login limiter (5 failures in 300 s answer 429 by default).
//!
//! The limiter's key is the client's address group (`admission::address_group`); on a loopback
//! address with a configured user name it is that address and the user name sent, because
//! behind an SSH tunnel or a local reverse proxy every client is 127.0.0.1, and another local
//! user's failures under another name must not lock the owner out. A failure is counted before
//! bcrypt runs and taken back when the password is right, so a burst of concurrent guesses runs
//! at most the limit's worth of bcrypt. A wrong user name costs the same bcrypt as a right one
//! (the timing does not say which part was wrong).

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use http::HeaderMap;
use sha2::{Digest, Sha256};
use tokio::sync::Semaphore;

use super::admission::address_group;
use crate::config::AuthConfig;
use crate::http::ApiError;
use crate::limits::{AUTH_CACHE_CAPACITY, AUTH_LIMITER_CAPACITY, BCRYPT_CONCURRENCY, BCRYPT_QUEUE_WAIT};
use crate::lock::Recover;
use crate::principals::tokens::TokenStore;
use crate::principals::{Grant, TokenGrant};

/// Who the failed-login limiter counts: an address group, with the user name on loopback.
type LimiterKey = (IpAddr, Option<String>);

#[derive(Debug)]
pub(crate) struct AuthGate {
    /// Std mutexes: each is held for a map lookup, never across `.await` or bcrypt.
    failures: Mutex<HashMap<LimiterKey, VecDeque<Instant>>>,
    /// SHA-256 of `(Authorization header, password hash it was verified against)`, newest last;
    /// digests, so the lookup's comparison says nothing about a cached header's bytes.
    verified: Mutex<VecDeque<[u8; 32]>>,
    /// One login check at a time per limiter key: a burst from one client is checked in turn,
    /// so the others it sends see its failures (and 429) before reaching bcrypt, and the pool's
    /// queue holds at most one of its checks. Also makes concurrent first logins with the same
    /// credentials run bcrypt once: the second finds the first's result in `verified`.
    turns: Mutex<HashMap<LimiterKey, Arc<tokio::sync::Mutex<()>>>>,
    /// The bcrypt pool: verifications wait here, at most [`BCRYPT_QUEUE_WAIT`].
    bcrypt: Arc<Semaphore>,
}

impl Default for AuthGate {
    fn default() -> Self {
        Self {
            failures: Mutex::default(),
            verified: Mutex::default(),
            turns: Mutex::default(),
            bcrypt: Arc::new(Semaphore::new(BCRYPT_CONCURRENCY)),
        }
    }
}

impl AuthGate {
    /// The caller's grant: a token (`Authorization: Bearer`, or the `tui-session` cookie the
    /// phone link sets), else the Basic password, which is the owner's.
    pub(crate) async fn check(
        &self,
        auth: &AuthConfig,
        tokens: &TokenStore,
        ip: IpAddr,
        headers: &HeaderMap,
    ) -> Result<Grant, ApiError> {
        let basic = headers
            .get(http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.get(..6).is_some_and(|s| s.eq_ignore_ascii_case("basic ")));
        // Basic before the cookie: a browser that has both (a revoked phone link, then the
        // password) is the password's.
        match presented_token(headers) {
            Some(token) if !basic => self.check_token(auth, tokens, ip, &token).map(Grant::Token),
            _ => self.check_password(auth, ip, headers).await.map(|()| Grant::Owner),
        }
    }

    /// A presented token: counted against the limiter like a password when it is not one of
    /// ours (a token cannot be guessed, but a flood of wrong ones is still a flood).
    pub(crate) fn check_token(
        &self,
        auth: &AuthConfig,
        tokens: &TokenStore,
        ip: IpAddr,
        token: &str,
    ) -> Result<Arc<TokenGrant>, ApiError> {
        let window = Duration::from_secs(auth.auth_rate_limit_window_secs);
        let key = limiter_key(ip, auth, None);
        if let Some(retry_after_secs) = self.limited(&key, window, auth.auth_rate_limit_max) {
            return Err(ApiError::TooManyRequests { retry_after_secs });
        }
        match tokens.verify(token) {
            Some(grant) => Ok(grant),
            None => {
                self.reserve(&key, window, auth.auth_rate_limit_max)
                    .map_err(|retry_after_secs| ApiError::TooManyRequests { retry_after_secs })?;
                Err(ApiError::Unauthorized("unknown, expired or revoked token".into()))
            }
        }
    }

    async fn check_password(&self, auth: &AuthConfig, ip: IpAddr, headers: &HeaderMap) -> Result<(), ApiError> {
        let window = Duration::from_secs(auth.auth_rate_limit_window_secs);
        let header = headers.get(http::header::AUTHORIZATION).and_then(|v| v.to_str().ok());
        let credentials = header.and_then(decode_basic);
        let key = limiter_key(ip, auth, credentials.as_ref().map(|(user, _)| user.as_str()));
        if let Some(retry_after_secs) = self.limited(&key, window, auth.auth_rate_limit_max) {
            return Err(ApiError::TooManyRequests { retry_after_secs });
        }
        let Some(header) = header else {
            return Err(ApiError::Unauthorized("remote access needs Basic credentials".into()));
        };
        if auth.password_hash.is_empty() {
            return Err(ApiError::Unauthorized(
                "remote access has no password set: put a bcrypt hash (tuicd hash-password) in services.auth.password_hash"
                    .into(),
            ));
        }
        let digest: [u8; 32] = Sha256::new()
            .chain_update(header.as_bytes())
            .chain_update([0])
            .chain_update(auth.password_hash.as_bytes())
            .finalize()
            .into();
        if self.verified.locked().contains(&digest) {
            return Ok(());
        }
        let waited = Instant::now();
        let Ok(turn) = tokio::time::timeout(BCRYPT_QUEUE_WAIT, self.turn(&key).lock_owned()).await else {
            // Busy, not wrong: this attempt is not held against the caller.
            return Err(ApiError::TooManyRequests { retry_after_secs: 1 });
        };
        if self.verified.locked().contains(&digest) {
            return Ok(());
        }
        // Counted as a failure now, before bcrypt: concurrent guesses each see the others.
        let reserved = self
            .reserve(&key, window, auth.auth_rate_limit_max)
            .map_err(|retry_after_secs| ApiError::TooManyRequests { retry_after_secs })?;
        let Some((user, password)) = credentials else {
            return Err(ApiError::Unauthorized("wrong username or password".into()));
        };
        let pool_wait = BCRYPT_QUEUE_WAIT.saturating_sub(waited.elapsed());
        let Ok(Ok(permit)) = tokio::time::timeout(pool_wait, self.bcrypt.clone().acquire_owned()).await else {
            // Busy, not wrong: this attempt is not held against the caller.
            self.release(&key, reserved);
            return Err(ApiError::TooManyRequests { retry_after_secs: 1 });
        };
        // bcrypt runs for a wrong user name too, against the same hash, and the names are
        // compared in constant time: a wrong name takes as long as a wrong password.
        let user_ok = auth.username.is_empty() || same_text(&user, &auth.username);
        let hash = auth.password_hash.clone();
        let checked = tokio::task::spawn_blocking(move || {
            // The pool slot and the turn are held until bcrypt ends, even when the client hung up
            // meanwhile: a guesser cannot free either by disconnecting. The turn comes back, so
            // that it is held until the outcome is recorded below.
            let _permit = permit;
            tracing::debug!("bcrypt verification");
            (bcrypt::verify(password, &hash).unwrap_or(false), turn)
        })
        .await;
        let (password_ok, _turn) = match checked {
            Ok((ok, turn)) => (ok, Some(turn)),
            Err(_) => (false, None),
        };
        if user_ok && password_ok {
            self.release(&key, reserved);
            let mut verified = self.verified.locked();
            if verified.len() == AUTH_CACHE_CAPACITY {
                verified.pop_front();
            }
            verified.push_back(digest);
            Ok(())
        } else {
            Err(ApiError::Unauthorized("wrong username or password".into()))
        }
    }

    /// The key's turn lock; locks nobody holds or waits for are dropped once the map is full.
    fn turn(&self, key: &LimiterKey) -> Arc<tokio::sync::Mutex<()>> {
        let mut turns = self.turns.locked();
        if turns.len() >= AUTH_LIMITER_CAPACITY && !turns.contains_key(key) {
            turns.retain(|_, turn| Arc::strong_count(turn) > 1);
        }
        turns.entry(key.clone()).or_default().clone()
    }

    /// Seconds until the oldest failure in the window expires, when the key is at the limit.
    fn limited(&self, key: &LimiterKey, window: Duration, max: u32) -> Option<u64> {
        let mut failures = self.failures.locked();
        let entry = failures.get_mut(key)?;
        let now = Instant::now();
        while entry.front().is_some_and(|t| now.duration_since(*t) >= window) {
            entry.pop_front();
        }
        if entry.is_empty() {
            failures.remove(key);
            return None;
        }
        (entry.len() as u32 >= max).then(|| {
            let oldest = *entry.front().unwrap_or(&now);
            window.saturating_sub(now.duration_since(oldest)).as_secs().max(1)
        })
    }

    /// Records a failure unless the key is at the limit (then `Err(retry_after_secs)`), checking
    /// and recording under one lock so no two concurrent attempts both take the last place.
    fn reserve(&self, key: &LimiterKey, window: Duration, max: u32) -> Result<Instant, u64> {
        if let Some(retry_after_secs) = self.limited(key, window, max) {
            return Err(retry_after_secs);
        }
        let mut failures = self.failures.locked();
        if failures.get(key).is_some_and(|entry| entry.len() as u32 >= max) {
            // Another attempt took the last place between the check and this lock.
            return Err(1);
        }
        if failures.len() >= AUTH_LIMITER_CAPACITY && !failures.contains_key(key) {
            // Bounded: forget keys whose failures have all expired, else the stalest one.
            let now = Instant::now();
            failures.retain(|_, times| times.back().is_some_and(|t| now.duration_since(*t) < window));
            if failures.len() >= AUTH_LIMITER_CAPACITY
                && let Some(stalest) = failures.iter().min_by_key(|(_, t)| t.back().copied()).map(|(k, _)| k.clone())
            {
                failures.remove(&stalest);
            }
        }
        let now = Instant::now();
        failures.entry(key.clone()).or_default().push_back(now);
        Ok(now)
    }

    /// Takes back a failure [`reserve`](Self::reserve) recorded: the password was right.
    fn release(&self, key: &LimiterKey, reserved: Instant) {
        let mut failures = self.failures.locked();
        if let Some(entry) = failures.get_mut(key) {
            if let Some(at) = entry.iter().position(|t| *t == reserved) {
                entry.remove(at);
            }
            if entry.is_empty() {
                failures.remove(key);
            }
        }
    }
}

/// The address group, plus the user name sent when the client is on loopback and a user name is
/// configured (with none configured every name is the same account, so it cannot tell users apart).
fn limiter_key(ip: IpAddr, auth: &AuthConfig, user: Option<&str>) -> LimiterKey {
    let per_user = ip.to_canonical().is_loopback() && !auth.username.is_empty();
    (address_group(ip), per_user.then(|| user.unwrap_or_default().to_owned()))
}

/// Equality that takes the same time wherever the texts differ: their SHA-256 digests are
/// compared byte by byte without stopping early.
fn same_text(a: &str, b: &str) -> bool {
    let (a, b) = (Sha256::digest(a.as_bytes()), Sha256::digest(b.as_bytes()));
    a.iter().zip(b.iter()).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

/// The cookie the phone link sets (`GET /mobile?token=`), named as the desktop app names it.
pub(crate) const SESSION_COOKIE: &str = "tui-session";

/// A token in `Authorization: Bearer`, else in the `tui-session` cookie.
fn presented_token(headers: &HeaderMap) -> Option<String> {
    if let Some(value) = headers.get(http::header::AUTHORIZATION).and_then(|v| v.to_str().ok())
        && let Some((scheme, token)) = value.split_once(' ')
        && scheme.eq_ignore_ascii_case("bearer")
    {
        return Some(token.trim().to_owned());
    }
    headers
        .get_all(http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|pair| pair.trim().strip_prefix(SESSION_COOKIE)?.strip_prefix('=').map(str::to_owned))
}

fn decode_basic(header: &str) -> Option<(String, String)> {
    let (scheme, encoded) = header.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD.decode(encoded.trim()).ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (user, password) = text.split_once(':')?;
    Some((user.to_owned(), password.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_basic_credentials() {
        let header = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode("me:pa:ss"));
        assert_eq!(decode_basic(&header), Some(("me".into(), "pa:ss".into())));
        assert_eq!(decode_basic("Bearer abc"), None);
        assert_eq!(decode_basic("Basic !!!"), None);
    }

    #[test]
    fn the_limiter_opens_after_max_failures_in_the_window_and_a_success_takes_its_place_back() {
        let gate = AuthGate::default();
        let key: LimiterKey = ("192.0.2.1".parse().unwrap(), None);
        let window = Duration::from_secs(300);
        let mut last = None;
        for _ in 0..5 {
            last = Some(gate.reserve(&key, window, 5).unwrap());
        }
        assert!(gate.limited(&key, window, 5).is_some());
        assert!(gate.reserve(&key, window, 5).is_err(), "no sixth place");
        gate.release(&key, last.unwrap());
        assert_eq!(gate.limited(&key, window, 5), None);
        assert_eq!(gate.limited(&("192.0.2.2".parse().unwrap(), None), window, 5), None);
    }

    #[test]
    fn loopback_with_a_user_name_is_limited_per_name_and_other_addresses_per_group() {
        let auth = AuthConfig { username: "me".into(), ..AuthConfig::default() };
        let loopback: IpAddr = "127.0.0.1".parse().unwrap();
        assert_ne!(limiter_key(loopback, &auth, Some("me")), limiter_key(loopback, &auth, Some("eve")));
        let remote: IpAddr = "2001:db8::1".parse().unwrap();
        assert_eq!(
            limiter_key(remote, &auth, Some("me")),
            limiter_key("2001:db8::2".parse().unwrap(), &auth, Some("x"))
        );
        let any_name = AuthConfig::default();
        assert_eq!(limiter_key(loopback, &any_name, Some("me")), limiter_key(loopback, &any_name, Some("eve")));
    }

    #[test]
    fn a_token_is_read_from_bearer_then_from_the_session_cookie() {
        let mut headers = HeaderMap::new();
        assert_eq!(presented_token(&headers), None);
        headers.insert(http::header::COOKIE, "a=b; tui-session=tuic_1_x; c=d".parse().unwrap());
        assert_eq!(presented_token(&headers).as_deref(), Some("tuic_1_x"));
        headers.insert(http::header::AUTHORIZATION, "Bearer tuic_2_y".parse().unwrap());
        assert_eq!(presented_token(&headers).as_deref(), Some("tuic_2_y"));
        headers.insert(http::header::AUTHORIZATION, "Basic abc".parse().unwrap());
        assert_eq!(presented_token(&headers).as_deref(), Some("tuic_1_x"));
    }

    #[test]
    fn same_text_compares_whole_texts() {
        assert!(same_text("me", "me"));
        assert!(!same_text("me", "mE"));
        assert!(!same_text("me", "me2"));
        assert!(!same_text("", "me"));
    }
}

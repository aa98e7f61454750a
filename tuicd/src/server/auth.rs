//! Basic Auth for the TCP listener: bcrypt verification off the async workers, a cache of
//! verified credentials so bcrypt runs once per credential, and a failed-attempt limiter per
//! client address (5 failures in 300 s answer 429 by default).

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine;
use http::HeaderMap;

use crate::config::AuthConfig;
use crate::http::ApiError;
use crate::limits::{AUTH_CACHE_CAPACITY, AUTH_LIMITER_CAPACITY};
use crate::lock::Recover;

#[derive(Debug, Default)]
pub(crate) struct AuthGate {
    /// Std mutexes: each is held for a map lookup, never across `.await` or bcrypt.
    failures: Mutex<HashMap<IpAddr, VecDeque<Instant>>>,
    /// `(Authorization header, password hash it was verified against)`, newest last.
    verified: Mutex<VecDeque<(String, String)>>,
}

impl AuthGate {
    pub(crate) async fn check(&self, auth: &AuthConfig, ip: IpAddr, headers: &HeaderMap) -> Result<(), ApiError> {
        let window = Duration::from_secs(auth.auth_rate_limit_window_secs);
        if let Some(retry_after_secs) = self.limited(ip, window, auth.auth_rate_limit_max) {
            return Err(ApiError::TooManyRequests { retry_after_secs });
        }
        let Some(header) = headers.get(http::header::AUTHORIZATION).and_then(|v| v.to_str().ok()) else {
            return Err(ApiError::Unauthorized("remote access needs Basic credentials".into()));
        };
        if auth.password_hash.is_empty() {
            return Err(ApiError::Unauthorized(
                "remote access has no password set: put a bcrypt hash (tuicd hash-password) in services.auth.password_hash"
                    .into(),
            ));
        }
        let key = (header.to_owned(), auth.password_hash.clone());
        if self.verified.locked().contains(&key) {
            return Ok(());
        }
        let ok = match decode_basic(header) {
            Some((user, password)) if auth.username.is_empty() || user == auth.username => {
                let hash = auth.password_hash.clone();
                tokio::task::spawn_blocking(move || bcrypt::verify(password, &hash).unwrap_or(false))
                    .await
                    .unwrap_or(false)
            }
            _ => false,
        };
        if ok {
            let mut verified = self.verified.locked();
            if verified.len() == AUTH_CACHE_CAPACITY {
                verified.pop_front();
            }
            verified.push_back(key);
            Ok(())
        } else {
            self.record_failure(ip, window);
            Err(ApiError::Unauthorized("wrong username or password".into()))
        }
    }

    /// Seconds until the oldest failure in the window expires, when the address is over the limit.
    fn limited(&self, ip: IpAddr, window: Duration, max: u32) -> Option<u64> {
        let mut failures = self.failures.locked();
        let entry = failures.get_mut(&ip)?;
        let now = Instant::now();
        while entry.front().is_some_and(|t| now.duration_since(*t) >= window) {
            entry.pop_front();
        }
        if entry.is_empty() {
            failures.remove(&ip);
            return None;
        }
        (entry.len() as u32 >= max).then(|| {
            let oldest = *entry.front().unwrap_or(&now);
            window.saturating_sub(now.duration_since(oldest)).as_secs().max(1)
        })
    }

    fn record_failure(&self, ip: IpAddr, window: Duration) {
        let mut failures = self.failures.locked();
        if failures.len() >= AUTH_LIMITER_CAPACITY && !failures.contains_key(&ip) {
            // Bounded: forget addresses whose failures have all expired, else the stalest one.
            let now = Instant::now();
            failures.retain(|_, times| times.back().is_some_and(|t| now.duration_since(*t) < window));
            if failures.len() >= AUTH_LIMITER_CAPACITY
                && let Some(stalest) = failures.iter().min_by_key(|(_, t)| t.back().copied()).map(|(ip, _)| *ip)
            {
                failures.remove(&stalest);
            }
        }
        failures.entry(ip).or_default().push_back(Instant::now());
    }
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
    fn the_limiter_opens_after_max_failures_in_the_window() {
        let gate = AuthGate::default();
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        let window = Duration::from_secs(300);
        for _ in 0..4 {
            gate.record_failure(ip, window);
        }
        assert_eq!(gate.limited(ip, window, 5), None);
        gate.record_failure(ip, window);
        assert!(gate.limited(ip, window, 5).is_some());
        assert_eq!(gate.limited("192.0.2.2".parse().unwrap(), window, 5), None);
    }
}

//! Token sets and the pure rules around them: expiry with a margin, the token endpoint's answer,
//! how the client authenticates there, and which credential a 401 recovery may use.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::limits::OAUTH_EXPIRY_MARGIN;

/// What the credential store keeps for one upstream. `expires_at` is Unix seconds; `None` means
/// no known expiry, which is never treated as expired.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct TokenSet {
    pub access_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// When it was issued (Unix seconds), so a token living less than twice the margin gets half
    /// its lifetime as margin instead of counting as expired from the start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issued_at: Option<u64>,
    /// The scope granted (space-separated): the token endpoint's `scope`, else what the
    /// authorization asked for. A scope step-up reads it to know what re-authorizing can add.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

impl std::fmt::Debug for TokenSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenSet")
            .field("refresh_token", &self.refresh_token.is_some())
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

impl TokenSet {
    /// Whether the access token expires within [`OAUTH_EXPIRY_MARGIN`] of `now` (Unix seconds),
    /// or within half its lifetime when that is shorter.
    pub(crate) fn expired_at(&self, now: u64) -> bool {
        let Some(at) = self.expires_at else { return false };
        let lifetime = self.issued_at.map(|issued| at.saturating_sub(issued));
        let margin = lifetime.map_or(OAUTH_EXPIRY_MARGIN.as_secs(), |l| (l / 2).min(OAUTH_EXPIRY_MARGIN.as_secs()));
        at <= now.saturating_add(margin)
    }

    /// The set a token response makes; a refresh answer without a new `refresh_token` keeps the
    /// one it was refreshed with (RFC 6749 §6).
    pub(crate) fn from_response(response: TokenResponse, now: u64, previous_refresh: Option<String>) -> Self {
        Self {
            access_token: response.access_token,
            refresh_token: response.refresh_token.or(previous_refresh),
            expires_at: response.expires_in.map(|secs| now.saturating_add(secs)),
            issued_at: Some(now),
            scope: response.scope.filter(|s| !s.trim().is_empty()),
        }
    }
}

/// A successful token endpoint answer (RFC 6749 §5.1).
#[derive(Debug, Deserialize)]
pub(crate) struct TokenResponse {
    pub access_token: String,
    #[serde(default)]
    pub token_type: Option<String>,
    #[serde(default)]
    pub refresh_token: Option<String>,
    #[serde(default)]
    pub expires_in: Option<u64>,
    /// The scope granted, when it differs from the one asked (RFC 6749 §5.1).
    #[serde(default)]
    pub scope: Option<String>,
}

impl TokenResponse {
    /// Refuses an answer that is not a bearer token: anything else would be presented wrongly.
    pub(crate) fn check(self) -> Result<Self, String> {
        if self.access_token.is_empty() {
            return Err("the token endpoint answered an empty access_token".into());
        }
        match self.token_type.as_deref() {
            None => Ok(self),
            Some(t) if t.eq_ignore_ascii_case("bearer") => Ok(self),
            Some(other) => Err(format!("the token endpoint answered token_type {other:?}, not Bearer")),
        }
    }
}

/// How the client authenticates at the token endpoint (RFC 6749 §2.3, RFC 8414's method names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClientAuth {
    /// A public client: `client_id` in the form only.
    None,
    /// `client_id` and `client_secret` in the form.
    Post,
    /// HTTP Basic with the url-encoded id and secret.
    Basic,
}

/// The method for a client with or without a secret, given what the server lists. An absent
/// list means `client_secret_basic`, RFC 8414 §2's default.
pub(crate) fn client_auth(has_secret: bool, supported: Option<&[String]>) -> ClientAuth {
    if !has_secret {
        return ClientAuth::None;
    }
    let Some(methods) = supported else {
        return ClientAuth::Basic;
    };
    if methods.iter().any(|m| m == "client_secret_basic") {
        ClientAuth::Basic
    } else if methods.iter().any(|m| m == "client_secret_post") {
        ClientAuth::Post
    } else {
        ClientAuth::Basic
    }
}

/// What a 401 recovery does, given the credential the server rejected and what storage holds.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Recovery {
    /// Storage holds another valid generation than the rejected one: retry with it as it is.
    UseStored,
    /// The rejected (or an expired) generation is the stored one: refresh it.
    Refresh,
    /// Nothing stored, or nothing to refresh with: the upstream needs a new authorization.
    Reauthorize,
}

/// The rejected-generation rule of the upstream spec: only the still-rejected or an invalid
/// generation reaches the token endpoint.
pub(crate) fn recovery(rejected: Option<&str>, stored: Option<&TokenSet>, now: u64) -> Recovery {
    let Some(stored) = stored else {
        return Recovery::Reauthorize;
    };
    let same = rejected == Some(stored.access_token.as_str());
    if !same && !stored.expired_at(now) {
        return Recovery::UseStored;
    }
    if stored.refresh_token.is_some() { Recovery::Refresh } else { Recovery::Reauthorize }
}

pub(crate) fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO).as_secs()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(access: &str, refresh: Option<&str>, expires_at: Option<u64>) -> TokenSet {
        TokenSet {
            access_token: access.into(),
            refresh_token: refresh.map(Into::into),
            expires_at,
            issued_at: None,
            scope: None,
        }
    }

    #[test]
    fn expiry_has_a_sixty_second_margin_and_none_never_expires() {
        assert!(!set("a", None, None).expired_at(u64::MAX));
        assert!(!set("a", None, Some(1_000)).expired_at(939));
        assert!(set("a", None, Some(1_000)).expired_at(940));
        assert!(set("a", None, Some(1_000)).expired_at(2_000));
        // A 10 s token gets a 5 s margin, not 60 s: it is usable for its first half.
        let short = TokenSet { issued_at: Some(1_000), ..set("a", None, Some(1_010)) };
        assert!(!short.expired_at(1_004));
        assert!(short.expired_at(1_005));
    }

    #[test]
    fn a_refresh_answer_without_a_refresh_token_keeps_the_old_one() {
        let response = TokenResponse {
            access_token: "new".into(),
            token_type: Some("bearer".into()),
            refresh_token: None,
            expires_in: Some(30),
            scope: None,
        };
        let s = TokenSet::from_response(response.check().unwrap(), 100, Some("r1".into()));
        assert_eq!(s, TokenSet { issued_at: Some(100), ..set("new", Some("r1"), Some(130)) });
    }

    #[test]
    fn a_token_that_is_not_bearer_is_refused_by_name() {
        let response = TokenResponse {
            access_token: "x".into(),
            token_type: Some("DPoP".into()),
            refresh_token: None,
            expires_in: None,
            scope: None,
        };
        assert!(response.check().unwrap_err().contains("DPoP"));
    }

    #[test]
    fn client_auth_follows_the_secret_and_the_server_list() {
        let post = vec!["client_secret_post".to_owned(), "none".to_owned()];
        let both = vec!["client_secret_post".to_owned(), "client_secret_basic".to_owned()];
        assert_eq!(client_auth(false, Some(&both)), ClientAuth::None);
        assert_eq!(client_auth(true, None), ClientAuth::Basic);
        assert_eq!(client_auth(true, Some(&post)), ClientAuth::Post);
        assert_eq!(client_auth(true, Some(&both)), ClientAuth::Basic);
    }

    #[test]
    fn recovery_refreshes_only_the_rejected_generation() {
        let stored = set("gen2", Some("r"), Some(10_000));
        // Another flow stored gen2 while gen1 was in flight: retry gen2, do not refresh.
        assert_eq!(recovery(Some("gen1"), Some(&stored), 100), Recovery::UseStored);
        assert_eq!(recovery(Some("gen2"), Some(&stored), 100), Recovery::Refresh);
        // An expired stored generation is refreshed even when it was not the one rejected.
        assert_eq!(recovery(Some("gen1"), Some(&stored), 20_000), Recovery::Refresh);
        assert_eq!(recovery(Some("gen2"), Some(&set("gen2", None, None)), 100), Recovery::Reauthorize);
        assert_eq!(recovery(None, None, 100), Recovery::Reauthorize);
        assert_eq!(recovery(None, Some(&stored), 100), Recovery::UseStored);
    }
}

//! PKCE (RFC 7636, S256 only) and the opaque `state` nonce of one authorization flow. Pure apart
//! from the randomness, which comes from the OS through `uuid` v4.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

/// A code verifier and its S256 challenge.
#[derive(Clone)]
pub(crate) struct Pkce {
    pub verifier: String,
    pub challenge: String,
}

impl std::fmt::Debug for Pkce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pkce").field("challenge", &self.challenge).finish_non_exhaustive()
    }
}

impl Pkce {
    /// A fresh verifier: 32 random bytes as base64url (43 characters, inside RFC 7636's 43..=128).
    pub(crate) fn generate() -> Self {
        let verifier = URL_SAFE_NO_PAD.encode(random_bytes());
        Self { challenge: challenge_s256(&verifier), verifier }
    }
}

/// `BASE64URL(SHA256(ASCII(verifier)))`, RFC 7636 §4.2.
pub(crate) fn challenge_s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// An unguessable `state`: 32 random bytes as base64url.
pub(crate) fn state_nonce() -> String {
    URL_SAFE_NO_PAD.encode(random_bytes())
}

/// 32 bytes from two v4 UUIDs. Each carries 122 random bits from the OS generator; the six fixed
/// version and variant bits per UUID leave 244 random bits, well above the 128 RFC 7636 asks.
fn random_bytes() -> [u8; 32] {
    let mut out = [0u8; 32];
    out[..16].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    out[16..].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rfc_7636_appendix_b_vector_holds() {
        assert_eq!(
            challenge_s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn a_verifier_is_43_unreserved_characters_and_never_repeats() {
        let a = Pkce::generate();
        let b = Pkce::generate();
        assert_eq!(a.verifier.len(), 43);
        assert!(a.verifier.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'));
        assert_ne!(a.verifier, b.verifier);
        assert_eq!(a.challenge, challenge_s256(&a.verifier));
        assert_ne!(state_nonce(), state_nonce());
    }
}

//! `services.tls` read into a rustls server config (ring provider): the TCP listener serves HTTPS
//! with it, and a config update is refused when it cannot be built.

use std::sync::Arc;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use super::TlsConfig;

/// Reads the certificate chain and key, or `None` when TLS is off. Errors name the file and what
/// is wrong with it.
pub(crate) fn server_config(tls: &TlsConfig) -> Result<Option<rustls::ServerConfig>, String> {
    let Some((cert_path, key_path)) = tls.paths() else { return Ok(None) };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert_path)
        .map_err(|e| format!("services.tls.cert_path: cannot read {cert_path}: {e}"))?
        .collect::<Result<_, _>>()
        .map_err(|e| format!("services.tls.cert_path: {cert_path} is not a PEM certificate chain: {e}"))?;
    if certs.is_empty() {
        return Err(format!("services.tls.cert_path: {cert_path} holds no certificate"));
    }
    private_key_file(key_path)?;
    let key = PrivateKeyDer::from_pem_file(key_path)
        .map_err(|e| format!("services.tls.key_path: {key_path} is not a PEM private key: {e}"))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("services.tls: {e}"))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("services.tls: the certificate and key do not form a usable pair: {e}"))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Some(config))
}

/// A private key other users can read is no longer private: refused, with the fix.
fn private_key_file(key_path: &str) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(key_path)
        .map_err(|e| format!("services.tls.key_path: cannot read {key_path}: {e}"))?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        return Err(format!(
            "services.tls.key_path: {key_path} is open to group or others (mode {:o}); make it private: chmod 600 {key_path}",
            mode & 0o777
        ));
    }
    Ok(())
}

/// Validates `services.tls` without keeping the server config (used before saving a config).
pub(crate) fn check(tls: &TlsConfig) -> Result<(), String> {
    server_config(tls).map(|_| ())
}

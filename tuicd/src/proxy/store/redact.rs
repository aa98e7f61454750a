//! Secrets in `mcp-upstreams.json` as clients see them: bearer tokens, OAuth client secrets and
//! every stdio `env` value (any may hold a key, and telling which do is guesswork) are replaced by
//! [`REDACTED`]. A save that sends the marker back means "keep the stored value", so a client can
//! save what it loaded without ever holding the secrets.

use serde_json::Value;

use crate::proxy::config::{Transport, UpstreamAuth, UpstreamServer, UpstreamsFile};

/// Stands for a stored secret in answers, and in a save for "unchanged".
pub(crate) const REDACTED: &str = "<redacted>";

/// A save put the marker where nothing is stored to keep.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "upstream id {id:?}: {field} is the redaction marker \"<redacted>\" but no stored secret stands behind it; send the value itself"
)]
pub(crate) struct MissingSecret {
    pub id: String,
    pub field: String,
}

/// The file as answers carry it: every secret replaced by [`REDACTED`].
pub(crate) fn redacted(file: &UpstreamsFile) -> Value {
    let mut file = file.clone();
    for server in &mut file.servers {
        for slot in secrets(server) {
            *slot.value = REDACTED.to_owned();
        }
    }
    serde_json::to_value(&file).unwrap_or_else(|_| serde_json::json!({"servers": []}))
}

/// Puts the stored secret (from `stored`, the same server as it is on disk) back wherever `server`
/// carries the marker. `stored` is `None` for a server that is new.
pub(crate) fn restore(server: &mut UpstreamServer, stored: Option<&UpstreamServer>) -> Result<(), MissingSecret> {
    let mut stored = stored.cloned();
    let mut kept: Vec<Secret<'_>> = stored.as_mut().map(secrets).unwrap_or_default();
    let id = server.id.clone();
    for slot in secrets(server) {
        if slot.value != REDACTED {
            continue;
        }
        match kept.iter_mut().find(|k| k.field == slot.field) {
            Some(stored) => *slot.value = stored.value.clone(),
            None => return Err(MissingSecret { id, field: slot.field }),
        }
    }
    Ok(())
}

/// One secret of a server: where it is (`auth.token`, `transport.env.KEY`) and its value.
struct Secret<'a> {
    field: String,
    value: &'a mut String,
}

fn secrets(server: &mut UpstreamServer) -> Vec<Secret<'_>> {
    let mut out = Vec::new();
    match &mut server.auth {
        Some(UpstreamAuth::Bearer { token }) => out.push(Secret { field: "auth.token".into(), value: token }),
        Some(UpstreamAuth::Oauth2 { client_secret: Some(secret), .. }) => {
            out.push(Secret { field: "auth.client_secret".into(), value: secret });
        }
        _ => {}
    }
    if let Transport::Stdio { env, .. } = &mut server.transport {
        for (key, value) in env.iter_mut() {
            out.push(Secret { field: format!("transport.env.{key}"), value });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn file(value: Value) -> UpstreamsFile {
        serde_json::from_value(value).expect("a valid file")
    }

    fn secretive() -> UpstreamsFile {
        file(json!({"servers": [
            {"id": "a", "name": "remote", "transport": {"type": "http", "url": "https://example.com/mcp"},
             "auth": {"type": "bearer", "token": "tok-1"}},
            {"id": "b", "name": "oauth", "transport": {"type": "http", "url": "https://example.com/o"},
             "auth": {"type": "oauth2", "client_id": "cid", "client_secret": "shh", "scopes": ["read"]}},
            {"id": "c", "name": "local", "transport": {"type": "stdio", "command": "srv", "env": {"API_KEY": "k", "MODE": "x"}}},
        ]}))
    }

    #[test]
    fn every_secret_is_replaced_and_nothing_else() {
        let shown = redacted(&secretive());
        let text = shown.to_string();
        for secret in ["tok-1", "shh", "\"k\"", "\"x\""] {
            assert!(!text.contains(secret), "{secret} leaked: {text}");
        }
        assert_eq!(shown["servers"][0]["auth"]["token"], REDACTED);
        assert_eq!(shown["servers"][1]["auth"]["client_secret"], REDACTED);
        assert_eq!(shown["servers"][1]["auth"]["client_id"], "cid");
        assert_eq!(shown["servers"][2]["transport"]["env"]["API_KEY"], REDACTED);
        assert_eq!(shown["servers"][2]["transport"]["command"], "srv");
    }

    #[test]
    fn the_marker_sent_back_restores_the_stored_secret() {
        let stored = secretive();
        let mut echoed = file(redacted(&stored));
        for (server, on_disk) in echoed.servers.iter_mut().zip(&stored.servers) {
            restore(server, Some(on_disk)).expect("every marker has a stored secret");
        }
        assert_eq!(echoed, stored);
    }

    #[test]
    fn a_new_value_replaces_and_a_marker_without_a_secret_is_refused() {
        let stored = secretive();
        let mut changed = file(redacted(&stored));
        let Transport::Stdio { env, .. } = &mut changed.servers[2].transport else { panic!("stdio") };
        env.insert("MODE".into(), "y".into());
        env.insert("NEW".into(), REDACTED.into());
        let error = restore(&mut changed.servers[2], Some(&stored.servers[2])).expect_err("NEW has no stored value");
        assert_eq!(error.field, "transport.env.NEW");
        assert!(error.to_string().contains("\"c\""), "{error}");

        let mut fresh = file(redacted(&stored)).servers.remove(0);
        assert_eq!(restore(&mut fresh, None).expect_err("a new server has no secrets").field, "auth.token");
    }
}

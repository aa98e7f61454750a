//! Secrets in `mcp-upstreams.json` as clients see them: bearer tokens, OAuth client secrets,
//! every stdio `env` value (any may hold a key, and telling which do is guesswork), and an HTTP
//! URL's password and query values (`https://user:pw@host/mcp?api_key=...`) are replaced by
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
        if let Transport::Http { url } = &mut server.transport {
            *url = redact_url(url);
        }
    }
    serde_json::to_value(&file).unwrap_or_else(|_| serde_json::json!({"servers": []}))
}

/// Puts the stored secret (from `stored`, the same server as it is on disk) back wherever `server`
/// carries the marker. `stored` is `None` for a server that is new.
pub(crate) fn restore(server: &mut UpstreamServer, stored: Option<&UpstreamServer>) -> Result<(), MissingSecret> {
    if let Transport::Http { url } = &mut server.transport
        && url.contains(REDACTED)
    {
        // The URL as it was shown: the stored one, whose secrets the marker stands for.
        match stored.map(|s| &s.transport) {
            Some(Transport::Http { url: on_disk }) if redact_url(on_disk) == *url => url.clone_from(on_disk),
            _ => return Err(MissingSecret { id: server.id.clone(), field: "transport.url".into() }),
        }
    }
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

/// `url` with the password of its user info and the value of every query parameter replaced by
/// [`REDACTED`] (the whole URL when it carries neither: unchanged).
pub(crate) fn redact_url(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{user}:{REDACTED}@{host}"),
            None => format!("{userinfo}@{host}"),
        },
        None => authority.to_owned(),
    };
    let (before_fragment, fragment) = tail.split_once('#').map_or((tail, None), |(t, f)| (t, Some(f)));
    let tail = match before_fragment.split_once('?') {
        Some((path, query)) => {
            let hidden: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((key, _)) => format!("{key}={REDACTED}"),
                    None if pair.is_empty() => String::new(),
                    None => REDACTED.to_owned(),
                })
                .collect();
            format!("{path}?{}", hidden.join("&"))
        }
        None => before_fragment.to_owned(),
    };
    let fragment = fragment.map(|f| format!("#{f}")).unwrap_or_default();
    if scheme.is_empty() {
        format!("{authority}{tail}{fragment}")
    } else {
        format!("{scheme}://{authority}{tail}{fragment}")
    }
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
    fn a_url_shows_its_user_host_path_and_keys_never_its_password_or_query_values() {
        assert_eq!(redact_url("https://example.com/mcp"), "https://example.com/mcp");
        assert_eq!(
            redact_url("https://me:s3cret@example.com:8443/mcp?api_key=abc&mode=x#frag"),
            "https://me:<redacted>@example.com:8443/mcp?api_key=<redacted>&mode=<redacted>#frag"
        );
        assert_eq!(redact_url("http://token@host/x?flag"), "http://token@host/x?<redacted>");
        let stored = file(json!({"servers": [{"id": "u", "name": "u",
            "transport": {"type": "http", "url": "https://me:pw@example.com/mcp?key=k1"}}]}));
        let shown = redacted(&stored).to_string();
        assert!(!shown.contains("pw@") && !shown.contains("k1"), "{shown}");
        let mut echoed = file(redacted(&stored));
        restore(&mut echoed.servers[0], Some(&stored.servers[0])).unwrap();
        assert_eq!(echoed, stored, "the URL shown comes back as the stored one");
        let mut moved = file(redacted(&stored));
        let Transport::Http { url } = &mut moved.servers[0].transport else { panic!("http") };
        *url = url.replace("example.com", "elsewhere.example");
        let error = restore(&mut moved.servers[0], Some(&stored.servers[0])).expect_err("another host");
        assert_eq!(error.field, "transport.url");
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

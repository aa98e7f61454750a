//! `mcp-upstreams.json`: the upstream MCP servers tuicd proxies, and the rules a server entry
//! must meet. Pure: reading, locking and saving the file live in `store`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The file's content: `{"servers": [...]}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpstreamsFile {
    #[serde(default)]
    pub servers: Vec<UpstreamServer>,
}

/// One upstream server. `id` is stable across renames (saves are merged by it); `name` prefixes
/// its tools as `{name}__{tool}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpstreamServer {
    pub id: String,
    pub name: String,
    pub transport: Transport,
    #[serde(default = "enabled_default")]
    pub enabled: bool,
    #[serde(default = "timeout_default")]
    pub timeout_secs: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_filter: Option<ToolFilter>,
    /// The upstream's own tool name -> the name listed after `{name}__` instead of it (a shorter
    /// or clearer one: clients refuse long tool names).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tool_aliases: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<UpstreamAuth>,
}

fn enabled_default() -> bool {
    true
}

fn timeout_default() -> u64 {
    crate::limits::UPSTREAM_DEFAULT_TIMEOUT.as_secs()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub(crate) enum Transport {
    /// Streamable HTTP at `url`.
    Http { url: String },
    /// A child process speaking newline-delimited JSON-RPC on stdin/stdout. `command`, `args` and
    /// `cwd` have `~` expanded; `env` is added to the allowlisted part of the daemon's environment.
    Stdio {
        command: String,
        #[serde(default)]
        args: Vec<String>,
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        env: BTreeMap<String, String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
    },
}

/// Which of an upstream's tools are visible: `allow` lists the only ones, `deny` the hidden ones.
/// A pattern is an exact tool name or a prefix ending in `*`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolFilter {
    pub mode: FilterMode,
    #[serde(default)]
    pub patterns: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum FilterMode {
    Allow,
    Deny,
}

impl ToolFilter {
    /// Whether the upstream's own tool name (without the `{name}__` prefix) is visible.
    pub(crate) fn admits(&self, tool: &str) -> bool {
        let matched = self.patterns.iter().any(|p| match p.strip_suffix('*') {
            Some(prefix) => tool.starts_with(prefix),
            None => tool == p,
        });
        match self.mode {
            FilterMode::Allow => matched,
            FilterMode::Deny => !matched,
        }
    }
}

/// How tuicd authenticates to an HTTP upstream. Secrets here are redacted in every answer; OAuth
/// tokens are never written here (they live in the credential store).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub(crate) enum UpstreamAuth {
    /// A static bearer token.
    #[serde(alias = "Bearer")]
    Bearer { token: String },
    /// OAuth 2.1 with PKCE. An empty `client_id` registers one dynamically (RFC 7591) where the
    /// authorization server offers it; missing endpoints are discovered (RFC 9728, RFC 8414).
    #[serde(alias = "OAuth2")]
    Oauth2 {
        #[serde(default)]
        client_id: String,
        /// For a pre-registered confidential client.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client_secret: Option<String>,
        #[serde(default)]
        scopes: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        authorization_endpoint: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        token_endpoint: Option<String>,
    },
}

/// Why a server entry (or the file) is refused. The names are the reference implementation's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ConfigError {
    #[error("EmptyName: upstream {id:?} has an empty name")]
    EmptyName { id: String },
    #[error(
        "InvalidName: upstream name {name:?} must be lowercase letters, digits, '-' or '_' (at most {max} characters, no \"__\")",
        max = crate::limits::UPSTREAM_NAME_MAX
    )]
    InvalidName { name: String },
    #[error("DuplicateName: two upstreams are named {name:?}")]
    DuplicateName { name: String },
    #[error("DuplicateId: two upstreams have the id {id:?}")]
    DuplicateId { id: String },
    #[error("EmptyId: upstream {name:?} has an empty id")]
    EmptyId { name: String },
    #[error("EmptyUrl: upstream {name:?} has an empty url")]
    EmptyUrl { name: String },
    #[error("InvalidUrlScheme: upstream {name:?} url {url:?} must start with http:// or https://")]
    InvalidUrlScheme { name: String, url: String },
    #[error("SelfReferentialUrl: upstream {name:?} url {url:?} points at tuicd's own /mcp")]
    SelfReferentialUrl { name: String, url: String },
    #[error("EmptyCommand: upstream {name:?} has an empty command")]
    EmptyCommand { name: String },
    #[error("TooMany: {count} upstreams, at most {max}", max = crate::limits::UPSTREAM_MAX)]
    TooMany { count: usize },
    #[error(
        "InvalidAlias: upstream {name:?} tool_aliases {tool:?}: {alias:?} must be 1 to {max} characters of A-Z a-z 0-9 _ . -",
        max = crate::limits::UPSTREAM_ALIAS_MAX
    )]
    InvalidAlias { name: String, tool: String, alias: String },
    #[error(
        "UnsupportedPattern: upstream {name:?} tool_filter pattern {pattern:?}: a pattern is an exact tool name or a prefix ending in '*' (no other '*', '?', '[' or ']')"
    )]
    UnsupportedPattern { name: String, pattern: String },
    #[error("DuplicateAlias: upstream {name:?} tool_aliases gives {alias:?} to both {first:?} and {second:?}")]
    DuplicateAlias { name: String, alias: String, first: String, second: String },
}

/// Whether `name` may prefix tool names: `[a-z0-9_-]+`, bounded, and without `__`, so a reader
/// sees where the upstream's name ends in `{name}__{tool}` (calls are routed by the listed pair,
/// not by the name).
pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= crate::limits::UPSTREAM_NAME_MAX
        && !name.contains("__")
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

impl UpstreamsFile {
    /// Checks every entry and the set; the first problem found is the error. `own_port` is the
    /// daemon's TCP port, if it listens on one, to refuse an upstream that is tuicd itself.
    pub(crate) fn validate(&self, own_port: Option<u16>) -> Result<(), ConfigError> {
        if self.servers.len() > crate::limits::UPSTREAM_MAX {
            return Err(ConfigError::TooMany { count: self.servers.len() });
        }
        let mut names = std::collections::HashSet::new();
        let mut ids = std::collections::HashSet::new();
        for server in &self.servers {
            server.validate(own_port)?;
            if !ids.insert(server.id.as_str()) {
                return Err(ConfigError::DuplicateId { id: server.id.clone() });
            }
            if !names.insert(server.name.as_str()) {
                return Err(ConfigError::DuplicateName { name: server.name.clone() });
            }
        }
        Ok(())
    }

    pub(crate) fn by_id(&self, id: &str) -> Option<&UpstreamServer> {
        self.servers.iter().find(|s| s.id == id)
    }
}

impl UpstreamServer {
    pub(crate) fn validate(&self, own_port: Option<u16>) -> Result<(), ConfigError> {
        if self.id.trim().is_empty() {
            return Err(ConfigError::EmptyId { name: self.name.clone() });
        }
        if self.name.is_empty() {
            return Err(ConfigError::EmptyName { id: self.id.clone() });
        }
        if !valid_name(&self.name) {
            return Err(ConfigError::InvalidName { name: self.name.clone() });
        }
        let patterns = self.tool_filter.iter().flat_map(|f| &f.patterns);
        for pattern in patterns {
            let body = pattern.strip_suffix('*').unwrap_or(pattern);
            if (body.is_empty() && pattern != "*") || body.contains(['*', '?', '[', ']']) {
                return Err(ConfigError::UnsupportedPattern { name: self.name.clone(), pattern: pattern.clone() });
            }
        }
        let mut aliased: BTreeMap<&str, &str> = BTreeMap::new();
        for (tool, alias) in &self.tool_aliases {
            let fits = (1..=crate::limits::UPSTREAM_ALIAS_MAX).contains(&alias.len())
                && alias.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
            if !fits {
                return Err(ConfigError::InvalidAlias {
                    name: self.name.clone(),
                    tool: tool.clone(),
                    alias: alias.clone(),
                });
            }
            if let Some(first) = aliased.insert(alias, tool) {
                return Err(ConfigError::DuplicateAlias {
                    name: self.name.clone(),
                    alias: alias.clone(),
                    first: first.to_owned(),
                    second: tool.clone(),
                });
            }
        }
        match &self.transport {
            Transport::Http { url } => {
                let name = self.name.clone();
                if url.trim().is_empty() {
                    return Err(ConfigError::EmptyUrl { name });
                }
                let Some(rest) = url.strip_prefix("http://").or_else(|| url.strip_prefix("https://")) else {
                    return Err(ConfigError::InvalidUrlScheme { name, url: url.clone() });
                };
                if let Some(port) = own_port
                    && points_at_self(rest, port)
                {
                    return Err(ConfigError::SelfReferentialUrl { name, url: url.clone() });
                }
            }
            Transport::Stdio { command, .. } => {
                if command.trim().is_empty() {
                    return Err(ConfigError::EmptyCommand { name: self.name.clone() });
                }
            }
        }
        Ok(())
    }
}

/// Whether `host[:port]/path` (a URL after its scheme) names a loopback host on `port`.
fn points_at_self(rest: &str, port: u16) -> bool {
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    let (host, url_port) = match authority.rsplit_once(':') {
        Some((host, p)) if !host.ends_with(']') || authority.starts_with('[') => (host, p.parse::<u16>().ok()),
        _ => (authority, None),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
    let loopback = host == "localhost" || host == "::1" || host.starts_with("127.");
    loopback && url_port == Some(port)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(value: serde_json::Value) -> UpstreamsFile {
        serde_json::from_value(value).expect("valid upstreams file")
    }

    #[test]
    fn defaults_and_both_transports_parse() {
        let file = parse(json!({"servers": [
            {"id": "a", "name": "everything", "transport": {"type": "stdio", "command": "npx", "args": ["x"]}},
            {"id": "b", "name": "remote", "transport": {"type": "http", "url": "https://example.com/mcp"},
             "auth": {"type": "bearer", "token": "t"}, "tool_filter": {"mode": "deny", "patterns": ["danger*"]}},
        ]}));
        assert!(file.servers[0].enabled);
        assert_eq!(file.servers[0].timeout_secs, 30);
        assert_eq!(file.validate(None), Ok(()));
        let again: UpstreamsFile =
            serde_json::from_str(&serde_json::to_string(&file).expect("prints")).expect("parses");
        assert_eq!(again, file);
    }

    #[test]
    fn the_reference_auth_spellings_are_accepted() {
        let auth: UpstreamAuth =
            serde_json::from_value(json!({"type": "OAuth2", "client_id": "c", "scopes": ["s"]})).expect("OAuth2 alias");
        assert!(matches!(auth, UpstreamAuth::Oauth2 { ref client_id, .. } if client_id == "c"));
    }

    #[test]
    fn names_must_prefix_tools_unambiguously() {
        for good in ["a", "my-server", "fs_2"] {
            assert!(valid_name(good), "{good}");
        }
        for bad in ["", "Caps", "a__b", "sp ace", "dot.ted", &"x".repeat(65)] {
            assert!(!valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn every_refusal_names_its_rule() {
        let stdio = |id: &str, name: &str, command: &str| json!({"id": id, "name": name, "transport": {"type": "stdio", "command": command}});
        let http = |name: &str, url: &str| json!({"id": name, "name": name, "transport": {"type": "http", "url": url}});
        let with_filter = |patterns: serde_json::Value| {
            let mut server = stdio("a", "n", "x");
            server["tool_filter"] = json!({"mode": "deny", "patterns": patterns});
            server
        };
        let with_aliases = |aliases: serde_json::Value| {
            let mut server = stdio("a", "n", "x");
            server["tool_aliases"] = aliases;
            server
        };
        let cases = [
            (json!({"servers": [stdio("a", "", "x")]}), "EmptyName"),
            (json!({"servers": [stdio("a", "A", "x")]}), "InvalidName"),
            (json!({"servers": [stdio("a", "n", "x"), stdio("b", "n", "y")]}), "DuplicateName"),
            (json!({"servers": [stdio("a", "n", "x"), stdio("a", "m", "y")]}), "DuplicateId"),
            (json!({"servers": [stdio("a", "n", " ")]}), "EmptyCommand"),
            (json!({"servers": [http("h", "")]}), "EmptyUrl"),
            (json!({"servers": [http("h", "ftp://x")]}), "InvalidUrlScheme"),
            (json!({"servers": [http("h", "http://127.0.0.1:7777/mcp")]}), "SelfReferentialUrl"),
            (json!({"servers": [http("h", "http://localhost:7777")]}), "SelfReferentialUrl"),
            (json!({"servers": [with_filter(json!(["e*o"]))]}), "UnsupportedPattern"),
            (json!({"servers": [with_filter(json!(["ech?"]))]}), "UnsupportedPattern"),
            (json!({"servers": [with_filter(json!([""]))]}), "UnsupportedPattern"),
            (json!({"servers": [with_aliases(json!({"t": "has space"}))]}), "InvalidAlias"),
            (json!({"servers": [with_aliases(json!({"t": ""}))]}), "InvalidAlias"),
            (json!({"servers": [with_aliases(json!({"a": "same", "b": "same"}))]}), "DuplicateAlias"),
        ];
        for (file, rule) in cases {
            let error = parse(file.clone()).validate(Some(7777)).expect_err(rule).to_string();
            assert!(error.starts_with(rule), "{file}: {error}");
        }
        assert_eq!(parse(json!({"servers": [http("h", "http://127.0.0.1:7778/mcp")]})).validate(Some(7777)), Ok(()));
    }

    #[test]
    fn unknown_fields_are_refused_by_name() {
        let error = serde_json::from_value::<UpstreamsFile>(json!({"servers": [
            {"id": "a", "name": "n", "transport": {"type": "stdio", "command": "x"}, "enabeld": false}
        ]}))
        .expect_err("a typo is refused")
        .to_string();
        assert!(error.contains("enabeld"), "{error}");
    }

    #[test]
    fn filters_allow_or_deny_by_name_or_prefix() {
        let allow = ToolFilter { mode: FilterMode::Allow, patterns: vec!["echo".into(), "get_*".into()] };
        assert!(allow.admits("echo") && allow.admits("get_env") && !allow.admits("add"));
        let deny = ToolFilter { mode: FilterMode::Deny, patterns: vec!["write*".into()] };
        assert!(deny.admits("read_file") && !deny.admits("write_file"));
    }
}

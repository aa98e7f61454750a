//! Typed configuration with the seed's defaults. Unknown keys are refused everywhere, so a typo
//! never silently does nothing.

use serde::{Deserialize, Serialize};

/// Native tools hidden until the user opts in: `config` can rewrite this file and `debug`
/// exposes internals.
pub(crate) const DEFAULT_DISABLED_NATIVE_TOOLS: [&str; 2] = ["config", "debug"];
/// Every native tool's name: what `disabled_native_tools` may name. The MCP registry is the truth
/// (a test there holds this list to it); the config layer cannot name the MCP layer above it.
pub(crate) const NATIVE_TOOL_NAMES: [&str; 22] = [
    "session",
    "agent",
    "task",
    "progress",
    "repo",
    "ui",
    "plugin_dev_guide",
    "config",
    "debug",
    "ai_terminal_read_screen",
    "ai_terminal_send_input",
    "ai_terminal_send_key",
    "ai_terminal_wait_for",
    "ai_terminal_get_state",
    "ai_terminal_get_context",
    "ai_terminal_drive_agent",
    "ai_terminal_run_command",
    "ai_terminal_read_file",
    "ai_terminal_write_file",
    "ai_terminal_edit_file",
    "ai_terminal_list_files",
    "ai_terminal_search_files",
];
/// The agent CLIs the headless agent slot knows how to run non-interactively (tuicd/src/ai/).
pub(crate) const HEADLESS_AGENTS: [&str; 3] = ["claude", "codex", "gemini"];
pub(crate) const DEFAULT_TCP_PORT: u16 = 9876;
pub(crate) const DEFAULT_MAX_SESSIONS: usize = 50;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct AppConfig {
    /// Mounts `/mcp`; the rest of the API is served regardless.
    pub mcp_server_enabled: bool,
    /// Legacy field kept for compatibility; the TCP port lives in `services.server.port`.
    pub mcp_port: u16,
    pub disabled_native_tools: Vec<String>,
    /// Three meta tools instead of the full list.
    pub collapse_tools: bool,
    pub ai_terminal_mcp_enabled: bool,
    /// `ai_terminal_run_command` may open TCP connections (its Landlock sandbox refuses them by
    /// default, on kernels with Landlock ABI 4+).
    pub ai_terminal_allow_network: bool,
    /// Where the kernel has no Landlock, `ai_terminal_run_command` runs unsandboxed (each command
    /// still confirmed by a person, who is told) instead of being refused.
    pub ai_terminal_unsandboxed: bool,
    pub disabled_mcp_agents: Vec<String>,
    /// Global switch for the `progress` tool and journal.
    pub progress_tracking: bool,
    pub standby_timeout_minutes: u32,
    /// Most live PTY sessions at once (`/stats` reports it as `max`).
    pub max_sessions: usize,
    /// How a session several clients draw picks its size (tmux's `window-size`); a session's
    /// `window_size` at create overrides it.
    pub window_size: proto::session::WindowSize,
    /// The ACP agent `POST /acp/connections` launches (a path, or a name on PATH), read at each
    /// launch; empty: none configured.
    pub ego_executable: String,
    /// Its arguments (`["--experimental-acp"]` for Gemini CLI).
    pub ego_args: Vec<String>,
    /// The agent CLI the AI routes (`/ai/review/pr`, `/repo/changelog`, `/ai/improvements/scan`)
    /// run headless: `claude`, `codex` or `gemini` (a name on PATH), or a path whose file name
    /// is one of them; the name picks the flags.
    pub headless_agent: String,
    pub services: ServicesConfig,
}

impl Default for AppConfig {
    fn default() -> Self {
        Self {
            mcp_server_enabled: true,
            mcp_port: 3845,
            disabled_native_tools: DEFAULT_DISABLED_NATIVE_TOOLS.map(String::from).to_vec(),
            collapse_tools: false,
            ai_terminal_mcp_enabled: false,
            ai_terminal_allow_network: false,
            ai_terminal_unsandboxed: false,
            disabled_mcp_agents: Vec::new(),
            progress_tracking: true,
            standby_timeout_minutes: 5,
            max_sessions: DEFAULT_MAX_SESSIONS,
            window_size: proto::session::WindowSize::Latest,
            ego_executable: String::new(),
            ego_args: Vec::new(),
            headless_agent: HEADLESS_AGENTS[0].to_owned(),
            services: ServicesConfig::default(),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct ServicesConfig {
    pub server: ServerConfig,
    pub auth: AuthConfig,
    pub tls: TlsConfig,
}

/// The opt-in TCP listener ("remote access").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct ServerConfig {
    pub enabled: bool,
    pub port: u16,
    /// Loopback by default: reaching it from another host is a deliberate choice
    /// (`0.0.0.0` or a LAN address), not an accident of enabling remote access.
    pub bind_address: String,
    pub ipv6_enabled: bool,
    /// Browser origins (`scheme://host[:port]`) besides the daemon's own that may call the API.
    pub allowed_origins: Vec<String>,
    /// Host names the TCP listener answers to besides IP addresses and `localhost`.
    pub allowed_hosts: Vec<String>,
    /// Plain HTTP (no `services.tls`) on a non-loopback `bind_address` sends the password in clear
    /// text; remote access refuses to start so unless this says it is meant (a trusted LAN, a VPN).
    pub allow_insecure_remote: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            port: DEFAULT_TCP_PORT,
            bind_address: "127.0.0.1".into(),
            ipv6_enabled: false,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            allow_insecure_remote: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct AuthConfig {
    pub username: String,
    /// bcrypt hash; never sent back (responses carry `password_hash_exists`).
    pub password_hash: String,
    pub session_token_duration_secs: u64,
    pub auth_rate_limit_max: u32,
    pub auth_rate_limit_window_secs: u64,
}

impl Default for AuthConfig {
    fn default() -> Self {
        Self {
            username: String::new(),
            password_hash: String::new(),
            session_token_duration_secs: 86_400,
            auth_rate_limit_max: 5,
            auth_rate_limit_window_secs: 300,
        }
    }
}

/// HTTPS for the TCP listener: both paths set means TLS is on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct TlsConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cert_path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_path: Option<String>,
}

impl TlsConfig {
    pub(crate) fn paths(&self) -> Option<(&str, &str)> {
        match (self.cert_path.as_deref(), self.key_path.as_deref()) {
            (Some(c), Some(k)) if !c.is_empty() && !k.is_empty() => Some((c, k)),
            _ => None,
        }
    }
}

impl AppConfig {
    /// Checks the rules serde cannot express. The message names the key.
    pub(crate) fn validate(&self) -> Result<(), String> {
        let tls = &self.services.tls;
        let half_set = tls.cert_path.as_deref().is_some_and(|p| !p.is_empty())
            != tls.key_path.as_deref().is_some_and(|p| !p.is_empty());
        if half_set {
            return Err("services.tls needs both cert_path and key_path, or neither".into());
        }
        if self.services.server.bind_address.parse::<std::net::IpAddr>().is_err() {
            return Err(format!(
                "services.server.bind_address: '{}' is not an IP address",
                self.services.server.bind_address
            ));
        }
        let hash = &self.services.auth.password_hash;
        if !hash.is_empty() && !hash.starts_with("$2") {
            return Err("services.auth.password_hash must be a bcrypt hash (see POST /auth/hash-password)".into());
        }
        super::origins::validate(&self.services.server)?;
        if headless_agent_kind(&self.headless_agent).is_none() {
            return Err(format!(
                "headless_agent: '{}' is not a headless agent CLI; use {} (a name on PATH, or a path ending in one)",
                self.headless_agent,
                HEADLESS_AGENTS.join(", ")
            ));
        }
        if self.max_sessions == 0 {
            return Err("max_sessions must be at least 1".into());
        }
        if let Some(unknown) = self.disabled_native_tools.iter().find(|t| !NATIVE_TOOL_NAMES.contains(&t.as_str())) {
            let upstream = match unknown.contains("__") {
                true => "; an upstream's tools are hidden by its tool_filter in mcp-upstreams.json",
                false => "",
            };
            return Err(format!(
                "disabled_native_tools: '{unknown}' is not a native tool (native tools: {}){upstream}",
                NATIVE_TOOL_NAMES.join(", ")
            ));
        }
        Ok(())
    }
}

/// Which of [`HEADLESS_AGENTS`] the `headless_agent` setting names: the value itself, or the file
/// name of the path it is.
pub(crate) fn headless_agent_kind(value: &str) -> Option<&'static str> {
    let name = std::path::Path::new(value.trim()).file_name()?.to_str()?;
    HEADLESS_AGENTS.into_iter().find(|known| *known == name)
}

//! The name Claude Code's MCP configuration gives tuicd's server, so a spawned Claude Code can be
//! told to accept our channel pushes (`--dangerously-load-development-channels server:<name>`).
//! Our server is the `mcpServers` entry that runs `tuic-bridge`; the project's `.mcp.json` in the
//! agent's working directory wins, then `~/.claude.json` (its entry for that directory, then its
//! top level), the order in which Claude Code scopes servers.

use std::path::Path;

use serde_json::Value;

/// The server name, or `None` when no readable config names a `tuic-bridge` server.
pub fn claude_server_name(cwd: &Path, home: Option<&Path>) -> Option<String> {
    if let Some(name) = read_json(&cwd.join(".mcp.json")).and_then(|project| ours(project.get("mcpServers")?)) {
        return Some(name);
    }
    let user = read_json(&home?.join(".claude.json"))?;
    let for_cwd = user.get("projects").and_then(|p| p.get(cwd.display().to_string())).and_then(|p| p.get("mcpServers"));
    for_cwd.and_then(ours).or_else(|| ours(user.get("mcpServers")?))
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

fn ours(servers: &Value) -> Option<String> {
    servers.as_object()?.iter().find(|(_, server)| runs_bridge(server)).map(|(name, _)| name.clone())
}

fn runs_bridge(server: &Value) -> bool {
    let is_bridge =
        |v: &Value| v.as_str().is_some_and(|s| Path::new(s).file_name().is_some_and(|f| f == "tuic-bridge"));
    server.get("command").is_some_and(is_bridge)
        || server.get("args").and_then(Value::as_array).is_some_and(|args| args.iter().any(is_bridge))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_project_config_wins_then_the_users_entry_for_the_directory_then_its_top_level() {
        let dir = tempfile::tempdir().unwrap();
        let (cwd, home) = (dir.path().join("repo"), dir.path().join("home"));
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        assert_eq!(claude_server_name(&cwd, Some(&home)), None, "no config");
        let user = serde_json::json!({
            "mcpServers": {"fs": {"command": "npx"}, "tuic-global": {"command": "/usr/bin/tuic-bridge"}},
            "projects": {cwd.display().to_string(): {"mcpServers": {"tuic-here": {"command": "env", "args": ["tuic-bridge"]}}}},
        });
        std::fs::write(home.join(".claude.json"), user.to_string()).unwrap();
        assert_eq!(claude_server_name(&cwd, Some(&home)).as_deref(), Some("tuic-here"));
        assert_eq!(claude_server_name(&home, Some(&home)).as_deref(), Some("tuic-global"));
        std::fs::write(cwd.join(".mcp.json"), r#"{"mcpServers":{"tuicd":{"command":"tuic-bridge"}}}"#).unwrap();
        assert_eq!(claude_server_name(&cwd, Some(&home)).as_deref(), Some("tuicd"));
        std::fs::write(cwd.join(".mcp.json"), "not json").unwrap();
        assert_eq!(
            claude_server_name(&cwd, Some(&home)).as_deref(),
            Some("tuic-here"),
            "an unreadable file is skipped"
        );
    }
}

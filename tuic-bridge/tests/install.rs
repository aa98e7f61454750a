//! `tuic-bridge install`: the real binary run against a throwaway HOME (and CODEX_HOME), checking
//! the files a person's agent CLIs would read.
// The helpers below are test code too: a failed setup step should stop the test where it happened.
#![allow(clippy::unwrap_used)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

/// A fresh home directory for one test, removed when the test ends.
struct Home {
    dir: PathBuf,
}

impl Home {
    fn new(test: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("tuic-bridge-install-{test}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Home { dir }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.dir.join(relative)
    }

    fn install(&self, args: &[&str]) -> Output {
        self.install_with(args, None)
    }

    fn install_with(&self, args: &[&str], codex_home: Option<&Path>) -> Output {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tuic-bridge"));
        command.arg("install").args(args).env("HOME", &self.dir).env_remove("CODEX_HOME");
        if let Some(codex_home) = codex_home {
            command.env("CODEX_HOME", codex_home);
        }
        command.output().unwrap()
    }

    fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.path(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

fn bridge_path() -> String {
    fs::canonicalize(env!("CARGO_BIN_EXE_tuic-bridge")).unwrap().to_str().unwrap().to_owned()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn succeeded(output: &Output) -> String {
    assert!(output.status.success(), "stdout: {}\nstderr: {}", stdout(output), stderr(output));
    stdout(output)
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

const CLIENT_FILES: [(&str, &str); 4] = [
    ("claude", ".claude.json"),
    ("codex", ".codex/config.toml"),
    ("gemini", ".gemini/settings.json"),
    ("cursor", ".cursor/mcp.json"),
];

#[test]
fn a_fresh_home_gets_each_clients_entry_in_its_own_file() {
    let home = Home::new("fresh");
    let bridge = bridge_path();
    for (client, file) in CLIENT_FILES {
        let out = succeeded(&home.install(&["--client", client]));
        assert!(out.contains("+ "), "{client}: the diff shows the new lines\n{out}");
        assert!(out.contains(&format!("wrote {}", home.path(file).display())), "{out}");
        assert_eq!(mode(&home.path(file)), 0o600, "{client}: a new config is private");
    }
    assert_eq!(
        read_json(&home.path(".claude.json")),
        json!({"mcpServers": {"tuic": {"type": "stdio", "command": bridge, "args": [], "env": {}}}})
    );
    assert_eq!(
        fs::read_to_string(home.path(".codex/config.toml")).unwrap(),
        format!("[mcp_servers.tuic]\ncommand = \"{bridge}\"\nargs = []\n")
    );
    for file in [".gemini/settings.json", ".cursor/mcp.json"] {
        assert_eq!(read_json(&home.path(file)), json!({"mcpServers": {"tuic": {"command": bridge, "args": []}}}));
    }
    for dir in [".codex", ".gemini", ".cursor"] {
        assert_eq!(mode(&home.path(dir)), 0o700, "{dir} is created private");
    }
    let text = fs::read_to_string(home.path(".gemini/settings.json")).unwrap();
    assert!(text.starts_with("{\n  \"mcpServers\": {\n    \"tuic\": {\n      \"command\""), "2-space JSON:\n{text}");
}

#[test]
fn a_second_run_says_already_installed_and_leaves_the_file_alone() {
    let home = Home::new("again");
    for (client, file) in CLIENT_FILES {
        succeeded(&home.install(&["--client", client]));
        let path = home.path(file);
        let (bytes, modified) = (fs::read(&path).unwrap(), fs::metadata(&path).unwrap().modified().unwrap());
        let out = succeeded(&home.install(&["--client", client]));
        assert_eq!(out.trim(), format!("already installed: {}", path.display()), "{client}");
        assert_eq!(fs::read(&path).unwrap(), bytes, "{client}: bytes unchanged");
        assert_eq!(fs::metadata(&path).unwrap().modified().unwrap(), modified, "{client}: not rewritten");
    }
}

#[test]
fn codex_keeps_comments_order_other_servers_and_top_level_keys() {
    let home = Home::new("codex-keeps");
    let original = "# my codex setup\nmodel = \"gpt-5\"  # the default model\n\n\
                    [mcp_servers.x]\n# x speaks stdio\ncommand = \"x-server\"\nargs = [\"--quiet\"]\n\n\
                    [profiles.fast]\nmodel = \"gpt-5-mini\"\n";
    let path = home.write(".codex/config.toml", original);
    let out = succeeded(&home.install(&["--client", "codex"]));
    let bridge = bridge_path();
    let expected = original.replace(
        "[profiles.fast]",
        &format!("[mcp_servers.tuic]\ncommand = \"{bridge}\"\nargs = []\n\n[profiles.fast]"),
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), expected);
    assert!(out.contains(&format!("+ command = \"{bridge}\"\n")), "{out}");
    assert!(out.contains("  args = [\"--quiet\"]\n"), "context lines are shown unmarked\n{out}");
    assert!(!out.contains("- "), "nothing is removed\n{out}");
}

#[test]
fn codex_config_goes_to_codex_home_when_it_is_set() {
    let home = Home::new("codex-home");
    let codex_home = home.path("elsewhere/codex");
    succeeded(&home.install_with(&["--client", "codex"], Some(&codex_home)));
    let text = fs::read_to_string(codex_home.join("config.toml")).unwrap();
    assert!(text.contains(&format!("command = \"{}\"", bridge_path())), "{text}");
    assert!(!home.path(".codex").exists(), "~/.codex is not touched when CODEX_HOME is set");
}

#[test]
fn claude_keeps_every_other_key_and_its_order() {
    let home = Home::new("claude-keeps");
    let path = home.write(
        ".claude.json",
        "{\n  \"numStartups\": 12,\n  \"projects\": {\n    \"/src/app\": {\n      \"allowedTools\": [],\n      \
         \"mcpServers\": {}\n    }\n  },\n  \"autoUpdates\": false,\n  \"userID\": \"abc\"\n}\n",
    );
    fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
    succeeded(&home.install(&["--client", "claude"]));
    let bridge = bridge_path();
    let expected = format!(
        "{{\n  \"numStartups\": 12,\n  \"projects\": {{\n    \"/src/app\": {{\n      \"allowedTools\": [],\n      \
         \"mcpServers\": {{}}\n    }}\n  }},\n  \"autoUpdates\": false,\n  \"userID\": \"abc\",\n  \"mcpServers\": {{\n    \
         \"tuic\": {{\n      \"type\": \"stdio\",\n      \"command\": \"{bridge}\",\n      \"args\": [],\n      \"env\": {{}}\n    \
         }}\n  }}\n}}\n"
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), expected);
    assert_eq!(mode(&path), 0o640, "an existing file keeps its permission bits");
}

#[test]
fn a_stale_entry_is_replaced_where_it_was_and_the_change_is_said() {
    let home = Home::new("stale");
    let path = home.write(
        ".cursor/mcp.json",
        "{\n  \"mcpServers\": {\n    \"tuic\": {\n      \"command\": \"/old/place/tuic-bridge\",\n      \"args\": []\n    },\n    \
         \"other\": {\n      \"command\": \"o\"\n    }\n  }\n}\n",
    );
    let out = succeeded(&home.install(&["--client", "cursor"]));
    let bridge = bridge_path();
    assert!(out.contains("replacing the existing, different MCP server \"tuic\""), "{out}");
    assert!(out.contains("-       \"command\": \"/old/place/tuic-bridge\",\n"), "{out}");
    assert!(out.contains(&format!("+       \"command\": \"{bridge}\",\n")), "{out}");
    let servers = read_json(&path)["mcpServers"].clone();
    assert_eq!(servers, json!({"tuic": {"command": bridge, "args": []}, "other": {"command": "o"}}));
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.find("\"tuic\"").unwrap() < text.find("\"other\"").unwrap(), "the entry keeps its place\n{text}");
}

#[test]
fn a_stale_codex_table_is_refilled_under_its_own_comment() {
    let home = Home::new("stale-codex");
    let path = home.write(
        ".codex/config.toml",
        "# tuic, installed by hand\n[mcp_servers.tuic]\ncommand = \"/old/tuic-bridge\"\nargs = [\"--instance\", \"dev\"]\n\n\
         [mcp_servers.tuic.env]\nA = \"1\"\n",
    );
    let out = succeeded(&home.install(&["--client", "codex", "--command", "/opt/tuic/tuic-bridge"]));
    assert!(out.contains("replacing"), "{out}");
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "# tuic, installed by hand\n[mcp_servers.tuic]\ncommand = \"/opt/tuic/tuic-bridge\"\nargs = []\n"
    );
}

#[test]
fn name_and_command_flags_set_the_entry() {
    let home = Home::new("flags");
    succeeded(&home.install(&["--client", "gemini", "--name", "tuic-dev", "--command", "/opt/tb"]));
    assert_eq!(
        read_json(&home.path(".gemini/settings.json")),
        json!({"mcpServers": {"tuic-dev": {"command": "/opt/tb", "args": []}}})
    );
}

#[test]
fn dry_run_shows_the_diff_and_writes_nothing() {
    let home = Home::new("dry-run");
    let out = succeeded(&home.install(&["--client", "codex", "--dry-run"]));
    assert!(out.contains("+ [mcp_servers.tuic]\n"), "{out}");
    assert!(out.contains("dry run: nothing written"), "{out}");
    assert!(!home.path(".codex").exists(), "no directory, no file");

    let original = "{\n  \"theme\": \"dark\"\n}\n";
    let path = home.write(".gemini/settings.json", original);
    let out = succeeded(&home.install(&["--client", "gemini", "--dry-run"]));
    assert!(out.contains("+   \"mcpServers\": {\n"), "{out}");
    assert_eq!(fs::read_to_string(&path).unwrap(), original);
    assert_eq!(fs::read_dir(home.path(".gemini")).unwrap().count(), 1, "no temp file left behind");
}

#[test]
fn a_file_that_does_not_parse_is_refused_and_left_untouched() {
    let home = Home::new("broken");
    let cases = [
        ("claude", ".claude.json", "{\n  \"projects\": {,}\n}\n", "line 2 column"),
        ("cursor", ".cursor/mcp.json", "{\"mcpServers\": [\"tuic\"]}\n", "\"mcpServers\" is an array, not an object"),
        ("gemini", ".gemini/settings.json", "[1, 2]\n", "the top level is an array"),
        ("codex", ".codex/config.toml", "model = \"a\"\nmcp_servers = \n", "line 2, column"),
        ("codex", ".codex/config.toml", "mcp_servers = \"none\"\n", "mcp_servers is a TOML string, not a table"),
    ];
    for (client, file, text, says) in cases {
        let path = home.write(file, text);
        let output = home.install(&["--client", client]);
        assert!(!output.status.success(), "{client}: {text}");
        let err = stderr(&output);
        assert!(err.contains(&path.display().to_string()), "{client}: the error names the file\n{err}");
        assert!(err.contains(says), "{client}: expected {says:?} in\n{err}");
        assert!(err.contains("left as it was"), "{err}");
        assert_eq!(fs::read_to_string(&path).unwrap(), text, "{client}: the file is untouched");
    }
}

#[test]
fn a_symlinked_config_is_written_through_to_its_target() {
    let home = Home::new("symlink");
    let target = home.write("dotfiles/claude.json", "{}\n");
    std::os::unix::fs::symlink(&target, home.path(".claude.json")).unwrap();
    succeeded(&home.install(&["--client", "claude"]));
    assert!(fs::symlink_metadata(home.path(".claude.json")).unwrap().file_type().is_symlink());
    assert_eq!(read_json(&target)["mcpServers"]["tuic"]["command"], json!(bridge_path()));
}

#[test]
fn an_unknown_client_is_a_clear_error() {
    let home = Home::new("unknown");
    let output = home.install(&["--client", "vim"]);
    assert!(!output.status.success());
    let err = stderr(&output);
    assert!(err.contains("invalid value 'vim' for '--client <CLIENT>'"), "{err}");
    assert!(err.contains("possible values: claude, codex, gemini, cursor"), "{err}");
    assert_eq!(fs::read_dir(&home.dir).unwrap().count(), 0, "nothing written");
}

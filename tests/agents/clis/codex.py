"""Codex: launch recipe for the real-agent test bed (see bed.py).

`node_modules/.bin/codex` is a small Node script that runs the native (Rust, musl) binary in
@openai/codex-linux-x64: with Node >= 22.15 (process.execve) it replaces itself, with the Node 20
here it stays as the parent (`node` -> `codex`, same process group). The binary reads
$CODEX_HOME/config.toml (CODEX_HOME is inside the throwaway HOME). A custom model provider
(`scripted`) points it at the scripted model server over the Responses API; with
requires_openai_auth = false there is no login screen, the project is trusted in config (no trust
screen), and the [notice] keys silence the warnings it would otherwise show once.

approval_policy = "on-request": Codex asks before a command the model wants run outside the
sandbox; sandbox_mode = "workspace-write" (bundled bubblewrap; its "could not find bubblewrap"
startup warning shows as "⚠ 1 warning" in the footer). Note: "untrusted" is rejected by 0.171 ("no longer supported"),
so the permission dialog comes from the model: model_server/responses.py sends exec_command with
sandbox_permissions = "require_escalated", which on-request always asks about.

Without daemon_auto_start = false / --no-daemon, Codex copies itself to
$CODEX_HOME/packages/app-server-daemon and starts `codex app-server --managed-daemon` (+ a
pid-update-loop) as setsid daemons that outlive the TUI. The GPT-6 models use "code mode" (one JS
`exec` tool), so MODEL is gpt-5.5. Left at its default on purpose: disable_paste_burst (true makes
text + CR with no gap submit; the default needs a gap or a bracketed paste, see the facts file).
ACP (`acp_prepare`): @zed-industries/codex-acp (ACP_VERSION, a native binary with its own Codex
core, not the pinned CLI above) reads the same $CODEX_HOME/config.toml; it takes no
--no-daemon / --strict-config. It asks before the scripted model's escalated exec_command
(session/request_permission with approved / approved-execpolicy-amendment / abort).

MCP: [mcp_servers.tuic] command = "tuic-bridge" (args = []) in config.toml, or
-c 'mcp_servers.tuic.command="tuic-bridge"'; its tools are deferred behind `tool_search`
(namespace mcp__tuic).
"""

from __future__ import annotations

import json
from pathlib import Path

from clis import home_env

VERSION = "0.171.0"
PROTOCOL = "responses"

HERE = Path(__file__).resolve().parent
BINARY = HERE.parent / "node_modules" / ".bin" / "codex"
ACP_VERSION = "0.16.0"
ACP_BINARY = HERE.parent / "node_modules" / ".bin" / "codex-acp"

API_KEY = "sk-tuic-fake-key-for-scripted-model-server"
# A model of the bundled catalogue (an unknown one gets a "metadata not found" warning) whose tools
# are plain top-level functions (exec_command ...); the GPT-6 family uses "code mode" instead (one
# JavaScript `exec` tool in an additional_tools input item). Its upgrade offer to gpt-6-sol (a
# "Meet GPT-6 Sol" screen) is marked as seen in [notice.model_migrations].
MODEL = "gpt-5.5"
MODEL_UPGRADE = "gpt-6-sol"


def _toml_str(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def config_toml(cwd: Path, base_url: str) -> str:
    return f"""# Written by tests/agents/clis/codex.py for the scripted model server.
model = {_toml_str(MODEL)}
model_provider = "scripted"
approval_policy = "on-request"
sandbox_mode = "workspace-write"
check_for_update_on_startup = false
show_raw_agent_reasoning = false
hide_agent_reasoning = true
model_reasoning_effort = "low"

[model_providers.scripted]
name = "scripted"
base_url = {_toml_str(base_url + "/v1")}
wire_api = "responses"
env_key = "TUIC_SCRIPTED_API_KEY"
requires_openai_auth = false
supports_websockets = false
request_max_retries = 0
stream_max_retries = 0

[projects.{_toml_str(str(cwd))}]
trust_level = "trusted"

[notice]
hide_full_access_warning = true
hide_world_writable_warning = true
hide_rate_limit_model_nudge = true
hide_gpt5_1_migration_prompt = true

[notice.model_migrations]
{_toml_str(MODEL)} = {_toml_str(MODEL_UPGRADE)}

[analytics]
enabled = false

[feedback]
enabled = false

[history]
persistence = "none"

[features]
# No shared background app-server daemon: it would outlive the CLI, detached from the PTY.
daemon_auto_start = false
in_app_updates = false
apps = false
plugins = false
remote_plugin = false
tool_suggest = false
image_generation = false
computer_use = false
browser_use = false

[tui]
show_tooltips = false
show_server_version_notice = false

[tui.effects]
starfield = false
welcome = false
"""


def prepare(home: Path, cwd: Path, base_url: str) -> dict:
    home = Path(home)
    cwd = Path(cwd).resolve()
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(config_toml(cwd, base_url))
    env = {
        **home_env(home),
        "CODEX_HOME": str(codex_home),
        "TUIC_SCRIPTED_API_KEY": API_KEY,
        "OPENAI_API_KEY": API_KEY,
        "OPENAI_BASE_URL": base_url + "/v1",
        "CODEX_DISABLE_UPDATE_CHECK": "1",
    }
    return {"argv": [str(BINARY), "--no-daemon", "--strict-config"], "env": env}


def acp_prepare(home: Path, cwd: Path, base_url: str) -> dict:
    """The ACP agent (codex-acp) on stdio, with the TUI's config.toml: {"argv", "env"}."""
    spec = prepare(home, cwd, base_url)
    return {"argv": [str(ACP_BINARY)], "env": spec["env"]}

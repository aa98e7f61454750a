"""Claude Code: launch recipe for the real-agent test bed (see bed.py).

ACP (`acp_prepare`): @zed-industries/claude-code-acp (ACP_VERSION) runs the Claude Agent SDK,
which spawns the SDK's own bundled Claude Code (cli.js, not the pinned native binary above) with
the same HOME, ~/.claude.json and ANTHROPIC_BASE_URL. The adapter passes
--allow-dangerously-skip-permissions, which that Claude Code refuses as root unless IS_SANDBOX=1
("--dangerously-skip-permissions cannot be used with root/sudo privileges"): set here, so the
recipe starts under root (CI containers) and as a user alike. The session still starts in the
`default` permission mode, so a shell command asks (session/request_permission).

Claude Code is a native (Bun-compiled) binary that reads ~/.claude.json (global state: onboarding,
theme, per-project trust, approved API keys) and ~/.claude/settings.json (settings). With HOME
inside the throwaway dir both live there. It talks Anthropic Messages to ANTHROPIC_BASE_URL.
"""

from __future__ import annotations

import json
from pathlib import Path

from clis import home_env

VERSION = "2.1.197"
PROTOCOL = "anthropic"

HERE = Path(__file__).resolve().parent
BINARY = HERE.parent / "node_modules" / ".bin" / "claude"
ACP_VERSION = "0.16.2"
ACP_BINARY = HERE.parent / "node_modules" / ".bin" / "claude-code-acp"

# A fake key in the real key's shape; Claude Code asks to approve a custom key once, keyed by its
# last 20 characters (customApiKeyResponses.approved).
API_KEY = "sk-ant-api03-tuic-fake-key-for-scripted-model-server-000000000000AA"


def prepare(home: Path, cwd: Path, base_url: str) -> dict:
    home = Path(home)
    cwd = Path(cwd).resolve()
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    project = {
        "allowedTools": [],
        "hasTrustDialogAccepted": True,
        "hasCompletedProjectOnboarding": True,
        "projectOnboardingSeenCount": 1,
        "hasClaudeMdExternalIncludesApproved": False,
        "hasClaudeMdExternalIncludesWarningShown": True,
    }
    state = {
        "numStartups": 1,
        "installMethod": "npm",
        "autoUpdates": False,
        "hasCompletedOnboarding": True,
        "lastOnboardingVersion": VERSION,
        "lastReleaseNotesSeen": VERSION,
        "theme": "dark",
        "hasSeenTasksHint": True,
        "hasIdeOnboardingBeenShown": {"vscode": True},
        "bypassPermissionsModeAccepted": False,
        "opusProMigrationComplete": True,
        "sonnet45MigrationComplete": True,
        "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
        "projects": {str(cwd): project},
    }
    (home / ".claude.json").write_text(json.dumps(state, indent=2))
    settings_path = home / ".claude" / "settings.json"
    settings = json.loads(settings_path.read_text()) if settings_path.exists() else {}
    settings.setdefault("autoUpdates", False)
    settings.setdefault("theme", "dark")
    settings_path.write_text(json.dumps(settings, indent=2))
    env = {
        **home_env(home),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": API_KEY,
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_BUG_COMMAND": "1",
        "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
        "CLAUDE_CODE_IDE_SKIP_AUTO_INSTALL": "1",
    }
    return {"argv": [str(BINARY)], "env": env}


def acp_prepare(home: Path, cwd: Path, base_url: str) -> dict:
    """The ACP agent (claude-code-acp) on stdio, configured like the TUI: {"argv", "env"}."""
    spec = prepare(home, cwd, base_url)
    spec["env"]["IS_SANDBOX"] = "1"
    return {"argv": [str(ACP_BINARY)], "env": spec["env"]}

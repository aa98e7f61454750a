"""Gemini CLI against the scripted model server (Gemini API wire protocol, model_server/gemini.py).

The base URL comes from GOOGLE_GEMINI_BASE_URL (the @google/genai client appends /v1beta/models/...),
the key from GEMINI_API_KEY; ~/.gemini/settings.json picks the API-key auth type, turns folder trust
off, sets the theme, and turns off update checks, usage statistics, telemetry, banner and tips, so
the CLI starts straight into its composer.

ACP (`acp_prepare`): the same CLI and settings with `--acp` (0.61 also takes the deprecated
`--experimental-acp`).
"""

from __future__ import annotations

import json
from pathlib import Path

from clis import home_env

VERSION = "0.61.0"
ACP_VERSION = VERSION
PROTOCOL = "gemini"

HERE = Path(__file__).resolve().parent
BIN = HERE.parent / "node_modules" / ".bin" / "gemini"

# The model named on every main request (a concrete one: "auto" would add a classifier call per turn).
MODEL = "gemini-2.5-pro"


def settings() -> dict:
    return {
        "security": {
            "auth": {"selectedType": "gemini-api-key"},
            "folderTrust": {"enabled": False},
        },
        "general": {
            "enableAutoUpdate": False,
            "enableAutoUpdateNotification": False,
        },
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False, "logPrompts": False},
        "ide": {"enabled": False, "hasSeenNudge": True},
        "ui": {
            "theme": "Default",
            "autoThemeSwitching": False,
            "hideBanner": True,
            "hideTips": True,
            "showHomeDirectoryWarning": False,
            "showCompatibilityWarnings": False,
        },
        "model": {"name": MODEL},
    }


def prepare(home: Path, cwd: Path, base_url: str) -> dict:
    gemini_dir = home / ".gemini"
    gemini_dir.mkdir(parents=True, exist_ok=True)
    (gemini_dir / "settings.json").write_text(json.dumps(settings(), indent=2) + "\n")
    env = {
        **home_env(home),
        "GEMINI_API_KEY": "tuic-fake-key",
        "GOOGLE_GEMINI_BASE_URL": base_url,
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
        "NO_BROWSER": "true",
    }
    return {"argv": [str(BIN)], "env": env}


def acp_prepare(home: Path, cwd: Path, base_url: str) -> dict:
    """Gemini CLI in ACP mode on stdio, with the TUI's settings: {"argv", "env"}."""
    spec = prepare(home, cwd, base_url)
    return {"argv": [spec["argv"][0], "--acp"], "env": spec["env"]}

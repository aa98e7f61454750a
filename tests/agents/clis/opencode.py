"""opencode's launch recipe: a custom OpenAI-compatible provider pointing at the model server.

opencode reads $XDG_CONFIG_HOME/opencode/opencode.json; the provider `scripted` (npm
@ai-sdk/openai-compatible, bundled in the binary) has baseURL = the server's /v1 and one model,
`scripted/scripted`, which is the default. Autoupdate and share are off; bash asks permission.
The models.dev fetch, default plugins (which npm-install at start), LSP downloads and reading
~/.claude are switched off by env. opencode starts straight into its composer (full screen).
"""

from __future__ import annotations

import json
from pathlib import Path

from clis import home_env

VERSION = "1.18.33"
PROTOCOL = "chat"

HERE = Path(__file__).resolve().parent
BIN = HERE.parent / "node_modules" / ".bin" / "opencode"


def config(base_url: str) -> dict:
    return {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False,
        "share": "disabled",
        "model": "scripted/scripted",
        "small_model": "scripted/scripted",
        "enabled_providers": ["scripted"],
        "provider": {
            "scripted": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Scripted",
                "options": {"baseURL": base_url + "/v1", "apiKey": "sk-scripted-fake"},
                "models": {
                    "scripted": {
                        "name": "Scripted",
                        "tool_call": True,
                        "limit": {"context": 200000, "output": 8192},
                    }
                },
            }
        },
        "permission": {"bash": "ask", "edit": "ask", "webfetch": "ask"},
    }


def prepare(home: Path, cwd: Path, base_url: str) -> dict:
    homes = home_env(home)
    (home / ".config" / "opencode").mkdir(parents=True, exist_ok=True)
    (home / ".config" / "opencode" / "opencode.json").write_text(json.dumps(config(base_url), indent=2) + "\n")
    env = {
        **homes,
        "OPENAI_API_KEY": "sk-scripted-fake",
        "OPENAI_BASE_URL": base_url + "/v1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_SHARE": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_CLAUDE_CODE": "1",
        "OPENCODE_DISABLE_EXTERNAL_SKILLS": "1",
    }
    return {"argv": [str(BIN)], "env": env}

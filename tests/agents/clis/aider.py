"""Aider's launch recipe: the pip package (requirements.txt) in tests/agents/.venv, model
`openai/scripted` through litellm's OpenAI provider with --openai-api-base = the server's /v1.

Install once (about 2 1/4 min, 690 MB):
    python3 -m venv tests/agents/.venv && tests/agents/.venv/bin/pip install -r tests/agents/requirements.txt

Every first-run question is answered by flags: no update check, no release notes, analytics off
(no opt-in question), no .gitignore question, no model warnings (unknown context size), no URL
detection. --yes-always stays off: aider's own confirm prompts ("Add file to the chat?",
"Run shell command?", "Create new file?") are what the tests read. Aider has no tools; it edits
files from the markdown of its answers (model_server/chat.py marks its main requests).
Histories go into the throwaway home, not the repository. litellm's model-cost fetch is local.
"""

from __future__ import annotations

import json
from pathlib import Path

from clis import home_env

VERSION = "0.86.2"
PROTOCOL = "chat"

HERE = Path(__file__).resolve().parent
BIN = HERE.parent / ".venv" / "bin" / "aider"


def prepare(home: Path, cwd: Path, base_url: str) -> dict:
    homes = home_env(home)
    (home / ".aider").mkdir(parents=True, exist_ok=True)
    # The model's facts (aider would otherwise fetch litellm's price list from GitHub at start,
    # print the network error and call the model's context size unknown).
    info = {
        "openai/scripted": {
            "max_input_tokens": 200000,
            "max_output_tokens": 8192,
            "max_tokens": 8192,
            "input_cost_per_token": 0.0,
            "output_cost_per_token": 0.0,
            "litellm_provider": "openai",
            "mode": "chat",
        }
    }
    metadata = home / ".aider" / "model-metadata.json"
    metadata.write_text(json.dumps(info, indent=2) + "\n")
    caches = home / ".aider" / "caches"
    caches.mkdir(parents=True, exist_ok=True)
    (caches / "model_prices_and_context_window.json").write_text(json.dumps(info) + "\n")
    (caches / "openrouter_models.json").write_text(json.dumps({"data": []}) + "\n")
    # A git identity, so aider does not print "Update git name with: ..." at start.
    (home / ".gitconfig").write_text("[user]\n\tname = Scripted\n\temail = scripted@example.invalid\n")
    argv = [
        str(BIN),
        "--model", "openai/scripted",
        "--weak-model", "openai/scripted",
        "--openai-api-base", base_url + "/v1",
        "--openai-api-key", "sk-scripted-fake",
        "--no-check-update",
        "--no-show-release-notes",
        "--analytics-disable",
        "--no-auto-commits",
        "--no-dirty-commits",
        "--no-gitignore",
        "--no-show-model-warnings",
        "--no-check-model-accepts-settings",
        "--no-detect-urls",
        "--no-auto-lint",
        "--no-notifications",
        "--model-metadata-file", str(metadata),
        "--input-history-file", str(home / ".aider" / "input.history"),
        "--chat-history-file", str(home / ".aider" / "chat.history.md"),
    ]
    env = {
        **homes,
        "OPENAI_API_KEY": "sk-scripted-fake",
        "OPENAI_API_BASE": base_url + "/v1",
        "OPENAI_BASE_URL": base_url + "/v1",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "AIDER_CHECK_UPDATE": "false",
        "AIDER_ANALYTICS": "false",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    return {"argv": argv, "env": env}

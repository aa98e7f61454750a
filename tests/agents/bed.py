"""The real-agent test bed: how each real CLI is launched against the scripted model server.

    python3 tests/agents/bed.py launch CLI --base-url URL --home DIR --cwd DIR

prints `{"argv": [...], "env": {...}, "version": "..."}`: the command line and the environment
(HOME and XDG dirs pointing into DIR, the model server's URL, a fake API key) under which CLI
starts straight into its composer with every first-run screen (onboarding, theme, trust, API-key
approval, update notices) already answered in the config files `prepare` wrote into DIR. Nothing is
ever typed to get past a first-run screen. The Rust tests, the recorder and the benchmarks all
launch through here, so a CLI's launch recipe lives in exactly one file: `clis/<cli>.py`.

Each `clis/<cli>.py` module has:
    VERSION      the pinned version (package.json / the venv), named in fixture file names
    PROTOCOL     the model_server module it talks to
    def prepare(home: Path, cwd: Path, base_url: str) -> dict   # {"argv": [...], "env": {...}}
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CLIS = ["claude", "codex", "gemini", "opencode", "aider"]


def module(cli: str):
    if cli not in CLIS:
        raise SystemExit(f"bed.py: unknown CLI {cli!r}; known: {', '.join(CLIS)}")
    sys.path.insert(0, str(HERE))
    return importlib.import_module(f"clis.{cli}")


def launch(cli: str, base_url: str, home: Path, cwd: Path) -> dict:
    mod = module(cli)
    home.mkdir(parents=True, exist_ok=True)
    spec = mod.prepare(home, cwd, base_url.rstrip("/"))
    spec["version"] = mod.VERSION
    spec["protocol"] = mod.PROTOCOL
    return spec


def main() -> None:
    parser = argparse.ArgumentParser(description="launch recipes for the real agent CLIs")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("launch")
    p.add_argument("cli")
    p.add_argument("--base-url", required=True)
    p.add_argument("--home", required=True, type=Path)
    p.add_argument("--cwd", required=True, type=Path)
    args = parser.parse_args()
    print(json.dumps(launch(args.cli, args.base_url, args.home, args.cwd)))


if __name__ == "__main__":
    main()

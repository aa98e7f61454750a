"""The real-agent test bed: how each real CLI is launched against the scripted model server.

    python3 tests/agents/bed.py launch CLI --base-url URL --home DIR --cwd DIR

prints `{"argv": [...], "env": {...}, "version": "..."}`: the command line and the environment
(HOME and XDG dirs pointing into DIR, the model server's URL, a fake API key) under which CLI
starts straight into its composer with every first-run screen (onboarding, theme, trust, API-key
approval, update notices) already answered in the config files `prepare` wrote into DIR. Nothing is
ever typed to get past a first-run screen. The Rust tests, the recorder and the benchmarks all
launch through here, so a CLI's launch recipe lives in exactly one file: `clis/<cli>.py`.

    python3 tests/agents/bed.py launch-acp CLI --base-url URL --home DIR --cwd DIR

prints the same shape for the CLI's ACP agent (claude, codex, gemini): the command that speaks the
Agent Client Protocol on its stdin/stdout, with the same config files and environment (`version`
is the ACP agent's own). tests/acp/ launches through it; so should any other test of a real ACP agent.

Each `clis/<cli>.py` module has:
    VERSION      the pinned version (package.json / the venv), named in fixture file names
    PROTOCOL     the model_server module it talks to
    def prepare(home: Path, cwd: Path, base_url: str) -> dict   # {"argv": [...], "env": {...}}
and the ACP agents (ACP_CLIS) also:
    ACP_VERSION  the pinned version of the ACP agent
    def acp_prepare(home: Path, cwd: Path, base_url: str) -> dict   # the same shape
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CLIS = ["claude", "codex", "gemini", "opencode", "aider"]
ACP_CLIS = ["claude", "codex", "gemini"]


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


def launch_acp(cli: str, base_url: str, home: Path, cwd: Path) -> dict:
    if cli not in ACP_CLIS:
        raise SystemExit(f"bed.py: no ACP agent for {cli!r}; known: {', '.join(ACP_CLIS)}")
    mod = module(cli)
    home.mkdir(parents=True, exist_ok=True)
    spec = mod.acp_prepare(home, cwd, base_url.rstrip("/"))
    spec["version"] = mod.ACP_VERSION
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
    p = sub.add_parser("launch-acp")
    p.add_argument("cli")
    p.add_argument("--base-url", required=True)
    p.add_argument("--home", required=True, type=Path)
    p.add_argument("--cwd", required=True, type=Path)
    args = parser.parse_args()
    run = launch_acp if args.command == "launch-acp" else launch
    print(json.dumps(run(args.cli, args.base_url, args.home, args.cwd)))


if __name__ == "__main__":
    main()

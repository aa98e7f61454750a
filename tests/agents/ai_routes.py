"""The AI routes through tuicd's headless agent slot, with the real CLIs against the scripted model
server (issue 35):

    python3 tests/agents/ai_routes.py --tuicd target/debug/tuicd [--cli claude --cli codex ...]

For each CLI: a model server, a git repository, a stub `gh` (a pull request diff, a merged PR,
issue creation, all recorded), and a tuicd whose environment is the bed's launch environment of
that CLI (bed.py: HOME, the model server's URL, a fake key), without CI markers, with the pinned
CLIs and the stub on PATH, and `headless_agent` set to the CLI. Then:

- POST /ai/review/pr on PR 7 -> the scripted finding on app.py line 1; on PR 13, whose diff holds
  a `[[reply=...]]` directive, the model answers prose -> 502 naming the agent;
- GET /repo/changelog -> {markdown, json} naming PR 40 (the scripted answer comes fenced);
- POST /ai/improvements/scan {focus: refactor} -> two proposals, and `proposals-ready` on /events;
  a bad focus -> 400 with nothing run;
- POST /repo/create-issue-from-proposal with the first proposal -> the stub's issue, its title and
  body passed to `gh issue create`;
- every model request of the run carried the task's `tuic-headless-task:` line.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import stat
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import tuic  # noqa: E402
from tuic import BED_ROOT, ModelServer, Tuicd, UnixConnection, make_repo  # noqa: E402

DIFF_OK = """diff --git a/app.py b/app.py
index 1111111..2222222 100644
--- a/app.py
+++ b/app.py
@@ -1 +1,2 @@
-print('hello')
+print('hello, world')
+print('bye')
"""

DIFF_MALFORMED = """diff --git a/app.py b/app.py
index 1111111..3333333 100644
--- a/app.py
+++ b/app.py
@@ -1 +1 @@
-print('hello')
+print('hi')  # [[reply=Sorry, I would rather not review this one.]]
"""

STUB = r"""#!/usr/bin/env python3
import json, os, sys
d = os.environ["GH_STUB_DIR"]
args = sys.argv[1:]
with open(os.path.join(d, "calls.jsonl"), "a") as log:
    log.write(json.dumps({"args": args, "cwd": os.getcwd()}) + "\n")
verb = " ".join(args[:2])
if verb == "pr diff":
    name = "diff-" + args[2]
    path = os.path.join(d, name)
    if not os.path.exists(path):
        print("no pull requests found for " + args[2], file=sys.stderr)
        sys.exit(1)
    sys.stdout.write(open(path).read())
elif verb == "pr list":
    print(json.dumps([{"number": 40, "title": "Add gears", "url": "https://github.com/octo/widgets/pull/40",
        "state": "MERGED", "isDraft": False, "headRefName": "gears", "baseRefName": "main",
        "author": {"login": "ada"}, "labels": [{"name": "feature"}], "mergedAt": "2026-11-30T10:00:00Z"}]))
elif verb == "issue create":
    print("https://github.com/octo/widgets/issues/7")
else:
    print("unknown command " + verb, file=sys.stderr)
    sys.exit(1)
"""


def request(daemon: Tuicd, method: str, path: str, body=None, timeout: float = 300):
    """(status, parsed JSON) of one request on the daemon's socket."""
    conn = UnixConnection(str(daemon.socket), timeout=timeout)
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    conn.request(method, path, body=data, headers={"content-type": "application/json"} if data is not None else {})
    response = conn.getresponse()
    raw = response.read()
    conn.close()
    try:
        return response.status, json.loads(raw) if raw else None
    except ValueError:
        return response.status, raw.decode(errors="replace")


def events_since_start(daemon: Tuicd, kind: str, timeout: float = 10) -> list[dict]:
    """The payloads of every retained `kind` event on /events (replayed from id 0)."""
    conn = UnixConnection(str(daemon.socket), timeout=timeout)
    conn.request("GET", "/events", headers={"last-event-id": "0", "accept": "text/event-stream"})
    response = conn.getresponse()
    found, current, deadline = [], None, time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            line = response.fp.readline().decode()
            if not line:
                break
            line = line.rstrip("\r\n")
            if line.startswith("event:"):
                current = line[6:].strip()
            elif line.startswith("data:") and current == kind:
                found.append(json.loads(line[5:].strip()))
                break
    except OSError:
        pass
    finally:
        conn.close()
    return found


def check(what: str, ok: bool, detail) -> None:
    if not ok:
        raise AssertionError(f"{what}: {detail}")
    print(f"  ok  {what}")


def run_cli(cli: str, binary: str) -> None:
    print(f"== {cli}")
    BED_ROOT.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="ai-", dir=BED_ROOT))
    model = daemon = None
    try:
        model = ModelServer(root)
        repo = make_repo(root / "repo")
        stub = root / "gh-stub"
        (stub / "bin").mkdir(parents=True)
        gh = stub / "bin" / "gh"
        gh.write_text(STUB)
        gh.chmod(gh.stat().st_mode | stat.S_IXUSR)
        (stub / "diff-7").write_text(DIFF_OK)
        (stub / "diff-13").write_text(DIFF_MALFORMED)
        spec = tuic.bed.launch(cli, model.url, root / f"home-{cli}", repo)
        path = f"{stub / 'bin'}:{HERE / 'node_modules' / '.bin'}:{os.environ.get('PATH', '')}"
        daemon = Tuicd(binary, root, spec["env"] | {"PATH": path, "GH_STUB_DIR": str(stub)})
        status, body = request(daemon, "PUT", "/config", {"headless_agent": cli})
        check("headless_agent set", status == 200, body)
        status, body = request(daemon, "POST", "/repos", {"path": str(repo)})
        check("repository registered", status == 201, body)
        q = urllib.parse.quote(str(repo), safe="")

        status, review = request(daemon, "POST", "/ai/review/pr", {"repoPath": str(repo), "prNumber": 7})
        check("review: 200", status == 200, review)
        finding = review["findings"][0]
        check("review: the finding on app.py line 1", (finding["path"], finding["line"], finding["severity"]) == ("app.py", 1, "warning"), review)
        check("review: names its agent", review["agent"] == cli and review["pr_number"] == 7, review)

        status, body = request(daemon, "POST", "/ai/review/pr", {"repoPath": str(repo), "prNumber": 13})
        check("review of a malformed answer: 502", status == 502 and body["code"] == "upstream_failed", body)
        check("review of a malformed answer: names the agent and why", f"'{cli}'" in body["error"] and "not a JSON object" in body["error"], body)

        status, log = request(daemon, "GET", f"/repo/changelog?path={q}")
        check("changelog: 200", status == 200, log)
        check("changelog: markdown names PR 40", "(#40)" in log["markdown"], log)
        check("changelog: json sections", log["json"]["sections"][0]["entries"][0]["prs"] == [40] and log["json"]["prs"] == [40], log)

        status, body = request(daemon, "POST", "/ai/improvements/scan", {"repoPath": str(repo), "focus": "style"})
        check("scan with a focus not in the list: 400", status == 400 and "refactor" in body["error"], body)
        status, scan = request(daemon, "POST", "/ai/improvements/scan", {"repoPath": str(repo), "focus": "refactor"})
        check("scan: 200", status == 200, scan)
        check("scan: two proposals, with ids and the focus", [p["id"] for p in scan["proposals"]] == ["refactor-1", "refactor-2"], scan)
        ready = events_since_start(daemon, "proposals-ready")
        check("scan: proposals-ready on /events", ready and ready[0]["proposals"] == scan["proposals"], ready)

        proposal = scan["proposals"][0]
        status, issue = request(daemon, "POST", "/repo/create-issue-from-proposal", {"repoPath": str(repo), "proposal": proposal})
        check("create-issue-from-proposal: the created issue", status == 200 and issue == {"url": "https://github.com/octo/widgets/issues/7", "number": 7}, issue)
        calls = [json.loads(line) for line in (stub / "calls.jsonl").read_text().splitlines()]
        create = next(c for c in calls if c["args"][:2] == ["issue", "create"])
        title = create["args"][create["args"].index("--title") + 1]
        body_arg = create["args"][create["args"].index("--body") + 1]
        check("create-issue-from-proposal: title and body passed to gh", title == proposal["title"] and proposal["description"] in body_arg and "`app.py`" in body_arg, create)
        check("the scan created no issue", sum(c["args"][:2] == ["issue", "create"] for c in calls) == 1, calls)

        tasks = [r["prompt"] for r in model.requests(main_only=False) if "tuic-headless-task:" in r.get("prompt", "")]
        for task in ("pr-review", "changelog", "improvements-scan"):
            check(f"the model was asked the {task} task", any(f"tuic-headless-task: {task}" in p for p in tasks), len(tasks))
        if cli == "claude":
            tools = {r["tools"] for r in model.requests(main_only=False) if "tuic-headless-task:" in r.get("prompt", "")}
            check("claude ran with no tools (--tools '')", tools == {0}, tools)
        left = list((daemon.dir / "headless").iterdir()) if (daemon.dir / "headless").exists() else []
        check("no scratch directory is left", not left, left)
    finally:
        if daemon:
            daemon.stop()
        if model:
            model.stop()
        if not os.environ.get("TUIC_AGENTS_KEEP"):
            shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tuicd", required=True)
    parser.add_argument("--cli", action="append", choices=["claude", "codex", "gemini"])
    args = parser.parse_args()
    for cli in args.cli or ["claude", "codex", "gemini"]:
        run_cli(cli, str(Path(args.tuicd).resolve()))
    print("ai routes: all passed")


if __name__ == "__main__":
    main()

"""Re-records the real-CLI fixtures under tuicd/tests/fixtures/agents/<cli>/ when a CLI updates.

    python3 tests/agents/record.py --tuicd target/debug/tuicd [--cli claude --cli codex ...]

Each CLI runs in a tuicd session (raw capture on) against the scripted model server, through the
scenario below: start, a turn while the model is still answering, the answer, a permission dialog
and its answer, a cancel with Ctrl-C. At each step the screen is saved as a `.screen` fixture whose
expected state is what the step knows to be true (the model server's log says whether the model
is mid-answer; the step knows it asked for a tool that needs permission), never what tuicd thinks.
The whole session is kept as `<version>-session.tcap`, with `<version>-session.labels` (one JSON
object per line: the capture time of each step and its truth) for the replay test.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import struct
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from tuic import Bed, wait_for  # noqa: E402

FIXTURES = HERE.parent.parent / "tuicd" / "tests" / "fixtures" / "agents"

# What differs per CLI: the text its permission dialog shows, and the key that approves it once.
CLIS = {
    "claude": {"ready": r"\? for shortcuts", "dialog": r"Do you want to proceed\?", "approve": "1", "restores": True,
               "question": "Do you want to proceed?"},
    "codex": {"ready": r"GPT-[\d.]+ \w+ ·", "dialog": r"Would you like to run", "approve": "y",
              "question": "Would you like to run the following command?"},
    "gemini": {"ready": r"Type your message", "dialog": r"Allow execution|Apply this change|Allow once", "approve": "1",
               "question": "Allow execution of [Shell]?"},
    "opencode": {"ready": r"ctrl\+p commands", "dialog": r"Permission required", "approve": "\r",
                 "question": "△ Permission required",
                 "cancel": ["\x1b", "\x1b"]},
    # Aider has no shell tool: its question is the file confirmation an answer naming a file raises.
    "aider": {"ready": r"(?m)^> ?$", "dialog": r"\(Y\)es/\(N\)o", "approve": "y\r",
              "ask": "Look at the app [[reply=Please open app.py]]", "question": "Add file to the chat?"},
}


class Recorder:
    def __init__(self, bed: Bed, cli: str, session: str, version: str, started: float):
        self.bed, self.cli, self.session, self.version = bed, cli, session, version
        self.started = started
        self.labels: list[dict] = []
        self.first_typed: float | None = None
        self.out = FIXTURES / cli
        self.out.mkdir(parents=True, exist_ok=True)

    def rows(self) -> list[str]:
        return self.bed.screen(self.session)

    def wait_screen(self, pattern: str, timeout: float = 60) -> list[str]:
        regex = re.compile(pattern)
        return wait_for(f"{self.cli}'s screen to show {pattern!r}",
                        lambda: (lambda rows: rows if regex.search("\n".join(rows)) else None)(self.rows()), timeout)

    def wait_still(self, quiet: float = 1.5, timeout: float = 60) -> list[str]:
        return self.bed.wait_still(self.session, quiet, timeout)

    def wait_model(self, requests: int, timeout: float = 60):
        wait_for(f"{requests} main model requests", lambda: len(self.bed.model.requests()) >= requests, timeout)

    def wait_answered(self, answered: int, timeout: float = 60):
        wait_for(f"{answered} answered model requests", lambda: self.bed.model.answered() >= answered, timeout)

    def snap(self, name: str, expect: str, **truth):
        """Saves the screen now as a fixture stating `expect`, and a label for the capture replay."""
        rows = self.rows()
        at_us = int((time.monotonic() - self.started) * 1e6)
        header = [f"# Recorded from {self.cli} {self.version} by tests/agents/record.py (step {name}).",
                  f"expect: {expect}"]
        for key in ("question", "confirmed", "hold", "composer"):
            if key in truth:
                value = truth[key]
                header.append(f"{key}: {str(value).lower() if isinstance(value, bool) else value}")
        body = "\n".join(row.rstrip() for row in rows)
        (self.out / f"{self.version}-{name}.screen").write_text("\n".join(header) + "\n---\n" + body + "\n")
        self.labels.append({"step": name, "at_us": at_us, "expect": expect, **truth})

    def type(self, text: str):
        if self.first_typed is None:
            self.first_typed = time.monotonic() - self.started
        self.bed.write(self.session, text)

    def align(self, tcap: Path) -> None:
        """Moves the labels onto the capture's clock, which starts when tuicd opens the file (a
        little after `started`): the first input record is the first `type`."""
        data = tcap.read_bytes()[8:]
        at = 0
        while at < len(data):
            direction, micros, length = data[at], struct.unpack_from("<Q", data, at + 1)[0], struct.unpack_from("<I", data, at + 9)[0]
            if direction == ord("i"):
                shift = int(self.first_typed * 1e6) - micros
                for label in self.labels:
                    label["at_us"] -= shift
                return
            at += 13 + length


def record(binary: str, cli: str) -> None:
    bed = Bed(binary)
    try:
        started = time.monotonic()
        session, spec = bed.launch(cli, capture=True)
        version = spec["version"]
        r = Recorder(bed, cli, session, version, started)
        keys = CLIS[cli]
        r.wait_screen(keys["ready"])
        r.wait_still(quiet=2.0)
        r.snap("start-idle", "idle")
        # A turn the model takes 6 s to answer: working while it waits.
        r.type("Explain the repository layout in one line [[delay=6000]]")
        time.sleep(0.3)
        r.type("\r")
        r.wait_model(1)
        time.sleep(1.5)
        r.snap("working", "working")
        r.wait_answered(1)
        r.wait_still()
        r.snap("answered-idle", "idle", confirmed=True)
        # A shell tool call that needs permission.
        r.type(keys.get("ask", "Create the marker file [[shell=touch marker.txt]] [[after=The marker exists.]]"))
        time.sleep(0.3)
        r.type("\r")
        r.wait_screen(keys["dialog"])
        r.wait_still(quiet=1.0)
        r.snap("permission", "awaiting_input", question=keys["question"])
        answered = r.bed.model.answered()
        r.type(keys["approve"])
        r.wait_answered(answered + 1)
        r.wait_still()
        r.snap("after-tool-idle", "idle", confirmed=True)
        # Ctrl-C while the model is still answering.
        r.type("Write a long essay about terminals [[delay=20000]]")
        time.sleep(0.3)
        r.type("\r")
        r.wait_model(len(r.bed.model.requests()) + 1)
        time.sleep(1.0)
        for key in keys.get("cancel", ["\x03"]):
            r.type(key)
            time.sleep(0.15)
        r.wait_still()
        # Claude Code puts the cancelled prompt back into its composer; the others leave it empty.
        r.snap("cancelled", "idle", composer="partial" if keys.get("restores") else "empty")
        # The capture and its labels, for the replay test.
        capture = bed.tuicd.dir / "captures" / f"{session}.tcap"
        shutil.copy(capture, r.out / f"{version}-session.tcap")
        r.align(r.out / f"{version}-session.tcap")
        size = bed.tuicd.request("GET", f"/sessions/{session}")
        meta = {"rows": size["rows"], "cols": size["cols"], "cli": cli, "version": version}
        lines = [json.dumps(meta)] + [json.dumps(label) for label in r.labels]
        (r.out / f"{version}-session.labels").write_text("\n".join(lines) + "\n")
        print(f"{cli} {version}: {len(r.labels)} screens and a capture in {r.out}")
    finally:
        bed.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tuicd", required=True)
    parser.add_argument("--cli", action="append", choices=sorted(CLIS))
    args = parser.parse_args()
    for cli in args.cli or sorted(CLIS):
        record(args.tuicd, cli)


if __name__ == "__main__":
    main()

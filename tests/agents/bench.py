"""The real-agent figures: submits that reach the model, idle latency, no idle mid-turn.

    python3 tests/agents/bench.py --tuicd target/release/tuicd [--cli claude ...] [--json out.json]

For each CLI (a tuicd session against the scripted model server, launched as bed.py says):
- submit: 20 one-line prompts, 10 multi-line and 10 with quotes, unicode, `?` and `!`, each through
  MCP `session action=submit`, then `session action=wait until=idle`. A prompt counts when the
  model server's log holds its exact text in exactly one main request. Receipts are checked
  against the log: "submitted: true" for a prompt the model never got is a lie, counted apart.
- idle latency: for 10 turns whose answer the model delays, the time from the model server's
  "answered" record to the session reading idle_confirmed (polled every 10 ms), p50 and max.
- mid-turn: while each delayed answer is pending (the log has the request, not the answer),
  the state is sampled; any idle sample is counted.
Prints a table; `--json` writes the figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from tuic import Bed, wait_for  # noqa: E402

READY = {"claude": r"\? for shortcuts", "codex": r"GPT-[\d.]+ \w+ ·", "gemini": r"Type your message"}

SPECIAL = [
    'Say "hi" and \'bye\'? Then stop!',
    "Café naïve façade — déjà vu? (é ü ñ)",
    "日本語のテキスト？ 中文 한국어 !",
    "Emoji 🙂🚀✨ and a question?",
    "Backticks `ls -la` and $HOME and \\n literal?",
    "Percent 100% & ampersand && pipe | tee?",
    "Brackets [x] {y} <z> and #hash?",
    "Tab-free mixed 'single' \"double\" `back`!",
    "A question at the end?",
    "¿Qué tal? ¡Hola!",
]


def oneline(i: int) -> str:
    return f"Bench prompt {i:02d}: summarize the repository structure and list the entry points now"


def multiline(i: int) -> str:
    return f"Bench multi {i:02d}, first line\nsecond line of the prompt\nthird line with detail"


class Run:
    def __init__(self, bed: Bed, cli: str, session: str):
        self.bed, self.cli, self.session = bed, cli, session

    def state(self) -> dict:
        return self.bed.state(self.session)

    def submit(self, text: str) -> dict:
        try:
            return self.bed.tuicd.mcp("session", {"action": "submit", "session_id": self.session, "input": text})
        except RuntimeError as e:
            return {"submitted": False, "reason": str(e)}

    def wait_idle(self, timeout_ms: int = 60000) -> dict:
        return self.bed.tuicd.mcp("session", {"action": "wait", "session_id": self.session, "until": "idle",
                                              "timeout_ms": timeout_ms})

    def count(self, text: str) -> int:
        return sum(1 for r in self.bed.model.requests() if r["prompt"] == text)


def bench_submits(run: Run, prompts: list[str]) -> dict:
    reached = lies = refused = 0
    for text in prompts:
        wait_for("idle before a submit", lambda: run.state().get("idle_confirmed"), timeout=60)
        receipt = run.submit(text)
        if receipt.get("submitted"):
            wait_for(f"{text[:20]!r} to reach the model", lambda: run.count(text) >= 1, timeout=30)
        run.wait_idle()
        got = run.count(text)
        if receipt.get("submitted") and got != 1:
            lies += 1
        if not receipt.get("submitted"):
            refused += 1
            print(f"  not submitted: {text[:40]!r}: {receipt.get('reason')}", file=sys.stderr)
        reached += got == 1
    return {"sent": len(prompts), "reached_once": reached, "lies": lies, "not_submitted": refused}


def bench_idle(run: Run, turns: int) -> dict:
    latencies, mid_turn_idle, samples = [], 0, 0
    for i in range(turns):
        wait_for("idle before a turn", lambda: run.state().get("idle_confirmed"), timeout=60)
        answered_before = run.bed.model.answered()
        text = f"Idle latency turn {i} [[delay=1500]]"
        receipt = run.submit(text)
        if not receipt.get("submitted"):
            print(f"  turn {i} not submitted: {receipt.get('reason')}", file=sys.stderr)
            continue
        while run.bed.model.answered() <= answered_before:
            state = run.state()
            samples += 1
            mid_turn_idle += state.get("agent_state") == "idle" or bool(state.get("idle_confirmed"))
            time.sleep(0.05)
        answered = [r for r in run.bed.model.log() if r.get("event") == "answered" and r.get("main")][-1]["time"]
        wait_for("idle after the answer", lambda: run.state().get("idle_confirmed"), timeout=30, interval=0.01)
        latencies.append(time.time() - answered)
    return {
        "turns": len(latencies),
        "idle_p50_ms": round(statistics.median(latencies) * 1000) if latencies else None,
        "idle_max_ms": round(max(latencies) * 1000) if latencies else None,
        "idle_ms": [round(x * 1000) for x in latencies],
        "mid_turn_samples": samples,
        "mid_turn_idle": mid_turn_idle,
    }


def bench(binary: str, cli: str, scale: int) -> dict:
    bed = Bed(binary)
    try:
        session, spec = bed.launch(cli)
        run = Run(bed, cli, session)
        wait_for(f"{cli} ready", lambda: run.state().get("idle_confirmed"), timeout=60)
        figures = {"cli": cli, "version": spec["version"]}
        figures["one_line"] = bench_submits(run, [oneline(i) for i in range(20 // scale)])
        figures["multi_line"] = bench_submits(run, [multiline(i) for i in range(10 // scale)])
        figures["special"] = bench_submits(run, SPECIAL[: 10 // scale])
        figures["idle"] = bench_idle(run, 10 // scale)
        return figures
    finally:
        bed.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tuicd", required=True)
    parser.add_argument("--cli", action="append", choices=sorted(READY))
    parser.add_argument("--scale", type=int, default=1, help="divide every count by this (a quick run)")
    parser.add_argument("--json")
    args = parser.parse_args()
    results = []
    for cli in args.cli or sorted(READY):
        figures = bench(args.tuicd, cli, args.scale)
        results.append(figures)
        print(json.dumps(figures), flush=True)
    print(f"\n{'cli':8} {'one-line':>9} {'multi':>7} {'special':>8} {'lies':>5} {'idle p50':>9} {'idle max':>9} {'idle mid-turn':>14}")
    for f in results:
        lies = sum(f[k]["lies"] for k in ("one_line", "multi_line", "special"))
        cell = lambda k: f"{f[k]['reached_once']}/{f[k]['sent']}"  # noqa: E731
        print(f"{f['cli']:8} {cell('one_line'):>9} {cell('multi_line'):>7} {cell('special'):>8} {lies:>5} "
              f"{str(f['idle']['idle_p50_ms']) + ' ms':>9} {str(f['idle']['idle_max_ms']) + ' ms':>9} "
              f"{f['idle']['mid_turn_idle']}/{f['idle']['mid_turn_samples']:>5}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

"""Benchmark: prompt -> first streamed agent_message_chunk, through tuicd vs straight over stdio.

    python3 tests/acp/bench.py --tuicd target/debug/tuicd [--cli claude] [--prompts 20]

For each agent, `--prompts` prompts on one session straight over the agent's stdio (direct.py's
AcpClient), then as many through tuicd (POST .../prompt, frames read on the WebSocket stream).
Every latency is measured against the scripted model server's clock: from the `first_byte` of the
model's answer (model_server/server.py's `answered` record; the first text chunk follows it at
once) to the moment the first agent_message_chunk of that turn was read by the client (direct:
the line off the agent's stdout; tuicd: the WebSocket frame). Same host, same clock
(time.time()). Prints p50 / p95 / max per path and the p50 / p95 of tuicd's added latency
(tuicd minus direct, per rank), in ms. `--direct-only` skips tuicd (no daemon needed).
Bounded: at most 200 prompts per path, 60 s per prompt. Python 3.11 stdlib only.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "agents"))
sys.path.insert(0, str(HERE))

from direct import DirectBed, chunk_text as direct_chunk  # noqa: E402
import importlib.util  # noqa: E402

# tests/acp/run.py by its path (tests/agents/run.py is on sys.path under the same name).
_spec = importlib.util.spec_from_file_location("acp_run", HERE / "run.py")
acp_run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(acp_run)
Stream, Suite, chunk_text, is_response, must = (acp_run.Stream, acp_run.Suite, acp_run.chunk_text,
                                                acp_run.is_response, acp_run.must)
from tuic import wait_for  # noqa: E402

PROMPT_TIMEOUT = 60


def first_byte(model, marker: str) -> float:
    def found():
        for r in model.log():
            if r.get("event") == "answered" and r.get("main") and marker in r.get("prompt", "") and r.get("first_byte"):
                return r["first_byte"]
        return None
    return wait_for(f"the model's answer to {marker}", found, timeout=10)


def prompt_text(i: int, path: str) -> tuple[str, str]:
    marker = f"bench-{path}-{i:03d}"
    return marker, f"[[delay=20]] [[reply=Answer {marker} ok]] {marker}"


def bench_direct(cli: str, n: int) -> list[float]:
    b = DirectBed(cli)
    client = b.client()
    out: list[float] = []
    try:
        client.initialize()
        sid = client.wait(client.request("session/new", {"cwd": str(b.repo), "mcpServers": []}), 120)["sessionId"]
        for i in range(n):
            marker, text = prompt_text(i, "direct")
            first: list[float] = []

            def on(at, message):
                if not first and direct_chunk(message) and message["params"].get("sessionId") == sid:
                    first.append(at)

            result = client.wait(client.request("session/prompt", {
                "sessionId": sid, "prompt": [{"type": "text", "text": text}]}), PROMPT_TIMEOUT, on)
            if result.get("stopReason") != "end_turn" or not first:
                raise RuntimeError(f"direct prompt {i}: {result} first={first}")
            out.append((first[0] - first_byte(b.model, marker)) * 1000)
    finally:
        client.close()
        b.close()
    return out


def bench_tuicd(cli: str, tuicd: str, n: int) -> list[float]:
    suite = Suite(cli, tuicd)
    out: list[float] = []
    try:
        suite.connect()
        snap = must(suite.bed, "GET", suite.path())
        stream = Stream(suite.bed, suite.cid, snap["sequence"])
        try:
            for i in range(n):
                marker, text = prompt_text(i, "tuicd")
                sent = must(suite.bed, "POST", suite.path(f"/sessions/{suite.sid}/prompt"), {"prompt": text}, want=202)
                first: list[float] = []
                deadline = time.monotonic() + PROMPT_TIMEOUT
                while True:
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"tuicd prompt {i}: no end within {PROMPT_TIMEOUT} s")
                    try:
                        frame = stream.next(max(0.01, deadline - time.monotonic()))
                    except (socket.timeout, TimeoutError):
                        continue
                    at = time.time()
                    if not first and chunk_text(frame, suite.sid):
                        first.append(at)
                    if is_response(frame, sent["request_id"]):
                        break
                if not first:
                    raise RuntimeError(f"tuicd prompt {i}: no agent_message_chunk")
                out.append((first[0] - first_byte(suite.bed.model, marker)) * 1000)
        finally:
            stream.close()
    finally:
        suite.close()
    return out


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[k]


def summary(values: list[float]) -> dict:
    return {"n": len(values), "p50_ms": round(pct(values, 50), 2), "p95_ms": round(pct(values, 95), 2),
            "max_ms": round(max(values), 2), "mean_ms": round(statistics.fmean(values), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tuicd")
    parser.add_argument("--cli", nargs="*", default=["claude"], choices=["claude", "codex", "gemini"])
    parser.add_argument("--prompts", type=int, default=20)
    parser.add_argument("--direct-only", action="store_true")
    args = parser.parse_args()
    n = max(1, min(args.prompts, 200))
    if not args.direct_only and not args.tuicd:
        parser.error("--tuicd is required unless --direct-only")
    report = {}
    for cli in args.cli:
        direct = bench_direct(cli, n)
        entry = {"direct": summary(direct)}
        if not args.direct_only:
            via = bench_tuicd(cli, args.tuicd, n)
            entry["tuicd"] = summary(via)
            added = [t - d for t, d in zip(sorted(via), sorted(direct))]
            entry["tuicd_added"] = {"p50_ms": round(pct(via, 50) - pct(direct, 50), 2),
                                    "p95_ms": round(pct(via, 95) - pct(direct, 95), 2),
                                    "per_rank_p50_ms": round(pct(added, 50), 2)}
        report[cli] = entry
        print(json.dumps({cli: entry}), flush=True)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

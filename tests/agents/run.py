"""The real-agent suite: tuicd driving the real agent CLIs against the scripted model server.

    python3 tests/agents/run.py --tuicd target/debug/tuicd --bridge target/debug/tuic-bridge [--cli claude ...]

Prints one line per check (`ok <name>` or `FAIL <name>: <reason>`), then `N passed, M failed`;
exits 1 when any failed. Each CLI gets one Bed (model server + tuicd + repository) and one session
for the checks start .. cancel, run in order; spawning gets a Bed of its own whose tuicd carries
the CLI's launch environment (spawn takes no env). opencode and Aider (screen_read in CLIS) get
the shorter list start, submit, idle latency and their own question. The truth is always what
reached the model (the model server's log) or what the person sees, never tuicd's own word for
it. Every wait is a condition with a deadline; the only sleeps are the short pauses a person
makes between keys.
Python 3.11 stdlib only.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from tuic import Bed, wait_for  # noqa: E402

BIN = HERE / "node_modules" / ".bin"

# What differs per CLI. ready: the screen once the composer is usable; approve: the key that
# allows a permission dialog once; cancel: the keys that stop a running turn (Gemini's Ctrl-C
# during a turn arms "Ctrl+C again to exit", Esc does not); puts_back: a cancelled prompt comes
# back into the composer; spawn_tool: the suffix of tuicd's `session` tool as the CLI lists it
# to the model (None: not exercised).
# The screen-read CLIs (screen_read: True) announce nothing (no OSC state, no state titles), so
# tuicd reads their state from the screen alone, idle through the screen-settle path. They get
# a shorter list (start, submit, idle latency, their question): start_s: the start deadline;
# idle_limit: the idle latency limit in s; multiline: submit a three-line prompt too; question:
# (the prompt that makes the CLI ask, what the question_text must contain, the answer typed,
# the file the answer leaves behind or None).
CLIS = {
    "claude": {"ready": r"\? for shortcuts", "approve": "1", "cancel": "\x03", "puts_back": True,
               "spawn_tool": "tuic__session"},
    "codex": {"ready": r"GPT-[\d.]+ \w+ ·", "approve": "y", "cancel": "\x03", "puts_back": False,
              # Codex lists MCP tools only behind its tool_search tool (namespace mcp__tuic): the
              # scripted model searches first (model_server/responses.py), then calls.
              "spawn_tool": "tuic__session"},
    "gemini": {"ready": r"Type your message", "approve": "1", "cancel": "\x1b", "puts_back": False,
               "spawn_tool": "mcp_tuic_session"},
    # Full screen; the composer shows the placeholder on the home screen, then `Build · <model>`.
    # Its bash tool asks `△ Permission required`; Enter allows once. MCP tools are `tuic_<tool>`,
    # not exercised here (spawn_tool None keeps the suite's time).
    "opencode": {"ready": r"Ask anything…|Build · Scripted", "screen_read": True, "start_s": 40,
                 "idle_limit": 3.0, "multiline": True, "spawn_tool": None,
                 "question": ("Create the marker file [[shell=touch marker.txt]] [[after=The marker exists.]]",
                              "Permission required", "\r", "marker.txt")},
    # Inline (not full screen): the `>` prompt on the cursor row. No tools and no MCP; its own
    # question is `Add file to the chat?` when the model's answer names a repo file (app.py glued
    # to `]]`, so the prompt itself names no file and aider asks only after the answer).
    "aider": {"ready": r"(?m)^>\s*$", "screen_read": True, "start_s": 40, "idle_limit": 3.0,
              "multiline": False, "spawn_tool": None,
              "question": ("Look at the app [[reply=Please open app.py]]", "Add file to the chat", "n\r", None)},
}

PROMPT_ONE_LINE = "Summarise what this small repository is for in one short plain sentence."
PROMPT_THREE_LINES = "First line of a longer request\nsecond line with the details\nthird line that ends it"
PROMPT_SPECIAL = "Is it \"quoted\" and 'single'? Yes! café é 日本 🙂 done"


class Failed(Exception):
    pass


def check(condition, reason: str):
    if not condition:
        raise Failed(reason)


class Results:
    def __init__(self):
        self.passed = self.failed = 0

    def run(self, name: str, fn, *args):
        """Runs one check; returns its value, or None when it failed."""
        try:
            value = fn(*args)
        except (Failed, TimeoutError) as e:
            self.fail(name, str(e))
            return None
        except Exception as e:  # a broken check is a failure too, with where it broke
            where = traceback.extract_tb(e.__traceback__)[-1]
            self.fail(name, f"{type(e).__name__}: {e} (run.py:{where.lineno})")
            return None
        self.passed += 1
        print(f"ok {name}" + (f": {value}" if isinstance(value, str) and value else ""), flush=True)
        return value if value is not None else True

    def fail(self, name: str, reason: str):
        self.failed += 1
        print(f"FAIL {name}: {reason}", flush=True)


# --- Small helpers over the bed ---------------------------------------------------------------


class Agent:
    """One CLI in one tuicd session of a Bed."""

    def __init__(self, bed: Bed, cli: str, session: str):
        self.bed, self.cli, self.session = bed, cli, session
        self.facts = CLIS[cli]

    def info(self) -> dict:
        return self.bed.tuicd.request("GET", f"/sessions/{self.session}")

    def state(self) -> dict:
        return self.info()["state"]

    def screen(self) -> str:
        return "\n".join(self.bed.screen(self.session))

    def tail(self, rows: int = 8) -> str:
        """The screen's last non-blank rows, for failure messages."""
        lines = [r.rstrip() for r in self.bed.screen(self.session) if r.strip()]
        return " | ".join(lines[-rows:])

    def notices(self) -> list[str]:
        """Warnings and errors the CLI printed on its screen."""
        rows = self.bed.screen(self.session)
        return [r.strip() for r in rows if re.search(r"warning|skipping|insecure|MCP issues|error|must be", r, re.I)]

    def write(self, data: str):
        self.bed.write(self.session, data)

    def submit(self, text: str) -> tuple[bool, dict]:
        """MCP `session action=submit`: (isError, the receipt)."""
        return self.bed.tuicd.mcp_call("session", {"action": "submit", "session_id": self.session, "input": text})

    def wait_idle(self, timeout_ms: int = 60000) -> dict:
        return self.bed.tuicd.mcp("session", {"action": "wait", "session_id": self.session, "until": "idle",
                                              "timeout_ms": timeout_ms})

    def settle(self, timeout_ms: int = 30000):
        """Waits until tuicd says confirmed idle; fails naming what it says instead."""
        answer = self.wait_idle(timeout_ms)
        state = self.state()
        check(answer.get("met") and state.get("agent_state") == "idle" and state.get("idle_confirmed"),
              f"not idle: wait answered {answer}, state {brief(state)}; screen: {self.tail()}")

    def prompts(self, text: str) -> int:
        """How many main model requests carry exactly `text` as their prompt."""
        return sum(1 for r in self.bed.model.requests() if r["prompt"] == text)

    def mentions(self, text: str) -> int:
        """How many main model requests have `text` somewhere in their prompt."""
        return sum(1 for r in self.bed.model.requests() if text in r["prompt"])

    def wait_model(self, text: str, timeout: float = 30, exact: bool = True):
        count = self.prompts if exact else self.mentions
        try:
            wait_for(f"the model to get {text!r}", lambda: count(text) >= 1, timeout)
        except TimeoutError:
            seen = [r["prompt"][:80] for r in self.bed.model.requests()[-3:]]
            raise Failed(f"the model never got {text!r} within {timeout:.0f} s; its last prompts: {seen}; "
                         f"state {brief(self.state())}; screen: {self.tail()}") from None

    def submitted(self, text: str, what: str = "prompt"):
        """Submit `text`; fails unless the receipt says submitted, naming what the model got anyway."""
        error, receipt = self.submit(text)
        if not error and receipt.get("submitted") is True:
            return receipt
        try:  # a refusal whose prompt reached the model all the same is a wrong receipt
            wait_for("the model", lambda: self.prompts(text), 3)
        except TimeoutError:
            pass
        raise Failed(f"{what}: submit refused: {receipt}; the model got the prompt {self.prompts(text)} times")

    def turn(self, text: str, what: str = "prompt"):
        """Submit `text`, it reaches the model exactly once, the turn ends confirmed idle."""
        self.submitted(text, what)
        self.wait_model(text)
        self.settle()
        count = self.prompts(text)
        check(count == 1, f"{what}: the model got {text!r} {count} times")


def brief(state: dict) -> dict:
    keys = ("agent_state", "idle_confirmed", "awaiting_input", "question_text", "composer_state", "turn_epoch")
    return {k: state.get(k) for k in keys if k in state}


def wait_state(agent: Agent, what: str, predicate, timeout: float) -> dict:
    try:
        return wait_for(what, lambda: (lambda s: s if predicate(s) else None)(agent.state()), timeout)
    except TimeoutError:
        raise Failed(f"timed out after {timeout:.0f} s waiting for {what}; state {brief(agent.state())}; "
                     f"screen: {agent.tail()}") from None


# --- The checks --------------------------------------------------------------------------------


def check_start(agent: Agent, launched: float):
    """Idle and confirmed within 30 s (start_s); never `working` once the composer shows and stands still."""
    regex = re.compile(agent.facts["ready"])
    limit = agent.facts.get("start_s", 30)
    try:
        wait_for(f"{agent.cli}'s composer", lambda: regex.search(agent.screen()),
                 timeout=max(1.0, launched + limit - time.monotonic()))
    except TimeoutError:
        raise Failed(f"the composer never showed; screen: {agent.tail()}") from None
    agent.bed.wait_still(agent.session, quiet=2.0, timeout=30)
    samples, end = [], time.monotonic() + 1.0
    deadline = launched + limit
    while True:
        state = agent.state()
        samples.append(brief(state))
        check(state.get("agent_state") != "working",
              f"reported working {time.monotonic() - launched:.1f} s after launch, with the composer "
              f"stable for 2 s: {brief(state)}; screen: {agent.tail()}")
        confirmed = state.get("agent_state") == "idle" and state.get("idle_confirmed")
        if confirmed and time.monotonic() >= end:
            return f"confirmed idle {time.monotonic() - launched:.1f} s after launch"
        check(time.monotonic() < deadline, f"not confirmed idle {limit} s after launch: {samples[-1]}; "
                                           f"screen: {agent.tail()}")
        time.sleep(0.1)


def check_submit(agent: Agent, text: str, what: str):
    agent.turn(text, what)


def check_submit_opencode_paste(agent: Agent, text: str, what: str):
    """A multi-line prompt into opencode. opencode itself appends ONE trailing space to any
    bracketed paste ("a\nb" pasted -> prompt "a\nb "; /tmp/agents-notes/opencode.md), so the
    model's prompt may be `text` or `text + " "`, nothing else; tuicd's receipt and state are
    checked as strictly as for every other submit."""
    agent.submitted(text, what)
    both = lambda: agent.prompts(text) + agent.prompts(text + " ")  # noqa: E731
    try:
        wait_for(f"the model to get {text!r}", lambda: both() >= 1, 30)
    except TimeoutError:
        seen = [r["prompt"][:80] for r in agent.bed.model.requests()[-3:]]
        raise Failed(f"the model never got {text!r} (or with opencode's one trailing space) within 30 s; "
                     f"its last prompts: {seen}; state {brief(agent.state())}; screen: {agent.tail()}") from None
    agent.settle()
    check(both() == 1, f"{what}: the model got {text!r} {both()} times")


def check_back_to_back(agent: Agent):
    for i in range(1, 6):
        agent.turn(f"Back to back prompt number {i} of five, answer briefly.", f"prompt {i} of 5")


def check_idle_latency(agent: Agent) -> str:
    """From the model's `answered` record to tuicd's idle_confirmed, polled every 20 ms."""
    agent.settle()
    text = "Answer this one after a pause [[delay=1500]]"
    error, receipt = agent.submit(text)
    check(not error and receipt.get("submitted") is True, f"submit refused: {receipt}")
    samples: list[tuple[float, bool]] = []  # (wall time, idle_confirmed)
    answered_at, next_log, deadline = None, 0.0, time.monotonic() + 30
    while time.monotonic() < deadline:
        state = agent.state()
        now = time.time()
        samples.append((now, bool(state.get("agent_state") == "idle" and state.get("idle_confirmed"))))
        if answered_at is None and time.monotonic() >= next_log:
            next_log = time.monotonic() + 0.2
            answered_at = next((r["time"] for r in agent.bed.model.log()
                                if r.get("event") == "answered" and r.get("main") and r.get("prompt") == text), None)
        if answered_at is not None and samples[-1][1] and now > answered_at:
            break
        time.sleep(0.02)
    check(answered_at is not None, "the model never answered the turn")
    check(any(not idle for _, idle in samples), "tuicd never left confirmed idle during the turn")
    idle_at = next((t for t, idle in samples if idle and t > answered_at), None)
    check(idle_at is not None, f"not confirmed idle 30 s after submit; state {brief(agent.state())}")
    latency = idle_at - answered_at
    limit = agent.facts.get("idle_limit", 1.5)
    check(latency < limit, f"confirmed idle {latency:.2f} s after the model answered (limit {limit} s)")
    return f"{latency:.2f} s from the model's answer to idle_confirmed"


def peer_send(agent: Agent, message: str) -> dict:
    """A peer message to the agent's session through tuicd's messaging (`agent action=send`).

    The agent here has no tuic MCP server of its own, so the test binds the session's identity
    the way its tuic-bridge would (an MCP initialize carrying `x-tuic-session`), then a second MCP
    session registers as the sender and sends."""
    tuicd = agent.bed.tuicd
    tuic_session = agent.info()["tuic_session"]
    tuicd.mcp_initialize({"x-tuic-session": tuic_session})
    sender = tuicd.mcp_initialize()
    error, answer = tuicd.mcp_call("agent", {"action": "register", "name": "tester"}, sender)
    check(not error, f"register refused: {answer}")
    error, answer = tuicd.mcp_call("agent", {"action": "send", "to": agent.session, "message": message}, sender)
    check(not error and answer.get("accepted", answer.get("ok")), f"send refused: {answer}")
    return answer


def check_permission(agent: Agent):
    agent.settle()
    text = "Create the marker file [[shell=touch marker.txt]] [[after=The marker exists.]]"
    error, receipt = agent.submit(text)
    check(not error and receipt.get("submitted") is True, f"submit refused: {receipt}")
    wait_state(agent, "awaiting_input with a question_text",
               lambda s: s.get("agent_state") == "awaiting_input" and s.get("question_text"), 20)
    message = "Peer note 4711 for you [[reply=Noted the peer note.]]"
    sent = peer_send(agent, message)
    check(sent.get("delivery_path") == "terminal_or_queued_and_inbox",
          f"send took delivery_path {sent.get('delivery_path')!r}: {sent}")
    # Nothing may be typed into the open dialog: it stays, and the model never sees the message.
    end = time.monotonic() + 2.0
    while time.monotonic() < end:
        state = agent.state()
        check(state.get("agent_state") == "awaiting_input",
              f"the dialog did not stay while a message was queued: {brief(state)}; screen: {agent.tail()}")
        check(agent.mentions("Peer note 4711") == 0, "the peer message reached the model while the dialog was open")
        time.sleep(0.1)
    agent.write(agent.facts["approve"])
    wait_for("the tool's follow-up request",
             lambda: any(r["last_is_tool_result"] for r in agent.bed.model.requests()), 30)
    agent.wait_model("Peer note 4711", timeout=40, exact=False)
    agent.settle()
    count = agent.mentions("Peer note 4711")
    check(count == 1, f"the peer message reached the model {count} times")
    check((agent.bed.repo / "marker.txt").exists(), "the approved command did not run (no marker.txt)")


def check_question(agent: Agent) -> str:
    """The CLI's own question (opencode's permission dialog, aider's `Add file to the chat?`):
    awaiting_input with its question_text, answered with the CLI's key, then confirmed idle."""
    agent.settle()
    text, asks, answer, leaves = agent.facts["question"]
    agent.submitted(text)
    agent.wait_model(text)
    state = wait_state(agent, "awaiting_input with a question_text",
                       lambda s: s.get("agent_state") == "awaiting_input" and s.get("question_text"), 20)
    question = state["question_text"]
    check(asks in question, f"question_text {question!r} does not hold {asks!r}; screen: {agent.tail()}")
    # The person reads the question, then answers (aider: n = do not add app.py). Keys typed the
    # instant the question row shows are lost: aider's prompt_toolkit is not reading yet.
    time.sleep(1.0)
    agent.write(answer)
    wait_state(agent, "the question to close", lambda s: s.get("agent_state") != "awaiting_input", 10)
    if leaves:
        wait_for("the tool's follow-up request",
                 lambda: any(r["last_is_tool_result"] for r in agent.bed.model.requests()), 30)
    agent.settle()
    # The tool's follow-up request carries the same last user message: count the asking ones.
    requests = agent.bed.model.requests()
    asked = [i for i, r in enumerate(requests) if r["prompt"] == text and not r["last_is_tool_result"]]
    check(len(asked) == 1, f"the model got {text!r} {len(asked)} times")
    # Only the answer typed here may answer the question: after the prompt the model gets the
    # tool's result (opencode, allowed) or nothing (aider, declined; a stray Enter would be a Yes
    # and aider would send "I added these files to the chat: app.py").
    later = [r["prompt"][:60] if not r["last_is_tool_result"] else "(tool result)" for r in requests[asked[0] + 1:]]
    expected = ["(tool result)"] if leaves else []
    check(later == expected, f"after the question the model got {later}, expected {expected}")
    if leaves:
        check((agent.bed.repo / leaves).exists(), f"the allowed command did not run (no {leaves})")
    return f"asked {question!r}"


def start_long_turn(agent: Agent) -> None:
    """A turn the model answers only after 20 s, once the model has its prompt."""
    agent.settle()
    text = "Write a long essay about terminals [[delay=20000]]"
    agent.submitted(text)
    agent.wait_model(text)


def check_cancel_claude(agent: Agent):
    start_long_turn(agent)
    agent.write("\x03")
    wait_for("the prompt back in the composer", lambda: "❯\u00a0Write a long essay" in agent.screen(), 10)
    problems = []
    try:
        wait_state(agent, "composer_state partial", lambda s: s.get("composer_state") == "partial", 10)
    except Failed:
        problems.append(f"the prompt is back in the composer but composer_state stays: {brief(agent.state())}")
    try:  # give tuicd its chance to settle, so a refusal is about the composer and not the turn
        wait_for("idle after the cancel", lambda: agent.state().get("idle_confirmed"), 8)
    except TimeoutError:
        pass
    over = "This must not be typed over the put-back prompt"
    error, receipt = agent.submit(over)
    if not (error or receipt.get("submitted") is False):
        try:
            wait_for("the model", lambda: agent.mentions(over), 5)
        except TimeoutError:
            pass
        got = [r["prompt"] for r in agent.bed.model.requests() if over in r["prompt"]]
        problems.append(f"submit over the put-back prompt was accepted: {receipt}; the model got {got}")
    else:
        reason = str(receipt.get("reason") or receipt.get("error") or receipt)
        if not (re.search(r"clear", reason, re.I) and "composer" in reason.lower()):
            problems.append(f"the refusal does not say to clear the composer: {reason!r}")
    check(not problems, "; ".join(problems))
    agent.write("\x1b")
    time.sleep(0.1)
    agent.write("\x1b")
    wait_state(agent, "composer_state empty after Esc Esc", lambda s: s.get("composer_state") == "empty", 10)
    agent.settle()
    agent.turn("A fresh prompt after the cancel, answer briefly.", "after the cancel")


def check_cancel_other(agent: Agent):
    start_long_turn(agent)
    wait_state(agent, "working", lambda s: s.get("agent_state") == "working", 10)
    agent.write(agent.facts["cancel"])
    wait_state(agent, "idle after the cancel",
               lambda s: s.get("agent_state") == "idle" and s.get("idle_confirmed"), 15)
    agent.turn("A fresh prompt after the cancel, answer briefly.", "after the cancel")


def check_spawn(bed: Bed, cli: str, binary: Path) -> str:
    """agent action=spawn: wait until=idle only after the first turn ran; the spawned agent's
    call of tuicd's `session` tool is served."""
    tool = CLIS[cli]["spawn_tool"]
    # The first prompt goes in at launch, before the CLI has connected its MCP servers (a race
    # of the CLI's own); the tool call is the second turn, typed once the first one ended.
    first = "Say hello to the team [[delay=800]]"
    error, spawned = bed.tuicd.mcp_call("agent", {"action": "spawn", "agent_type": cli, "binary_path": str(binary),
                                                  "cwd": str(bed.repo), "prompt": first})
    check(not error, f"spawn refused: {spawned}")
    session = spawned["session_id"]
    agent = Agent(bed, cli, session)
    answer = agent.wait_idle(90000)
    check(answer.get("met"), f"wait until=idle did not return met: {answer}; screen: {agent.tail()}")
    check(agent.prompts(first) == 1 or agent.info()["exited"],
          f"wait until=idle returned before the first turn reached the model: {answer}; screen: {agent.tail()}")
    check(bed.model.answered() >= 1, "wait until=idle returned before the first turn's answer")
    if agent.info()["exited"]:
        raise Failed(f"the spawned {cli} exited (code {agent.info().get('exit_code')}); "
                     f"launch_warning {spawned.get('launch_warning')!r}; its last words: {agent.tail(4)}")
    prompt = f'[[tool={tool} {{"action":"list"}}]] [[after=Listed.]]'
    error, receipt = agent.submit(prompt)
    check(not error and receipt.get("submitted") is True, f"the tool prompt was not submitted: {receipt}")
    for _ in range(4):
        answer = agent.wait_idle(90000)
        check(answer.get("met"), f"wait until=idle did not return met: {answer}; screen: {agent.tail()}")
        check(agent.prompts(prompt) >= 1 or agent.info()["exited"],
              f"wait until=idle returned before the first turn reached the model: {answer}; "
              f"screen: {agent.tail()}")
        state = agent.state()
        if agent.info()["exited"]:
            raise Failed(f"the spawned {cli} exited (code {agent.info().get('exit_code')}); "
                         f"launch_warning {spawned.get('launch_warning')!r}; its last words: {agent.tail(4)}")
        if state.get("agent_state") != "awaiting_input":
            break
        agent.write(CLIS[cli]["approve"])  # the person allows the MCP tool call
        wait_state(agent, "the dialog to close", lambda s: s.get("agent_state") != "awaiting_input", 10)
    requests = bed.model.requests()
    results = [r for r in requests if r["last_is_tool_result"]]
    listed = [r for r in results if session in r["tool_result_text"] or spawned["alias"] in r["tool_result_text"]]
    check(listed, f"no tool result holding the session list reached the model; main requests: "
                  f"{[(r['prompt'][:60], r['tool_result_text'][:100]) for r in requests]}; the CLI's notices: "
                  f"{agent.notices()}; screen: {agent.tail(3)}")
    state = agent.state()
    check(state.get("agent_state") == "idle" and state.get("idle_confirmed"), f"not idle at the end: {brief(state)}")
    return f"session list served to the spawned {cli} ({len(listed[0]['tool_result_text'])} chars)"


def check_channel_off_fallback(bed: Bed) -> str:
    """A spawned Claude Code whose channels are off (its remote flag, off in this bed): a peer
    message sent mid-turn is pushed, never shown, and then typed at the next idle, exactly once."""
    claude = [s for s in bed.tuicd.request("GET", "/sessions") if s.get("agent_type") == "claude"]
    check(claude, "no spawned Claude Code in this bed")
    agent = Agent(bed, "claude", claude[-1]["session_id"])
    agent.settle()
    long = "Keep working on the essay [[delay=6000]]"
    error, receipt = agent.submit(long)
    check(not error and receipt.get("submitted") is True, f"the long prompt was not submitted: {receipt}")
    agent.wait_model(long)
    note = "Fallback note 5150 from the tester"
    sender = bed.tuicd.mcp_initialize()
    error, answer = bed.tuicd.mcp_call("agent", {"action": "register", "name": "tester"}, sender)
    check(not error, f"register refused: {answer}")
    error, sent = bed.tuicd.mcp_call("agent", {"action": "send", "to": agent.session, "message": note}, sender)
    check(not error and sent.get("accepted"), f"send refused: {sent}")
    check(sent.get("delivery_path") == "sse_channel_and_inbox",
          f"a working spawned Claude Code should get the channel push first: {sent.get('delivery_path')}")
    wait_for("the message typed at the next idle", lambda: agent.mentions(note) >= 1, 60)
    agent.settle()
    check(agent.mentions(note) == 1, f"the message reached the model {agent.mentions(note)} times")
    return "pushed, not shown by Claude Code, typed after the turn, reached the model once"


def check_spawn_missing_binary(bed: Bed):
    before = len(bed.tuicd.request("GET", "/sessions"))
    missing = str(bed.root / "no-such-claude")
    try:
        error, answer = bed.tuicd.mcp_call("agent", {"action": "spawn", "agent_type": "claude", "binary_path": missing,
                                                     "cwd": str(bed.repo), "prompt": "hello"})
    except RuntimeError as e:  # a JSON-RPC error is a clear refusal too
        error, answer = True, str(e)
    check(error, f"spawn of a missing binary was accepted: {answer}")
    text = str(answer.get("error", answer) if isinstance(answer, dict) else answer)
    check("no-such-claude" in text or re.search(r"not found|no such|does not exist|missing", text, re.I),
          f"the error does not name the missing binary: {text!r}")
    after = len(bed.tuicd.request("GET", "/sessions"))
    check(after == before, f"a refused spawn left a session behind ({before} -> {after})")
    return text[:100]


def check_spawn_crash(bed: Bed):
    error, spawned = bed.tuicd.mcp_call("agent", {"action": "spawn", "agent_type": "claude", "binary_path": "/bin/false",
                                                  "cwd": str(bed.repo), "prompt": "hello"})
    if error:  # refusing to start it at all is fine as long as nothing runs
        return f"refused: {spawned}"
    session = spawned["session_id"]
    answer = bed.tuicd.mcp("session", {"action": "wait", "session_id": session, "until": "exited", "timeout_ms": 15000})
    check(answer.get("met"), f"the crashed agent's session did not exit: {answer}")
    info = bed.tuicd.request("GET", f"/sessions/{session}")
    state = info["state"]
    check(info.get("exited") is True, f"the session does not say exited: {info}")
    check(state.get("agent_state") not in ("working", "starting", "awaiting_input"),
          f"exited (code {info.get('exit_code')}) but its state still says {state.get('agent_state')!r}: {brief(state)}")
    return f"exited with code {info.get('exit_code')}, agent_state {state.get('agent_state')!r}"


# --- Running them ------------------------------------------------------------------------------


def run_cli(results: Results, tuicd: str, cli: str):
    bed = Bed(tuicd)
    try:
        launched = time.monotonic()
        session, _ = bed.launch(cli)
        agent = Agent(bed, cli, session)
        if not results.run(f"{cli} start", check_start, agent, launched):
            if not re.search(agent.facts["ready"], agent.screen()):
                results.fail(f"{cli} (the rest)", "not run: the composer never showed")
                return
        if agent.facts.get("screen_read"):
            results.run(f"{cli} submit one-line", check_submit, agent, PROMPT_ONE_LINE, "one-line")
            if agent.facts.get("multiline"):
                results.run(f"{cli} submit three-line", check_submit_opencode_paste, agent, PROMPT_THREE_LINES,
                            "three-line")
            results.run(f"{cli} submit quotes-unicode", check_submit, agent, PROMPT_SPECIAL, "quotes and unicode")
            results.run(f"{cli} idle latency", check_idle_latency, agent)
            results.run(f"{cli} question", check_question, agent)
            return
        results.run(f"{cli} submit one-line", check_submit, agent, PROMPT_ONE_LINE, "one-line")
        results.run(f"{cli} submit three-line", check_submit, agent, PROMPT_THREE_LINES, "three-line")
        results.run(f"{cli} submit quotes-unicode", check_submit, agent, PROMPT_SPECIAL, "quotes and unicode")
        results.run(f"{cli} submit five back to back", check_back_to_back, agent)
        results.run(f"{cli} idle latency", check_idle_latency, agent)
        results.run(f"{cli} permission + peer message", check_permission, agent)
        if cli == "claude":
            results.run(f"{cli} cancel puts the prompt back", check_cancel_claude, agent)
        else:
            results.run(f"{cli} cancel", check_cancel_other, agent)
    finally:
        bed.close()


def run_spawn(results: Results, tuicd: str, bridge: str, cli: str, bad_input: bool):
    def env(b: Bed) -> dict:
        path = os.pathsep.join([str(Path(bridge).resolve().parent), os.environ.get("PATH", "")])
        return b.spec(cli)["env"] | {"PATH": path}

    bed = Bed(tuicd, env=env)
    try:
        results.run(f"{cli} spawn + MCP session tool", check_spawn, bed, cli, BIN / cli)
        if cli == "claude":
            results.run("claude channel off: the push falls back to typing", check_channel_off_fallback, bed)
        if bad_input:
            results.run("spawn a missing binary", check_spawn_missing_binary, bed)
            results.run("spawn a CLI that crashes at start", check_spawn_crash, bed)
    finally:
        bed.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tuicd", required=True)
    parser.add_argument("--bridge", required=True)
    parser.add_argument("--cli", action="append", choices=sorted(CLIS))
    args = parser.parse_args()
    tuicd = str(Path(args.tuicd).resolve())
    clis = args.cli or list(CLIS)
    results = Results()
    started = time.monotonic()
    for cli in clis:
        try:
            run_cli(results, tuicd, cli)
        except Exception as e:
            results.fail(f"{cli} bed", f"{type(e).__name__}: {e}")
    for cli in clis:
        if CLIS[cli]["spawn_tool"]:
            try:
                run_spawn(results, tuicd, args.bridge, cli, bad_input=cli == clis[0])
            except Exception as e:
                results.fail(f"{cli} spawn bed", f"{type(e).__name__}: {e}")
    if "claude" in clis:
        # Claude Code with its channels on (channels.py: GrowthBook on, the flag cached).
        import channels

        try:
            bed = channels.make_bed(tuicd, args.bridge)
            try:
                results.run("claude channel push into a working turn", channels.check_channel_push, bed)
            finally:
                bed.close()
        except Exception as e:
            results.fail("claude channel bed", f"{type(e).__name__}: {e}")
    print(f"({time.monotonic() - started:.0f} s)", file=sys.stderr)
    print(f"{results.passed} passed, {results.failed} failed")
    sys.exit(1 if results.failed else 0)


if __name__ == "__main__":
    main()

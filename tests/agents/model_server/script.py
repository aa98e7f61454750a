"""What the scripted model answers: decided from directives written inside the prompt itself.

Every wire protocol (anthropic.py, responses.py, chat.py, gemini.py) extracts the same facts from
its request body (`Request`) and asks `decide` for one `Action`, then encodes it in its own wire
form. The directives let a test say what the model does without a second channel, and they
survive every CLI unchanged because they are plain text in the prompt:

    [[delay=MS]]        wait MS before the first byte of the answer (default 200)
    [[stream=MS]]       spread the answer's chunks MS apart (default 20)
    [[reply=TEXT]]      answer TEXT (default "Received: <the prompt's first 40 chars>")
    [[shell=CMD]]       call the CLI's own shell tool with CMD (the CLI asks permission)
    [[tool=NAME ARGS]]  call the listed tool whose name ends with NAME, ARGS a JSON object
                        (e.g. [[tool=tuic__session {"action":"list"}]])
    [[after=TEXT]]      once a tool result comes back, answer TEXT (default "Tool finished.")

A prompt holding a `tuic-headless-task: KIND` line (tuicd's headless agent slot, tuicd/src/ai/)
gets that task's fixed JSON answer (`TASK_ANSWERS`: pr-review, changelog, improvements-scan),
with or without tools listed; a `[[reply=TEXT]]` in it still wins, which is how a test gets a
malformed answer (the directive sits in the repository context tuicd sends: a diff, a README).

A request whose last message is a tool result gets the `after` text of the prompt that asked for
the tool. Requests without tools (the CLIs' own title, topic and summary calls) get a short
answer and never a tool call; the log marks them `main: false`.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time

DIRECTIVE = re.compile(r"\[\[(delay|stream|reply|shell|tool|after)=(.*?)\]\]", re.S)
TASK = re.compile(r"^tuic-headless-task: ([a-z-]+)$", re.M)

# The fixed answers to tuicd's headless tasks, in the shapes their prompts ask for. The review's
# finding is on app.py line 1 (the test diffs change app.py); the changelog names PR 40 (the stub
# gh's merged PR) and comes in a ```json fence, as models often write it.
TASK_ANSWERS = {
    "pr-review": json.dumps({
        "summary": "One issue: the greeting is printed at import time.",
        "findings": [{
            "path": "app.py", "line": 1, "severity": "warning",
            "message": "print() at module level runs on import.",
            "suggestion": "Move it under if __name__ == '__main__':",
        }],
    }),
    "changelog": "```json\n" + json.dumps({
        "markdown": "## Features\n\n- Add gears (#40)\n",
        "sections": [{"title": "Features", "entries": [{"text": "Add gears", "prs": [40]}]}],
    }) + "\n```",
    "improvements-scan": json.dumps({
        "summary": "Two refactors would make app.py easier to test.",
        "proposals": [
            {"title": "Extract the greeting into a function", "description": "app.py prints at import time; "
             "a main() function makes it importable and testable.", "files": ["app.py"], "effort": "small"},
            {"title": "Document how to run the app", "description": "README.md does not say how to run app.py.",
             "files": ["README.md"], "effort": "small"},
        ],
    }),
}


@dataclasses.dataclass
class Request:
    """What every protocol module extracts from a request."""

    protocol: str
    path: str
    model: str
    stream: bool
    # The text of the last user message, with the CLI's own reminder blocks removed.
    prompt: str
    # The prompt of the user message that started this exchange (for tool follow-ups).
    first_prompt: str
    last_is_tool_result: bool
    tool_result_text: str
    tool_names: list[str]
    system_head: str

    def log_record(self) -> dict:
        record = dataclasses.asdict(self)
        record["main"] = bool(self.tool_names)
        record["time"] = time.time()
        del record["tool_names"]
        record["tools"] = len(self.tool_names)
        record["tool_names_head"] = self.tool_names[:80]
        return record


@dataclasses.dataclass
class Action:
    """One answer: text, or one tool call (name as listed by the CLI, arguments as an object)."""

    delay_ms: int
    chunk_gap_ms: int
    text: str = ""
    tool_name: str | None = None
    tool_args: dict | None = None


def directives(prompt: str) -> dict[str, str]:
    return {key: value for key, value in DIRECTIVE.findall(prompt)}


def strip_directives(prompt: str) -> str:
    return DIRECTIVE.sub("", prompt).strip()


def decide(request: Request, shell_tool: tuple[str, str] | None) -> Action:
    """The answer to `request`. `shell_tool` is the protocol's (tool name, command argument)."""
    found = directives(request.first_prompt if request.last_is_tool_result else request.prompt)
    delay = int(found.get("delay", "200"))
    gap = int(found.get("stream", "20"))
    task = TASK.search(request.prompt)
    if task and not request.last_is_tool_result:
        text = found.get("reply") or TASK_ANSWERS.get(task.group(1), f"No scripted answer for task {task.group(1)}.")
        return Action(delay_ms=delay, chunk_gap_ms=gap, text=text)
    if not request.tool_names:
        return Action(delay_ms=0, chunk_gap_ms=0, text="Scripted title")
    if request.last_is_tool_result:
        return Action(delay_ms=delay, chunk_gap_ms=gap, text=found.get("after", "Tool finished."))
    if "shell" in found and shell_tool is not None:
        name, argument = shell_tool
        listed = next((t for t in request.tool_names if t == name), None)
        if listed is not None:
            return Action(delay_ms=delay, chunk_gap_ms=gap, tool_name=listed, tool_args={argument: found["shell"]})
    if "tool" in found:
        suffix, _, raw = found["tool"].strip().partition(" ")
        listed = next((t for t in request.tool_names if t.endswith(suffix)), None)
        if listed is None:
            return Action(delay_ms=delay, chunk_gap_ms=gap, text=f"No listed tool ends with {suffix}.")
        return Action(delay_ms=delay, chunk_gap_ms=gap, tool_name=listed, tool_args=json.loads(raw or "{}"))
    text = found.get("reply") or f"Received: {strip_directives(request.prompt)[:40]}"
    return Action(delay_ms=delay, chunk_gap_ms=gap, text=text)


def chunks(text: str, size: int = 12) -> list[str]:
    """The answer text in stream-sized pieces (never empty: one empty piece for "")."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]

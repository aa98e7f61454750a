"""The Anthropic Messages wire protocol (Claude Code) for the scripted model server; see server.py.

    POST /v1/messages[?beta=true]               SSE when body.stream, else one JSON message
    POST /v1/messages/count_tokens[?beta=true]  {"input_tokens": N} (logged with main: false)

The request's last user message is either a string or a list of content blocks. Claude Code puts
its own context in extra text blocks that start with `<system-reminder>` (and, after a tool call,
next to the tool_result blocks); those are dropped, so `Request.prompt` is what the person typed.
"""

from __future__ import annotations

import json
import time
import uuid

from . import script
from .script import Request

SHELL_TOOL = ("Bash", "command")

# Text blocks Claude Code adds to a user message itself (never typed by the person).
INJECTED_PREFIXES = ("<system-reminder>",)


def _path_only(path: str) -> str:
    return path.split("?", 1)[0].rstrip("/")


def matches(path: str) -> bool:
    return _path_only(path) in ("/v1/messages", "/v1/messages/count_tokens")


def _blocks(content) -> list[dict]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in (content or []) if isinstance(b, dict)]


def _typed_text(content) -> str:
    """The text blocks of one user message the person typed (injected reminders dropped)."""
    texts = []
    for block in _blocks(content):
        if block.get("type") != "text":
            continue
        text = block.get("text", "")
        if text.lstrip().startswith(INJECTED_PREFIXES):
            continue
        texts.append(text)
    return "\n".join(texts)


def _has_tool_result(content) -> bool:
    return any(b.get("type") == "tool_result" for b in _blocks(content))


def _tool_result_text(content) -> str:
    out = []
    for block in _blocks(content):
        if block.get("type") != "tool_result":
            continue
        inner = block.get("content")
        if isinstance(inner, str):
            out.append(inner)
        else:
            out.extend(b.get("text", "") for b in _blocks(inner) if b.get("type") == "text")
    return "\n".join(out)


def _system_head(system) -> str:
    if isinstance(system, str):
        return system[:200]
    texts = [b.get("text", "") for b in _blocks(system) if b.get("type") == "text"]
    return "\n".join(texts)[:200]


def parse(path: str, body: dict) -> Request:
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    users = [m for m in messages if m.get("role") == "user"]
    last = users[-1].get("content") if users else ""
    last_is_tool_result = _has_tool_result(last)
    # The user message that started this exchange: the newest one that is not a tool result.
    first = next((m.get("content") for m in reversed(users) if not _has_tool_result(m.get("content"))), "")
    count_tokens = _path_only(path).endswith("/count_tokens")
    return Request(
        protocol="anthropic",
        path=path,
        model=str(body.get("model", "")),
        stream=bool(body.get("stream")) and not count_tokens,
        prompt=_typed_text(last),
        first_prompt=_typed_text(first),
        last_is_tool_result=last_is_tool_result,
        tool_result_text=_tool_result_text(last) if last_is_tool_result else "",
        # count_tokens is not a turn: leave its tools out so the log says main: false.
        tool_names=[] if count_tokens else [str(t.get("name", "")) for t in body.get("tools") or [] if isinstance(t, dict)],
        system_head=_system_head(body.get("system")),
    )


def _usage(body: dict) -> dict:
    size = len(json.dumps(body.get("messages") or [])) // 4
    return {
        "input_tokens": max(size, 1),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 1,
    }


def answer(handler, request: Request, body: dict) -> None:
    if _path_only(request.path).endswith("/count_tokens"):
        return handler.send_json(200, {"input_tokens": _usage(body)["input_tokens"]})
    action = script.decide(request, SHELL_TOOL)
    if action.delay_ms:
        time.sleep(action.delay_ms / 1000)
    message_id = "msg_" + uuid.uuid4().hex[:24]
    usage = _usage(body)
    if action.tool_name is not None:
        block = {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:24], "name": action.tool_name,
                 "input": action.tool_args or {}}
        stop_reason = "tool_use"
    else:
        block = {"type": "text", "text": action.text}
        stop_reason = "end_turn"
    output_tokens = max(1, len(action.text) // 4) if action.tool_name is None else 20
    if not request.stream:
        usage["output_tokens"] = output_tokens
        return handler.send_json(200, {
            "id": message_id, "type": "message", "role": "assistant", "model": request.model,
            "content": [block], "stop_reason": stop_reason, "stop_sequence": None, "usage": usage,
        })
    handler.start_sse()
    handler.sse({"type": "message_start", "message": {
        "id": message_id, "type": "message", "role": "assistant", "model": request.model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": usage}}, event="message_start")
    handler.sse({"type": "ping"}, event="ping")
    if block["type"] == "tool_use":
        handler.sse({"type": "content_block_start", "index": 0,
                     "content_block": dict(block, input={})}, event="content_block_start")
        handler.sse({"type": "content_block_delta", "index": 0,
                     "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}},
                    event="content_block_delta")
    else:
        handler.sse({"type": "content_block_start", "index": 0,
                     "content_block": {"type": "text", "text": ""}}, event="content_block_start")
        for i, piece in enumerate(script.chunks(action.text)):
            if i and action.chunk_gap_ms:
                time.sleep(action.chunk_gap_ms / 1000)
            handler.sse({"type": "content_block_delta", "index": 0,
                         "delta": {"type": "text_delta", "text": piece}}, event="content_block_delta")
    handler.sse({"type": "content_block_stop", "index": 0}, event="content_block_stop")
    handler.sse({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                 "usage": {"output_tokens": output_tokens}}, event="message_delta")
    handler.sse({"type": "message_stop"}, event="message_stop")

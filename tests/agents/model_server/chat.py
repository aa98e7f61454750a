"""OpenAI Chat Completions for the scripted model server (opencode, aider); see server.py.

    POST /v1/chat/completions   stream=true: SSE `data: {chunk}` frames, `data: [DONE]` last;
                                otherwise one `chat.completion` JSON object
    GET  /v1/models             the model list (one model, or the one the CLI asked for)

Text streams as `delta.content` pieces; a tool call is one `delta.tool_calls` entry (id, function
name, then the arguments in pieces) and `finish_reason: "tool_calls"`. With
`stream_options.include_usage` a last chunk with empty `choices` carries `usage`.

Aider calls no tools: every request it makes is tool-less. Its main requests (a coder's system
prompt starts "Act as an expert") are marked with the pseudo tool name
`TEXT_ONLY` so script.decide answers their directives (reply, delay, stream) and the log marks
them `main: true`; its summary and commit-message requests stay tool-less. Aider appends its
system reminder to the last user message ("\\n\\n" + the reminder, which the system prompt also
holds); that tail is cut so `prompt` is what was typed.
"""

from __future__ import annotations

import json
import time
import uuid

from . import script
from .script import Request

# opencode's shell tool: `bash` with `command` (and a required `description`, filled in below).
SHELL_TOOL = ("bash", "command")

# The pseudo tool name of a tool-less main request (aider); see the module doc.
TEXT_ONLY = "(text-only)"

MODEL = "scripted"


def matches(path: str) -> bool:
    path = path.split("?", 1)[0].rstrip("/")
    return path.endswith("/chat/completions") or path.endswith("/models")


def get(handler) -> None:
    path = handler.path.split("?", 1)[0].rstrip("/")
    if path.endswith("/models"):
        return handler.send_json(200, {"object": "list", "data": [_model(MODEL)]})
    name = path.rsplit("/models/", 1)[-1]
    return handler.send_json(200, _model(name))


def _model(name: str) -> dict:
    return {"id": name, "object": "model", "created": 1700000000, "owned_by": "scripted"}


def _text(content) -> str:
    """The text of a message's content: a string, or a list of parts (text parts joined)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, dict) and part.get("type") in ("text", "input_text"):
                out.append(part.get("text") or "")
        return "".join(out)
    return str(content)


def _user_text(message: dict, system: str) -> str:
    """What the person typed: the message's text without injected blocks."""
    content = message.get("content")
    if isinstance(content, list):
        # Keep the text parts that are not the CLI's own reminders.
        parts = [
            p.get("text") or ""
            for p in content
            if isinstance(p, dict) and p.get("type") == "text" and not _injected(p.get("text") or "")
        ]
        text = "\n".join(parts) if len(parts) > 1 else "".join(parts)
    else:
        text = _text(content)
    return _cut_reminder(text, system)


def _injected(text: str) -> bool:
    stripped = text.strip()
    return stripped.startswith("<system-reminder>") and stripped.endswith("</system-reminder>")


def _cut_reminder(text: str, system: str) -> str:
    """Aider appends "\\n\\n" + its system reminder (also found in its system prompt) to the
    last user message; cut that tail."""
    if not system:
        return text
    at = text.find("\n\n")
    while at != -1:
        tail = text[at + 2 :].strip()
        if len(tail) > 40 and tail in system:
            return text[:at]
        at = text.find("\n\n", at + 1)
    return text


def parse(path: str, body: dict) -> Request:
    messages = body.get("messages") or []
    system = "\n".join(_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer"))
    tools = [
        (t.get("function") or {}).get("name") or t.get("name") or ""
        for t in (body.get("tools") or [])
        if isinstance(t, dict)
    ]
    if not tools and system.startswith("Act as an expert"):
        tools = [TEXT_ONLY]
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    last_user = users[-1] if users else None
    prompt = _user_text(messages[last_user], system) if last_user is not None else ""
    last = messages[-1] if messages else {}
    last_is_tool_result = last.get("role") == "tool"
    tool_result_text = ""
    if last_is_tool_result:
        results = []
        for m in reversed(messages):
            if m.get("role") != "tool":
                break
            results.append(_text(m.get("content")))
        tool_result_text = "\n".join(reversed(results))
    return Request(
        protocol="chat",
        path=path,
        model=str(body.get("model") or ""),
        stream=bool(body.get("stream")),
        prompt=prompt,
        first_prompt=prompt,
        last_is_tool_result=last_is_tool_result,
        tool_result_text=tool_result_text,
        tool_names=tools,
        system_head=system[:200],
    )


def _fill_required(body: dict, name: str, args: dict) -> dict:
    """Required string parameters of the tool's schema that the script left out (opencode's bash
    requires `description`) get a placeholder, so the CLI accepts the call."""
    for tool in body.get("tools") or []:
        fn = tool.get("function") or tool
        if fn.get("name") != name:
            continue
        params = fn.get("parameters") or {}
        props = params.get("properties") or {}
        for key in params.get("required") or []:
            if key not in args and (props.get(key) or {}).get("type") == "string":
                args = {**args, key: "Scripted command"}
    return args


def answer(handler, request: Request, body: dict) -> None:
    action = script.decide(request, SHELL_TOOL)
    if action.tool_name == TEXT_ONLY:  # never offered as a real tool
        action = script.Action(delay_ms=action.delay_ms, chunk_gap_ms=action.chunk_gap_ms, text="No tools here.")
    args = None
    if action.tool_name is not None:
        args = _fill_required(body, action.tool_name, action.tool_args or {})
    ident = "chatcmpl-" + uuid.uuid4().hex[:24]
    call_id = "call_" + uuid.uuid4().hex[:24]
    created = int(time.time())
    model = request.model or MODEL
    prompt_tokens = max(1, len(json.dumps(body.get("messages") or [])) // 4)
    time.sleep(action.delay_ms / 1000)

    if not request.stream:
        message: dict = {"role": "assistant", "content": action.text if action.tool_name is None else None}
        finish = "stop"
        if action.tool_name is not None:
            message["tool_calls"] = [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": action.tool_name, "arguments": json.dumps(args)},
                }
            ]
            finish = "tool_calls"
        completion_tokens = max(1, len(action.text) // 4)
        return handler.send_json(
            200,
            {
                "id": ident,
                "object": "chat.completion",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            },
        )

    def chunk(delta: dict, finish: str | None = None) -> dict:
        return {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }

    handler.start_sse()
    handler.sse(chunk({"role": "assistant", "content": ""}))
    if action.tool_name is None:
        for i, piece in enumerate(script.chunks(action.text)):
            if i:
                time.sleep(action.chunk_gap_ms / 1000)
            handler.sse(chunk({"content": piece}))
        finish = "stop"
        completion_tokens = max(1, len(action.text) // 4)
    else:
        handler.sse(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": call_id,
                            "type": "function",
                            "function": {"name": action.tool_name, "arguments": ""},
                        }
                    ]
                }
            )
        )
        for piece in script.chunks(json.dumps(args), 24):
            handler.sse(chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}))
        finish = "tool_calls"
        completion_tokens = 20
    handler.sse(chunk({}, finish))
    if (body.get("stream_options") or {}).get("include_usage"):
        handler.sse(
            {
                "id": ident,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            }
        )
    handler.sse("[DONE]")

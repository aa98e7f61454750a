"""The OpenAI Responses wire protocol (Codex) for the scripted model server; see server.py.

    POST /v1/responses    SSE (response.created ... response.completed) when body.stream, else one
                          JSON response object

The request's `input` is a list of items: messages ({"type": "message", "role": "user",
"content": [{"type": "input_text", "text": ...}]}), the model's own `function_call` items and the
CLI's `function_call_output` items. Codex sends its context (`<environment_context>`, AGENTS.md
`# AGENTS.md instructions`, `<user_instructions>`, permissions text ...) as separate user or
developer messages, or as extra input_text parts that start with a `<tag>`; those are dropped, so
`Request.prompt` is what the person typed. MCP tools that Codex defers behind its `tool_search`
tool are searched for first, then called (see TOOL_SEARCH).
"""

from __future__ import annotations

import json
import re
import shlex
import time
import uuid

from . import script
from .script import Request

# Codex 0.171's shell tool with gpt-5.5 (see the `tools` of its requests): `exec_command` with a
# `cmd` string. `answer` adds sandbox_permissions = "require_escalated" (and a justification), as a
# real model does for a command that needs to leave the sandbox, so that Codex (approval_policy
# "on-request") shows its permission dialog. Older Codex versions and other models list `shell`
# with `command` as an argv array; `answer` turns a string into ["bash", "-lc", CMD] for that one.
SHELL_TOOL = ("exec_command", "cmd")

# Codex 0.171 with gpt-5.5 defers MCP tools: they are not in `tools`; a developer message lists
# "Deferred tool namespaces: - mcp__tuic ..." and `tools` has {"type": "tool_search", "execution":
# "client", parameters {query, limit}}. So a [[tool=NAME ...]] whose NAME no listed tool ends with,
# while tool_search is listed, is answered in two steps: first a `tool_search_call` output item
# ({"execution": "client", "arguments": {"query": NAME with _ as spaces, "limit": 8}}); Codex runs
# the search itself and sends back a `tool_search_output` item whose `tools` are namespaces
# ({"type": "namespace", "name": "mcp__tuic", "tools": [{"type": "function", "name": "session",
# ...}]}), `tools` unchanged. Those count as listed as "<namespace>__<name>" (mcp__tuic__session),
# and the call goes out as a function_call with name "session" and namespace "mcp__tuic"; its
# result comes back as a plain function_call_output. One search per prompt: if the tool is still
# missing after it, the answer is script.py's "No listed tool ends with NAME.".
TOOL_SEARCH = "tool_search"
JUSTIFICATION = "Run the scripted shell command?"

# Text Codex adds as user-role content itself (never typed by the person).
_INJECTED = re.compile(
    r"^\s*(<environment_context>|<user_instructions>|<user_shell_command>|<turn_aborted>|"
    r"<permissions instructions>|<collaboration_mode>|<skill>|<apps_instructions>|<plugins>|"
    r"<subagent_notification>|<personality_spec>|<model_switch>|<realtime_conversation>|"
    r"<INSTRUCTIONS>|# AGENTS\.md instructions for )"
)

TOOL_OUTPUT_TYPES = ("function_call_output", "custom_tool_call_output", "local_shell_call_output",
                     "mcp_tool_call_output")


def _path_only(path: str) -> str:
    return path.split("?", 1)[0].rstrip("/")


def matches(path: str) -> bool:
    # Only the Responses endpoint: GET /v1/models is left to chat.py (opencode/aider need a real
    # list; Codex 0.171 with a custom provider never asked for one).
    return _path_only(path) in ("/v1/responses", "/responses")


def _items(body: dict) -> list[dict]:
    raw = body.get("input")
    if isinstance(raw, str):
        return [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": raw}]}]
    return [i for i in raw or [] if isinstance(i, dict)]


def _is_user_message(item: dict) -> bool:
    return item.get("role") == "user" and item.get("type", "message") == "message"


def _typed_text(item: dict) -> str:
    content = item.get("content")
    if isinstance(content, str):
        parts = [content]
    else:
        parts = [p.get("text", "") for p in content or [] if isinstance(p, dict)
                 and p.get("type") in ("input_text", "text")]
    return "\n".join(p for p in parts if not _INJECTED.match(p))


def _output_text(item: dict) -> str:
    out = item.get("output")
    if isinstance(out, str):
        return out
    if isinstance(out, dict):
        return str(out.get("content") or out.get("output") or json.dumps(out))
    if isinstance(out, list):
        return "\n".join(p.get("text", "") for p in out if isinstance(p, dict))
    return ""


def _tool_name(tool: dict) -> str:
    if tool.get("name"):
        return str(tool["name"])
    if tool.get("type") == "function" and isinstance(tool.get("function"), dict):
        return str(tool["function"].get("name", ""))
    return str(tool.get("type", ""))


def _this_turn(items: list[dict]) -> list[dict]:
    """The items after the last message the person typed."""
    last = max((n for n, i in enumerate(items) if _is_user_message(i) and _typed_text(i)), default=-1)
    return items[last + 1:]


def _searched(items: list[dict]) -> dict[str, tuple[str, str]]:
    """The tools tool_search outputs exposed since the last typed prompt (see TOOL_SEARCH):
    {"<namespace>__<name>": (namespace, name)} (a tool outside a namespace: ("", name))."""
    found: dict[str, tuple[str, str]] = {}
    for item in _this_turn(items):
        if item.get("type") != "tool_search_output":
            continue
        for tool in item.get("tools") or []:
            if not isinstance(tool, dict):
                continue
            if tool.get("type") == "namespace":
                for sub in tool.get("tools") or []:
                    if isinstance(sub, dict) and sub.get("name"):
                        found[f"{tool.get('name')}__{sub['name']}"] = (str(tool.get("name")), str(sub["name"]))
            elif tool.get("name"):
                found[str(tool["name"])] = ("", str(tool["name"]))
    return found


def parse(path: str, body: dict) -> Request:
    items = _items(body)
    # The person's messages: user messages with some typed (non-injected) text.
    typed = [_typed_text(i) for i in items if _is_user_message(i)]
    typed = [t for t in typed if t]
    last_real = next((i for i in reversed(items) if i.get("type") not in ("reasoning",)), {})
    # (A tool_search_output only exposes tools, the step before the call: not a tool's result.)
    last_is_tool_result = last_real.get("type") in TOOL_OUTPUT_TYPES
    prompt = typed[-1] if typed else ""
    return Request(
        protocol="responses",
        path=path,
        model=str(body.get("model", "")),
        stream=bool(body.get("stream")),
        prompt=prompt,
        first_prompt=prompt,
        last_is_tool_result=last_is_tool_result,
        tool_result_text=_output_text(last_real) if last_is_tool_result else "",
        # A request with a JSON output schema is Codex's thread-title request (it still lists
        # apply_patch): not a turn, so no tools, and the log says main: false.
        tool_names=[] if _output_schema(body) is not None else
        [_tool_name(t) for t in body.get("tools") or [] if isinstance(t, dict)] + list(_searched(items)),
        system_head=str(body.get("instructions") or "")[:200],
    )


def _usage(body: dict, output_tokens: int) -> dict:
    size = max(len(json.dumps(body.get("input") or [])) // 4, 1)
    return {
        "input_tokens": size,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": size + output_tokens,
    }


def _shell_args(name: str, tool_args: dict) -> dict:
    if name == "shell" and isinstance(tool_args.get("command"), str):
        return dict(tool_args, command=["bash", "-lc", tool_args["command"]])
    if name in ("exec_command", "shell", "shell_command"):
        return dict({"sandbox_permissions": "require_escalated", "justification": JUSTIFICATION}, **tool_args)
    return tool_args


def _output_schema(body: dict) -> dict | None:
    """The JSON schema Codex asks the answer to follow (its thread-title request), if any."""
    fmt = (body.get("text") or {}).get("format") or {}
    return fmt.get("schema") if fmt.get("type") == "json_schema" else None


def _search_query(request: Request, body: dict) -> str | None:
    """The tool_search query to answer with before the [[tool=...]] call, or None (see TOOL_SEARCH)."""
    found = script.directives(request.prompt)
    if "tool" not in found or request.last_is_tool_result or TOOL_SEARCH not in request.tool_names:
        return None
    suffix = found["tool"].strip().partition(" ")[0]
    if any(t.endswith(suffix) for t in request.tool_names):
        return None
    if any(i.get("type") == "tool_search_output" for i in _this_turn(_items(body))):
        return None  # searched once already this turn
    return " ".join(p for p in suffix.split("_") if p) or suffix


def answer(handler, request: Request, body: dict) -> None:
    query = _search_query(request, body)
    action = script.decide(request, SHELL_TOOL)
    if query is not None:
        action = script.Action(delay_ms=action.delay_ms, chunk_gap_ms=action.chunk_gap_ms)
    schema = _output_schema(body)
    if schema is not None and action.tool_name is None:
        # The title request: its answer must be JSON of that schema ({"title": ...}).
        props = schema.get("properties") or {}
        action.text = json.dumps({key: action.text for key in props} or {"title": action.text})
    if action.delay_ms:
        time.sleep(action.delay_ms / 1000)
    response_id = "resp_" + uuid.uuid4().hex[:24]
    item_id = ("fc_" if action.tool_name is not None else "msg_") + uuid.uuid4().hex[:24]
    if query is not None:
        item = {"id": "tsc_" + uuid.uuid4().hex[:24], "type": "tool_search_call", "status": "completed",
                "call_id": "call_" + uuid.uuid4().hex[:24], "execution": "client",
                "arguments": {"query": query, "limit": 8}}
        output_tokens = 10
    elif action.tool_name is not None:
        args = action.tool_args or {}
        args = _shell_args(action.tool_name, args)
        arguments = json.dumps(args, ensure_ascii=False)
        item = {"id": item_id, "type": "function_call", "status": "completed",
                "call_id": "call_" + uuid.uuid4().hex[:24], "name": action.tool_name, "arguments": arguments}
        namespace, name = _searched(_items(body)).get(action.tool_name, ("", action.tool_name))
        if namespace:  # a deferred tool that tool_search exposed: its own name in its namespace
            item.update(name=name, namespace=namespace)
        output_tokens = 20
    else:
        item = {"id": item_id, "type": "message", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": action.text, "annotations": []}]}
        output_tokens = max(1, len(action.text) // 4)
    base = {"id": response_id, "object": "response", "created_at": int(time.time()), "model": request.model,
            "parallel_tool_calls": False, "tool_choice": "auto", "tools": [], "error": None,
            "incomplete_details": None, "instructions": None, "metadata": {}, "previous_response_id": None}
    done = dict(base, status="completed", output=[item], usage=_usage(body, output_tokens))
    if not request.stream:
        return handler.send_json(200, done)

    seq = 0

    def event(kind: str, **fields) -> None:
        nonlocal seq
        handler.sse(dict({"type": kind, "sequence_number": seq}, **fields), event=kind)
        seq += 1

    handler.start_sse()
    event("response.created", response=dict(base, status="in_progress", output=[], usage=None))
    event("response.in_progress", response=dict(base, status="in_progress", output=[], usage=None))
    if item["type"] == "tool_search_call":
        event("response.output_item.added", output_index=0, item=dict(item, status="in_progress"))
    elif item["type"] == "function_call":
        event("response.output_item.added", output_index=0,
              item=dict(item, status="in_progress", arguments=""))
        event("response.function_call_arguments.delta", item_id=item_id, output_index=0, delta=item["arguments"])
        event("response.function_call_arguments.done", item_id=item_id, output_index=0,
              arguments=item["arguments"])
    else:
        event("response.output_item.added", output_index=0,
              item=dict(item, status="in_progress", content=[]))
        event("response.content_part.added", item_id=item_id, output_index=0, content_index=0,
              part={"type": "output_text", "text": "", "annotations": []})
        for i, piece in enumerate(script.chunks(action.text)):
            if i and action.chunk_gap_ms:
                time.sleep(action.chunk_gap_ms / 1000)
            event("response.output_text.delta", item_id=item_id, output_index=0, content_index=0, delta=piece)
        event("response.output_text.done", item_id=item_id, output_index=0, content_index=0, text=action.text)
        event("response.content_part.done", item_id=item_id, output_index=0, content_index=0,
              part=item["content"][0])
    event("response.output_item.done", output_index=0, item=item)
    event("response.completed", response=done)

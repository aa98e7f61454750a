"""The Gemini API wire protocol (Gemini CLI) for the scripted model server; see server.py.

    POST /v1beta/models/M:streamGenerateContent?alt=sse   SSE, one `data: GenerateContentResponse` per chunk
    POST /v1beta/models/M:generateContent                 one GenerateContentResponse as JSON
    POST /v1beta/models/M:countTokens                     {"totalTokens": N}
    GET  /v1beta/models[/M]                               a model list / one model

Requests carry `contents` (role user/model, parts of text / functionCall / functionResponse),
`systemInstruction`, `tools: [{functionDeclarations: [...]}]` and `generationConfig`. The CLI's
side calls (model router/classifier, next-speaker check, loop detection, summaries) carry no tools;
those asking for JSON (`generationConfig.responseMimeType == "application/json"` with a
`responseJsonSchema` / `responseSchema`) get a JSON object that fits the schema, the others the
script's short text.
"""

from __future__ import annotations

import json
import re
import time
import uuid

from . import script
from .script import Request

SHELL_TOOL = ("run_shell_command", "command")

PATH = re.compile(r"^/v1(?:beta|alpha|)?/models(?:/([^:?/]+))?(?::([A-Za-z]+))?(?:\?.*)?$")

# What Gemini CLI adds to the prompt the person typed, in parts of its own or around the text:
# the per-session context block and reminder tags. Whole parts that are only such a block are
# dropped; blocks inside a part are cut out.
CONTEXT_BLOCKS = re.compile(
    r"<(session_context|system-reminder|system_reminder|context|environment_context|hook_context)>.*?</\1>\s*",
    re.S,
)


def matches(path: str) -> bool:
    return bool(PATH.match(path))


def _model(path: str) -> tuple[str, str]:
    found = PATH.match(path)
    if not found:
        return "", ""
    return found.group(1) or "", found.group(2) or ""


def _text_of(parts: list[dict]) -> str:
    texts = []
    for part in parts or []:
        text = part.get("text")
        if not isinstance(text, str) or part.get("thought"):
            continue
        cleaned = CONTEXT_BLOCKS.sub("", text)
        if text and not cleaned.strip():
            continue  # a part that is only the CLI's own context
        texts.append(cleaned)
    return "".join(texts)


def _is_tool_result(content: dict) -> bool:
    return any("functionResponse" in part for part in content.get("parts") or [])


def _has_text(content: dict) -> bool:
    return bool(_text_of(content.get("parts") or []).strip())


def _tool_result_text(content: dict) -> str:
    out = []
    for part in content.get("parts") or []:
        response = part.get("functionResponse")
        if response is not None:
            value = response.get("response")
            out.append(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
    return "\n".join(out)


def parse(path: str, body: dict) -> Request:
    model, method = _model(path)
    contents = [c for c in body.get("contents") or [] if isinstance(c, dict)]
    users = [c for c in contents if c.get("role", "user") == "user"]
    last = contents[-1] if contents else {}
    last_is_tool_result = bool(last) and _is_tool_result(last)
    typed = [c for c in users if not _is_tool_result(c) and _has_text(c)]
    prompt = _text_of(typed[-1]["parts"]) if typed else ""
    tool_names = [
        decl.get("name", "")
        for tool in body.get("tools") or []
        for decl in (tool.get("functionDeclarations") or tool.get("function_declarations") or [])
    ]
    system = body.get("systemInstruction") or body.get("system_instruction") or {}
    if isinstance(system, str):
        system_text = system
    else:
        system_text = "".join(p.get("text", "") for p in system.get("parts") or [] if isinstance(p, dict))
    return Request(
        protocol="gemini",
        path=path,
        model=model,
        stream=method == "streamGenerateContent",
        prompt=prompt,
        first_prompt=prompt,
        last_is_tool_result=last_is_tool_result,
        tool_result_text=_tool_result_text(last) if last_is_tool_result else "",
        tool_names=tool_names,
        system_head=system_text[:200],
    )


def _fit(schema, depth: int = 0):
    """A small value that fits a JSON schema (or an OpenAPI-style Gemini schema)."""
    if not isinstance(schema, dict) or depth > 8:
        return None
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return _fit(schema[key][0], depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), kind[0] if kind else None)
    kind = (kind or ("object" if "properties" in schema else "string")).lower()
    if kind == "object":
        props = schema.get("properties") or {}
        return {name: _fit(sub, depth + 1) for name, sub in props.items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    return "Scripted"


def _json_answer(body: dict) -> str | None:
    config = body.get("generationConfig") or body.get("generation_config") or {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema") or config.get("response_schema")
    if config.get("responseMimeType") != "application/json" and schema is None:
        return None
    return json.dumps(_fit(schema) if schema else {}, ensure_ascii=False)


def _usage() -> dict:
    return {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}


def _response(parts: list[dict], finish: bool, response_id: str, model: str) -> dict:
    candidate = {"content": {"role": "model", "parts": parts}, "index": 0}
    out = {"candidates": [candidate], "modelVersion": model or "gemini-2.5-pro", "responseId": response_id}
    if finish:
        candidate["finishReason"] = "STOP"
        out["usageMetadata"] = _usage()
    return out


def answer(handler, request: Request, body: dict) -> None:
    model, method = _model(request.path)
    if method == "countTokens":
        return handler.send_json(200, {"totalTokens": 10})
    action = script.decide(request, SHELL_TOOL)
    if not request.tool_names:
        fitted = _json_answer(body)
        if fitted is not None:
            action = script.Action(delay_ms=0, chunk_gap_ms=0, text=fitted)
    response_id = uuid.uuid4().hex[:20]
    if action.delay_ms:
        time.sleep(action.delay_ms / 1000)
    if action.tool_name is not None:
        call = {"functionCall": {"name": action.tool_name, "args": action.tool_args or {}}}
        pieces = [[call]]
    else:
        pieces = [[{"text": piece}] for piece in script.chunks(action.text)]
    if not request.stream:
        parts = [p for piece in pieces for p in piece]
        if action.tool_name is None:
            parts = [{"text": action.text}]
        return handler.send_json(200, _response(parts, True, response_id, model))
    handler.start_sse()
    for index, piece in enumerate(pieces):
        if index and action.chunk_gap_ms:
            time.sleep(action.chunk_gap_ms / 1000)
        handler.sse(_response(piece, index == len(pieces) - 1, response_id, model))


def get(handler) -> None:
    model, _ = _model(handler.path)
    if model:
        return handler.send_json(200, _model_info(model))
    names = ["gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite", "gemini-3-pro-preview", "gemini-3-flash-preview"]
    handler.send_json(200, {"models": [_model_info(n) for n in names]})


def _model_info(name: str) -> dict:
    return {
        "name": f"models/{name}",
        "displayName": name,
        "inputTokenLimit": 1048576,
        "outputTokenLimit": 65536,
        "supportedGenerationMethods": ["generateContent", "countTokens", "streamGenerateContent"],
    }

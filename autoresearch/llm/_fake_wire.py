"""Wire codecs of the fake server: decode requests to neutral records, encode replies.

The reverse direction of what the providers do, written against the public API references
of OpenAI Chat Completions and Anthropic Messages (not against our provider code).
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from autoresearch.llm.messages import LLMResponse, Message, ModelStopReason, ToolCall, ToolChoice, ToolResult
from skills.tooldef import ToolDef


def _text(content: Any) -> str:
    """A content field that is a string or a list of text parts/blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if part.get("type") == "text")


def _choice(value: Any) -> ToolChoice | None:
    if value is None:
        return None
    name = value if isinstance(value, str) else value.get("type")
    return {"auto": ToolChoice.AUTO, "required": ToolChoice.REQUIRED, "any": ToolChoice.REQUIRED}.get(
        name, ToolChoice.NONE
    )


def decode_openai(body: dict[str, Any]) -> tuple[list[Message], list[ToolDef], ToolChoice | None]:
    messages: list[Message] = []
    for m in body.get("messages", []):
        role = m["role"]
        if role == "tool":
            messages.append(Message.tool(ToolResult(tool_call_id=m["tool_call_id"], content=_text(m["content"]))))
        elif role == "assistant":
            calls = [
                ToolCall.from_json(c["function"]["arguments"], name=c["function"]["name"], id=c["id"])
                for c in m.get("tool_calls") or []
            ]
            messages.append(Message.assistant(_text(m.get("content")), calls))
        else:
            messages.append(Message(role="system" if role == "developer" else role, content=_text(m["content"])))
    tools = [
        ToolDef(
            name=t["function"]["name"],
            description=t["function"].get("description", ""),
            parameters=t["function"].get("parameters", {}),
            strict_parameters=t["function"].get("parameters", {}) if t["function"].get("strict") else None,
        )
        for t in body.get("tools", [])
    ]
    return messages, tools, _choice(body.get("tool_choice"))


def decode_anthropic(body: dict[str, Any]) -> tuple[list[Message], list[ToolDef], ToolChoice | None]:
    messages: list[Message] = []
    if body.get("system"):
        messages.append(Message.system(_text(body["system"])))
    for m in body.get("messages", []):
        blocks = [{"type": "text", "text": m["content"]}] if isinstance(m["content"], str) else m["content"]
        results = [
            ToolResult(tool_call_id=b["tool_use_id"], content=_text(b.get("content")), is_error=bool(b.get("is_error")))
            for b in blocks
            if b["type"] == "tool_result"
        ]
        if results:
            messages.append(Message.tool(*results))
        text = _text([b for b in blocks if b["type"] == "text"])
        if m["role"] == "assistant":
            calls = [
                ToolCall(id=b["id"], name=b["name"], arguments=b["input"]) for b in blocks if b["type"] == "tool_use"
            ]
            messages.append(Message.assistant(text, calls))
        elif text:
            messages.append(Message.user(text))
    tools = [
        ToolDef(
            name=t["name"],
            description=t.get("description", ""),
            parameters=t["input_schema"],
            strict_parameters=t["input_schema"] if t.get("strict") else None,
        )
        for t in body.get("tools", [])
    ]
    return messages, tools, _choice(body.get("tool_choice"))


def _corrupt(raw: str) -> str:
    """Arguments cut in half: no longer valid JSON."""
    return raw[: max(1, len(raw) // 2)]


_OPENAI_FINISH = {
    ModelStopReason.TOOL_USE: "tool_calls",
    ModelStopReason.MAX_TOKENS: "length",
    ModelStopReason.REFUSAL: "content_filter",
}


def encode_openai(response: LLMResponse, *, malformed: bool) -> dict[str, Any]:
    m = response.message
    calls = []
    for c in m.tool_calls:
        arguments = _corrupt(c.arguments_json()) if malformed else c.arguments_json()
        calls.append({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": arguments}})
    message: dict[str, Any] = {"role": "assistant", "content": m.content or None}
    if calls:
        message["tool_calls"] = calls
    u = response.usage
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": response.model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": _OPENAI_FINISH.get(response.stop_reason, "stop"),
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": u.input_tokens,
            "completion_tokens": u.output_tokens,
            "total_tokens": u.input_tokens + u.output_tokens,
        },
    }


def encode_anthropic(response: LLMResponse, *, malformed: bool) -> dict[str, Any]:
    m = response.message
    content: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content else []
    for c in m.tool_calls:
        # The real API always sends an object; a broken server could send anything.
        args: Any = _corrupt(c.arguments_json()) if malformed else json.loads(c.arguments_json())
        content.append({"type": "tool_use", "id": c.id, "name": c.name, "input": args})
    stop = response.stop_reason.value if response.stop_reason is not ModelStopReason.OTHER else "end_turn"
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": response.model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": response.usage.input_tokens, "output_tokens": response.usage.output_tokens},
    }


_ANTHROPIC_ERROR_TYPE = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def error_body(wire: str, status: int, message: str) -> dict[str, Any]:
    """An error body in the wire's format ("openai" or "anthropic")."""
    if wire == "anthropic":
        kind = _ANTHROPIC_ERROR_TYPE.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    kind = "rate_limit_exceeded" if status == 429 else ("server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "code": None, "param": None}}

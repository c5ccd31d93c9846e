"""Saving and restoring a conversation as JSON, and what can be derived from one.

Which deferred tools the model has seen is not stored: it is rebuilt from the transcript (the
schemas tool_search returned, and deferred tools called by name).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable
from typing import Any

from agent_ext.core import ImagePart, Part, Registry, TextPart
from agent_ext.models import Message, ToolCall, ToolReturn

FORMAT = "agent_ext.transcript/1"


def _part(p: Part) -> dict[str, Any]:
    if isinstance(p, TextPart):
        return {"type": "text", "text": p.text}
    return {"type": "image", "mime_type": p.mime_type, "data": p.base64}


def _unpart(d: dict[str, Any]) -> Part:
    if d["type"] == "text":
        return TextPart(d["text"])
    if d["type"] == "image":
        return ImagePart(base64.b64decode(d["data"]), d.get("mime_type", "image/png"))
    raise ValueError(f"unknown part type {d['type']!r}")


def dump_messages(messages: Iterable[Message]) -> dict[str, Any]:
    """A JSON-ready document of the conversation."""
    return {"format": FORMAT, "messages": [
        {
            "role": m.role,
            "parts": [_part(p) for p in m.parts],
            "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments}
                           for c in m.tool_calls],
            "tool_returns": [{"call_id": r.call_id, "name": r.name, "is_error": r.is_error,
                              "content": [_part(p) for p in r.content]} for r in m.tool_returns],
            "provider_data": m.provider_data,
        }
        for m in messages
    ]}


def load_messages(doc: dict[str, Any]) -> list[Message]:
    """The conversation from ``dump_messages`` output; raises ValueError saying what is wrong."""
    if doc.get("format") != FORMAT:
        raise ValueError(f"not an agent_ext transcript (format {doc.get('format')!r}, "
                         f"expected {FORMAT!r})")
    out = []
    for i, m in enumerate(doc.get("messages", [])):
        try:
            out.append(Message(
                role=m["role"],
                parts=tuple(_unpart(p) for p in m.get("parts", [])),
                tool_calls=tuple(ToolCall(c["id"], c["name"], c.get("arguments", "{}"))
                                 for c in m.get("tool_calls", [])),
                tool_returns=tuple(
                    ToolReturn(r["call_id"], r["name"], tuple(_unpart(p) for p in r["content"]),
                               bool(r.get("is_error")))
                    for r in m.get("tool_returns", [])),
                provider_data=dict(m.get("provider_data") or {}),
            ))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"transcript message {i} is malformed: {exc!r}") from None
    return out


def dumps(messages: Iterable[Message]) -> str:
    return json.dumps(dump_messages(messages), ensure_ascii=False, indent=1)


_FUNCTION_NAME = re.compile(r'<function>\{"name": "([^"]+)"')


def seen_tools(messages: Iterable[Message]) -> set[str]:
    """Tools whose schema the model received (tool_search results) or that it called."""
    names: set[str] = set()
    for m in messages:
        names.update(c.name for c in m.tool_calls)
        for r in m.tool_returns:
            if r.name == "tool_search" and not r.is_error:
                for p in r.content:
                    if isinstance(p, TextPart):
                        names.update(_FUNCTION_NAME.findall(p.text))
    return names


def restore_reveals(registry: Registry, messages: Iterable[Message]) -> list[str]:
    """Reveal again the deferred tools the transcript shows the model had; returns them."""
    present = [n for n in seen_tools(messages) if n in registry and registry.is_deferred(n)]
    return registry.reveal(sorted(present))


def unanswered_calls(messages: list[Message]) -> list[ToolCall]:
    """Calls of the last assistant message that have no result yet."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m.role == "assistant":
            answered = {r.call_id for later in messages[i + 1:] for r in later.tool_returns}
            return [c for c in m.tool_calls if c.id not in answered]
    return []

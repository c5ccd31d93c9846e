"""Messages API wire format: our messages to Anthropic's content blocks, and stream events back.

Thinking blocks (with their signatures) and redacted thinking come back in the response's
``provider_data["thinking_blocks"]`` and are re-sent first and unchanged in that assistant turn,
as the API requires when thinking is on and tools are used.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agent_ext.core import Part, TextPart, ToolDeclaration

from ._common import field as get
from ._common import plain
from .base import ModelError, ReasoningDelta, StreamItem, TextDelta, ToolCallDelta
from .types import Message, ModelRequest, ModelResponse, ToolCall, Usage

THINKING_TYPES = ("thinking", "redacted_thinking")


def _blocks(parts: Sequence[Part]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for p in parts:
        if isinstance(p, TextPart):
            if p.text:
                out.append({"type": "text", "text": p.text})
        else:
            out.append({"type": "image", "source": {"type": "base64", "media_type": p.mime_type,
                                                    "data": p.base64}})
    return out


def _input(arguments: str) -> Any:
    """A call's arguments as the object the API wants (``{}`` when they were not valid JSON)."""
    try:
        value = json.loads(arguments or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _assistant(msg: Message) -> list[dict[str, Any]]:
    blocks = [plain(b) for b in msg.provider_data.get("thinking_blocks") or ()]
    text = "".join(p.text for p in msg.parts if isinstance(p, TextPart))
    if text:
        blocks.append({"type": "text", "text": text})
    blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": _input(c.arguments)}
               for c in msg.tool_calls]
    return blocks


def _tool_results(msg: Message) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for ret in msg.tool_returns:
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": ret.call_id}
        content = _blocks(ret.content)
        if content:
            block["content"] = content
        if ret.is_error:
            block["is_error"] = True
        out.append(block)
    return out


def to_messages(request: ModelRequest) -> tuple[str, list[dict[str, Any]]]:
    """The system prompt and the conversation, same-role turns merged as the API requires."""
    system = [request.system] if request.system else []
    out: list[dict[str, Any]] = []
    for msg in request.messages:
        if msg.role == "system":
            system.append("\n".join(p.text for p in msg.parts if isinstance(p, TextPart)))
            continue
        role = "assistant" if msg.role == "assistant" else "user"
        if msg.role == "assistant":
            content = _assistant(msg)
        elif msg.role == "tool":
            content = _tool_results(msg)
        else:
            content = _blocks(msg.parts)
        if not content:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"] += content
        else:
            out.append({"role": role, "content": content})
    return "\n\n".join(s for s in system if s), out


def to_tools(tools: Sequence[ToolDeclaration]) -> list[dict[str, Any]]:
    """Tool definitions, each schema sent exactly as declared."""
    return [{"name": t.name, "description": t.description, "input_schema": plain(t.parameters)}
            for t in tools]


def _tokens(usage: Any) -> int | None:
    """All input tokens: fresh, written to the cache and read from it."""
    counts = [get(usage, k) for k in ("input_tokens", "cache_creation_input_tokens",
                                      "cache_read_input_tokens")]
    if counts[0] is None:
        return None
    return sum(int(c or 0) for c in counts)


class EventAssembler:
    """Turns stream events into deltas and, once ``message_stop`` came, one ModelResponse."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.blocks: dict[int, dict[str, Any]] = {}
        self.json: dict[int, str] = {}
        self.tool_index: dict[int, int] = {}
        self.input_tokens = 0
        self.output_tokens = 0
        self.stop_reason = ""
        self.done = False

    def feed(self, event: Any) -> list[StreamItem]:
        kind = get(event, "type")
        if kind == "message_start":
            usage = get(get(event, "message"), "usage")
            self.input_tokens = _tokens(usage) or 0
            self.output_tokens = int(get(usage, "output_tokens") or 0)
        elif kind == "content_block_start":
            return self._start(int(get(event, "index") or 0), get(event, "content_block"))
        elif kind == "content_block_delta":
            return self._delta(int(get(event, "index") or 0), get(event, "delta"))
        elif kind == "message_delta":
            self.stop_reason = str(get(get(event, "delta"), "stop_reason") or self.stop_reason)
            usage = get(event, "usage")
            self.output_tokens = int(get(usage, "output_tokens") or self.output_tokens)
            self.input_tokens = _tokens(usage) or self.input_tokens
        elif kind == "message_stop":
            self.done = True
        return []

    def _start(self, index: int, block: Any) -> list[StreamItem]:
        kind = get(block, "type")
        if kind == "text":
            self.blocks[index] = {"type": "text", "text": str(get(block, "text") or "")}
            text = self.blocks[index]["text"]
            return [TextDelta(text)] if text else []
        if kind == "thinking":
            self.blocks[index] = {"type": "thinking", "thinking": str(get(block, "thinking") or ""),
                                  "signature": str(get(block, "signature") or "")}
            text = self.blocks[index]["thinking"]
            return [ReasoningDelta(text)] if text else []
        if kind == "redacted_thinking":
            self.blocks[index] = {"type": "redacted_thinking", "data": get(block, "data")}
        elif kind == "tool_use":
            self.tool_index[index] = len(self.tool_index)
            self.blocks[index] = {"type": "tool_use", "id": str(get(block, "id") or ""),
                                  "name": str(get(block, "name") or ""),
                                  "input": get(block, "input")}
            self.json[index] = ""
            b = self.blocks[index]
            return [ToolCallDelta(self.tool_index[index], b["id"], b["name"], "")]
        return []

    def _delta(self, index: int, delta: Any) -> list[StreamItem]:
        kind = get(delta, "type")
        block = self.blocks.get(index)
        if block is None:
            return []
        if kind == "text_delta" and block["type"] == "text":
            piece = str(get(delta, "text") or "")
            block["text"] += piece
            return [TextDelta(piece)] if piece else []
        if kind == "thinking_delta" and block["type"] == "thinking":
            piece = str(get(delta, "thinking") or "")
            block["thinking"] += piece
            return [ReasoningDelta(piece)] if piece else []
        if kind == "signature_delta" and block["type"] == "thinking":
            block["signature"] += str(get(delta, "signature") or "")
        elif kind == "input_json_delta" and block["type"] == "tool_use":
            piece = str(get(delta, "partial_json") or "")
            self.json[index] += piece
            return [ToolCallDelta(self.tool_index[index], block["id"], block["name"], piece)]
        return []

    def finish(self) -> ModelResponse:
        """The whole answer; a stream without ``message_stop`` was cut and is an error."""
        if not self.done:
            pending = " in the middle of a tool call" if self.tool_index else ""
            raise ModelError(f"{self.model} stopped answering{pending} before saying it was done "
                             "(the stream ended early); try again.", kind="stream")
        ordered = [self.blocks[i] for i in sorted(self.blocks)]
        calls = []
        for i in sorted(self.tool_index):
            block, raw = self.blocks[i], self.json[i]
            if not raw:
                raw = json.dumps(block["input"], ensure_ascii=False) if block["input"] else "{}"
            calls.append(ToolCall(block["id"], block["name"], raw))
        data: dict[str, Any] = {"stop_reason": self.stop_reason}
        thinking = [b for b in ordered if b["type"] in THINKING_TYPES]
        if thinking:
            data["thinking_blocks"] = thinking
        return ModelResponse(text="".join(b["text"] for b in ordered if b["type"] == "text"),
                             tool_calls=tuple(calls),
                             usage=Usage(self.input_tokens, self.output_tokens),
                             provider_data=data)

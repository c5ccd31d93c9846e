"""Chat Completions wire format: our messages to OpenAI's, and streamed chunks back to ours.

The assembler is forgiving about tool-call deltas because OpenAI-compatible servers differ: some
send a whole call in one chunk, some omit ``index`` or ``id``, some repeat the id and name.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_ext.core import ImagePart, Part, TextPart, ToolDeclaration

from ._common import field as get
from ._common import plain
from .base import ModelError, ReasoningDelta, StreamItem, TextDelta, ToolCallDelta
from .types import Message, ModelRequest, ModelResponse, ToolCall, Usage

REASONING_KEYS = ("reasoning_content", "reasoning")
_CALL_KEYS = {"index", "id", "type", "function"}


def _text(parts: Sequence[Part]) -> str:
    return "\n".join(p.text for p in parts if isinstance(p, TextPart))


def _image(part: ImagePart) -> dict[str, Any]:
    return {"type": "image_url",
            "image_url": {"url": f"data:{part.mime_type};base64,{part.base64}"}}


def _user_content(parts: Sequence[Part]) -> str | list[dict[str, Any]]:
    if all(isinstance(p, TextPart) for p in parts):
        return _text(parts)
    return [{"type": "text", "text": p.text} if isinstance(p, TextPart) else _image(p)
            for p in parts]


def _assistant(msg: Message, origin: str) -> dict[str, Any]:
    """An assistant turn; reasoning and per-call extras only go back to the server that sent
    them (another server may reject fields it does not know)."""
    text = _text(msg.parts)
    out: dict[str, Any] = {"role": "assistant",
                           "content": text if text or not msg.tool_calls else None}
    data = msg.provider_data if msg.provider_data.get("origin", origin) == origin else {}
    extras = data.get("tool_call_extras") or {}
    if msg.tool_calls:
        out["tool_calls"] = [{"id": c.id, "type": "function",
                              "function": {"name": c.name, "arguments": c.arguments},
                              **extras.get(c.id, {})} for c in msg.tool_calls]
    for key in REASONING_KEYS:
        if data.get(key):
            out[key] = data[key]
    return out


def _tool_messages(msg: Message) -> list[dict[str, Any]]:
    """One ``tool`` message per return, then one user message with any images they held."""
    out: list[dict[str, Any]] = []
    images: list[dict[str, Any]] = []
    for ret in msg.tool_returns:
        pics = [p for p in ret.content if isinstance(p, ImagePart)]
        text = _text(ret.content)
        if pics:
            text = (text + "\n" if text else "") + "(the image output follows in the next message)"
            images.append({"type": "text",
                           "text": f"Image output of tool call {ret.call_id} ({ret.name}):"})
            images += [_image(p) for p in pics]
        out.append({"role": "tool", "tool_call_id": ret.call_id, "content": text})
    if images:
        out.append({"role": "user", "content": images})
    return out


def to_messages(request: ModelRequest, origin: str = "") -> list[dict[str, Any]]:
    """The request's conversation as Chat Completions messages, system prompt first.

    ``origin`` is the endpoint URL, matched against the one recorded in each assistant turn.
    """
    out: list[dict[str, Any]] = []
    if request.system:
        out.append({"role": "system", "content": request.system})
    for msg in request.messages:
        if msg.role == "system":
            out.append({"role": "system", "content": _text(msg.parts)})
        elif msg.role == "user":
            out.append({"role": "user", "content": _user_content(msg.parts)})
        elif msg.role == "assistant":
            out.append(_assistant(msg, origin))
        else:
            out += _tool_messages(msg)
    return out


def to_tools(tools: Sequence[ToolDeclaration]) -> list[dict[str, Any]]:
    """Function tools, each schema sent exactly as declared."""
    return [{"type": "function", "function": {"name": t.name, "description": t.description,
                                              "parameters": plain(t.parameters)}}
            for t in tools]


@dataclass
class _Call:
    id: str
    name: str = ""
    arguments: str = ""
    extras: dict[str, Any] = field(default_factory=dict)
    generated: bool = False


class ChunkAssembler:
    """Turns streamed chunks into deltas and, at the end, one ModelResponse."""

    def __init__(self, model: str, origin: str = "") -> None:
        self.model = model
        self.origin = origin
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.reasoning_key = ""
        self.calls: list[_Call] = []
        self._by_index: dict[int, int] = {}
        self._salt = secrets.token_hex(4)
        self.usage = Usage()
        self.finish_reason = ""

    def feed(self, chunk: Any) -> list[StreamItem]:
        """The deltas in one chunk (an SDK object or a dict)."""
        usage = get(chunk, "usage")
        if usage is not None:
            self.usage = Usage(int(get(usage, "prompt_tokens") or 0),
                               int(get(usage, "completion_tokens") or 0))
        out: list[StreamItem] = []
        for choice in get(chunk, "choices") or ():
            if get(choice, "index") not in (None, 0):
                continue
            delta = get(choice, "delta")
            out += self._reasoning(delta)
            content = get(delta, "content")
            if isinstance(content, list):
                content = "".join(str(get(p, "text") or "") for p in content)
            if content:
                self.text.append(content)
                out.append(TextDelta(content))
            for call in get(delta, "tool_calls") or ():
                out.append(self._call(call))
            if get(choice, "finish_reason"):
                self.finish_reason = str(get(choice, "finish_reason"))
        return out

    def _reasoning(self, delta: Any) -> list[StreamItem]:
        for key in REASONING_KEYS:
            piece = get(delta, key)
            if isinstance(piece, str) and piece:
                self.reasoning_key = self.reasoning_key or key
                self.reasoning.append(piece)
                return [ReasoningDelta(piece)]
        return []

    def _slot(self, index: Any, call_id: str, name: str) -> int:
        """Which call a delta continues; a new one when nothing matches."""
        for n, c in enumerate(self.calls):
            if call_id and c.id == call_id:
                return n
        if isinstance(index, int) and index in self._by_index:
            call = self.calls[self._by_index[index]]
            if not call_id or call.generated or not call.name:
                if call_id:
                    call.id, call.generated = call_id, False
                return self._by_index[index]
        elif not isinstance(index, int) and self.calls and not call_id:
            last = self.calls[-1]
            if not (name and last.name and last.arguments):
                return len(self.calls) - 1
        self.calls.append(_Call(call_id or f"call_{len(self.calls)}_{self._salt}",
                                generated=not call_id))
        if isinstance(index, int):
            self._by_index[index] = len(self.calls) - 1
        return len(self.calls) - 1

    def _call(self, delta: Any) -> ToolCallDelta:
        fn = get(delta, "function")
        call_id = str(get(delta, "id") or "")
        name = str(get(fn, "name") or "")
        slot = self._slot(get(delta, "index"), call_id, name)
        call = self.calls[slot]
        if name and name != call.name:
            call.name += name
        args = get(fn, "arguments")
        if args is not None and not isinstance(args, str):
            args = json.dumps(args, ensure_ascii=False)
        call.arguments += args or ""
        extra = get(delta, "model_extra") if not isinstance(delta, dict) else {
            k: v for k, v in delta.items() if k not in _CALL_KEYS}
        call.extras.update({k: v for k, v in (extra or {}).items() if v is not None})
        return ToolCallDelta(slot, call.id, call.name or None, args or "")

    def finish(self) -> ModelResponse:
        """The whole answer; a stream that never said it was finished is an error."""
        if not self.finish_reason:
            pending = " in the middle of a tool call" if self.calls else ""
            raise ModelError(f"{self.model} stopped answering{pending} before saying it was done "
                             "(the stream ended early); try again.", kind="stream")
        data: dict[str, Any] = {"finish_reason": self.finish_reason}
        if self.origin:
            data["origin"] = self.origin
        if self.reasoning:
            data[self.reasoning_key] = "".join(self.reasoning)
        extras = {c.id: c.extras for c in self.calls if c.extras}
        if extras:
            data["tool_call_extras"] = extras
        calls = tuple(ToolCall(c.id, c.name, c.arguments or "{}") for c in self.calls)
        return ModelResponse(text="".join(self.text), tool_calls=calls, usage=self.usage,
                             provider_data=data)

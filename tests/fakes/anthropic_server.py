"""A fake Anthropic Messages server, and builders for its streamed replies.

    with FakeAnthropic([text_reply("hi", thinking="let me see")]) as srv:
        model = AnthropicModel("claude-fake", base_url=srv.base_url, api_key="test-key")
        ...
        srv.requests[0].body["messages"]

The low-level builders (``message_start``, ``block_start``, ``block_delta`` ...) make one event
each, for streams the high-level ``text_reply`` / ``tool_reply`` do not cover.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ._server import SSE, FakeServer, Recorded, Reply, Status

CallSpec = tuple[str, str, str | Mapping[str, Any]]


class FakeAnthropic(FakeServer):
    """Serves ``/v1/messages`` from a script; ``base_url`` is the server root, as the SDK wants."""

    def __init__(self, script: Iterable[Reply] = ()) -> None:
        super().__init__(script)

    def encode(self, event: Any) -> bytes:
        return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()

    def exhausted(self, request: Recorded) -> Status:
        return error(500, "api_error",
                     f"the fake server has no reply scripted for request #{len(self.requests)}")


def message_start(input_tokens: int = 10, *, cache_read: int = 0,
                  cache_creation: int = 0) -> dict[str, Any]:
    return {"type": "message_start", "message": {
        "id": "msg_fake", "type": "message", "role": "assistant", "model": "claude-fake",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": 1,
                  "cache_read_input_tokens": cache_read,
                  "cache_creation_input_tokens": cache_creation}}}


def block_start(index: int, block: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": dict(block)}


def block_delta(index: int, delta: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": dict(delta)}


def block_stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def message_delta(stop_reason: str = "end_turn", output_tokens: int = 5) -> dict[str, Any]:
    return {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens}}


def message_stop() -> dict[str, Any]:
    return {"type": "message_stop"}


def _split(text: str, pieces: int) -> list[str]:
    size = max(1, -(-len(text) // max(1, pieces)))
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def thinking_events(index: int, thinking: str, signature: str,
                    pieces: int = 2) -> list[dict[str, Any]]:
    """A thinking block streamed in ``pieces`` and signed."""
    return [block_start(index, {"type": "thinking", "thinking": "", "signature": ""}),
            *(block_delta(index, {"type": "thinking_delta", "thinking": p})
              for p in _split(thinking, pieces)),
            block_delta(index, {"type": "signature_delta", "signature": signature}),
            block_stop(index)]


def text_events(index: int, text: str, pieces: int = 3) -> list[dict[str, Any]]:
    return [block_start(index, {"type": "text", "text": ""}),
            *(block_delta(index, {"type": "text_delta", "text": p}) for p in _split(text, pieces)),
            block_stop(index)]


def tool_events(index: int, call_id: str, name: str, args: str | Mapping[str, Any],
                pieces: int = 3) -> list[dict[str, Any]]:
    raw = args if isinstance(args, str) else json.dumps(args)
    return [block_start(index, {"type": "tool_use", "id": call_id, "name": name, "input": {}}),
            *(block_delta(index, {"type": "input_json_delta", "partial_json": p})
              for p in _split(raw, pieces)),
            block_stop(index)]


def _reply(blocks: list[list[dict[str, Any]]], stop_reason: str,
           usage: tuple[int, int]) -> SSE:
    events = [message_start(usage[0])]
    for block in blocks:
        events += block
    return SSE([*events, message_delta(stop_reason, usage[1]), message_stop()])


def _thinking(thinking: str | None, signature: str, redacted: str | None
              ) -> list[list[dict[str, Any]]]:
    blocks = []
    if thinking is not None:
        blocks.append(thinking_events(0, thinking, signature))
    if redacted is not None:
        n = len(blocks)
        blocks.append([block_start(n, {"type": "redacted_thinking", "data": redacted}),
                       block_stop(n)])
    return blocks


def text_reply(text: str, *, thinking: str | None = None, signature: str = "sig-abc",
               redacted: str | None = None, pieces: int = 3,
               usage: tuple[int, int] = (10, 5), stop_reason: str = "end_turn") -> SSE:
    """A streamed text answer, optionally after a signed thinking block and a redacted one."""
    blocks = _thinking(thinking, signature, redacted)
    blocks.append(text_events(len(blocks), text, pieces))
    return _reply(blocks, stop_reason, usage)


def tool_reply(*calls: CallSpec, text: str = "", thinking: str | None = None,
               signature: str = "sig-abc", redacted: str | None = None, pieces: int = 3,
               usage: tuple[int, int] = (10, 5)) -> SSE:
    """Streamed ``tool_use`` blocks ``(id, name, input)``, after optional thinking and text."""
    blocks = _thinking(thinking, signature, redacted)
    if text:
        blocks.append(text_events(len(blocks), text, pieces))
    for call_id, name, args in calls:
        blocks.append(tool_events(len(blocks), call_id, name, args, pieces))
    return _reply(blocks, "tool_use", usage)


def error(status: int, type: str, message: str, *,
          headers: Mapping[str, str] | None = None) -> Status:
    """An Anthropic-style error body."""
    return Status(status, {"type": "error", "error": {"type": type, "message": message}},
                  dict(headers or {}))


def error_event(type: str, message: str) -> dict[str, Any]:
    """An ``error`` event sent inside a stream (e.g. ``overloaded_error``)."""
    return {"type": "error", "error": {"type": type, "message": message}}

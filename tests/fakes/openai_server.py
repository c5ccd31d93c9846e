"""A fake OpenAI-compatible Chat Completions server, and builders for its streamed replies.

    with FakeOpenAI([text_reply("hi"), tool_reply(("call_1", "read", {"path": "a"}))]) as srv:
        model = OpenAIChatModel("fake-model", base_url=srv.base_url, api_key="test-key")
        ...
        srv.requests[0].body["messages"]

``chunk`` builds one raw ``chat.completion.chunk`` for the odd shapes real servers send.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ._server import SSE, FakeServer, Recorded, Reply, Status

CallSpec = tuple[str, str, str | Mapping[str, Any]]


class FakeOpenAI(FakeServer):
    """Serves ``/v1/chat/completions`` from a script; ``base_url`` ends in ``/v1``."""

    prefix = "/v1"
    scripted = ("/chat/completions",)

    def __init__(self, script: Iterable[Reply] = (),
                 info: Mapping[str, Status] | None = None) -> None:
        super().__init__(script, info)

    def encode(self, event: Any) -> bytes:
        return f"data: {json.dumps(event)}\n\n".encode()

    def end_marker(self) -> bytes:
        return b"data: [DONE]\n\n"

    def exhausted(self, request: Recorded) -> Status:
        return error(500, f"the fake server has no reply scripted for request "
                          f"#{len(self.requests)}", type="server_error")


def chunk(delta: Mapping[str, Any] | None = None, *, finish_reason: str | None = None,
          usage: tuple[int, int] | None = None, choices: bool = True) -> dict[str, Any]:
    """One ``chat.completion.chunk``; ``choices=False`` gives the usage-only final chunk."""
    out: dict[str, Any] = {"id": "chatcmpl-fake", "object": "chat.completion.chunk",
                           "created": 1700000000, "model": "fake-model",
                           "choices": [{"index": 0, "delta": dict(delta or {}),
                                        "finish_reason": finish_reason}] if choices else []}
    if usage is not None:
        out["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                        "total_tokens": usage[0] + usage[1]}
    return out


def _split(text: str, pieces: int) -> list[str]:
    size = max(1, -(-len(text) // max(1, pieces)))
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def _tail(finish_reason: str, usage: tuple[int, int] | None) -> list[dict[str, Any]]:
    tail = [chunk(finish_reason=finish_reason)]
    if usage is not None:
        tail.append(chunk(usage=usage, choices=False))
    return tail


def text_reply(text: str, *, pieces: int = 3, reasoning: str | None = None,
               reasoning_field: str = "reasoning_content", usage: tuple[int, int] | None = (10, 5),
               finish_reason: str = "stop") -> SSE:
    """A streamed text answer, optionally preceded by reasoning in ``reasoning_field``."""
    events: list[dict[str, Any]] = [chunk({"role": "assistant", "content": ""})]
    if reasoning is not None:
        events += [chunk({reasoning_field: p}) for p in _split(reasoning, pieces)]
    events += [chunk({"content": p}) for p in _split(text, pieces)]
    return SSE(events + _tail(finish_reason, usage))


def tool_reply(*calls: CallSpec, text: str = "", pieces: int = 3, reasoning: str | None = None,
               usage: tuple[int, int] | None = (10, 5)) -> SSE:
    """Streamed tool calls ``(id, name, arguments)``, each call's arguments in ``pieces`` chunks."""
    events: list[dict[str, Any]] = [chunk({"role": "assistant", "content": None})]
    if reasoning is not None:
        events.append(chunk({"reasoning_content": reasoning}))
    if text:
        events += [chunk({"content": p}) for p in _split(text, pieces)]
    for index, (call_id, name, args) in enumerate(calls):
        raw = args if isinstance(args, str) else json.dumps(args)
        events.append(chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                             "function": {"name": name, "arguments": ""}}]}))
        events += [chunk({"tool_calls": [{"index": index, "function": {"arguments": p}}]})
                   for p in _split(raw, pieces)]
    return SSE(events + _tail("tool_calls", usage))


def error(status: int, message: str, *, type: str = "invalid_request_error",
          code: str | None = None, headers: Mapping[str, str] | None = None) -> Status:
    """An OpenAI-style error body."""
    return Status(status, {"error": {"message": message, "type": type, "param": None,
                                     "code": code}}, dict(headers or {}))

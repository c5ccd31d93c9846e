"""The model protocol: send a request, stream back text, reasoning, tool calls and usage."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from .types import ModelRequest, ModelResponse


@dataclass(frozen=True)
class TextDelta:
    """A piece of the assistant's visible text."""

    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    """A piece of reasoning/thinking text (shown collapsed, never sent back as text)."""

    text: str


@dataclass(frozen=True)
class ToolCallDelta:
    """Progress on the ``index``-th tool call of this step (for live display only)."""

    index: int
    id: str | None
    name: str | None
    arguments: str


@dataclass(frozen=True)
class Retrying:
    """A failed attempt about to be retried (for the user to see; not part of the answer)."""

    delay: float
    retry: int
    max_retries: int
    reason: str

    def text(self, model: str) -> str:
        """``model: retrying in 2 s after HTTP 503 (1/4)…``."""
        wait = f"{self.delay:.1f}".rstrip("0").rstrip(".")
        return (f"{model}: retrying in {wait} s after {self.reason} "
                f"({self.retry}/{self.max_retries})…")


StreamItem = TextDelta | ReasoningDelta | ToolCallDelta | Retrying | ModelResponse


@runtime_checkable
class Model(Protocol):
    """A chat model. ``stream`` yields deltas and ends with exactly one ``ModelResponse``."""

    @property
    def name(self) -> str: ...

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]: ...


class ModelError(Exception):
    """A provider failure, as one sentence that says what to do.

    ``kind`` is one of ``auth``, ``rate_limit``, ``network``, ``not_found``, ``bad_request``,
    ``server``, ``context_length``, ``stream`` and decides whether a retry can help.
    """

    RETRYABLE = frozenset({"rate_limit", "server", "network"})

    def __init__(self, message: str, *, kind: str, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status

    @property
    def retryable(self) -> bool:
        return self.kind in self.RETRYABLE


async def complete(model: Model, request: ModelRequest) -> ModelResponse:
    """Consume a stream and return its final response."""
    final: ModelResponse | None = None
    async for item in model.stream(request):
        if isinstance(item, ModelResponse):
            final = item
    if final is None:
        raise ModelError(f"{model.name} ended its answer without a final response; try again.",
                         kind="stream")
    return final

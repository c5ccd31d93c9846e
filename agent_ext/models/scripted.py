"""ScriptedModel: a model that answers from a script. The test double, and the demo's replay."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable, Iterable

from .base import StreamItem, TextDelta
from .types import ModelRequest, ModelResponse, ToolCall

Step = ModelResponse | str | Callable[[ModelRequest], ModelResponse]


class ScriptExhaustedError(RuntimeError):
    """The script has no more responses for a request."""


class ScriptedModel:
    """Answers each request with the next scripted step and records every request.

    A step is a ``ModelResponse``, a plain string (a final text answer) or a function of the
    request (to answer from what the agent sent). With ``fn`` every request goes to the function.
    """

    def __init__(self, steps: Iterable[Step] = (), *,
                 fn: Callable[[ModelRequest], ModelResponse] | None = None,
                 label: str = "scripted") -> None:
        self._steps: list[Step] = list(steps)
        self._fn = fn
        self.label = label
        self.requests: list[ModelRequest] = []

    @property
    def name(self) -> str:
        return self.label

    @property
    def remaining(self) -> int:
        return len(self._steps)

    async def respond(self, request: ModelRequest) -> ModelResponse:
        """The next step's response to ``request``."""
        self.requests.append(request)
        if self._fn is not None:
            return self._fn(request)
        if not self._steps:
            raise ScriptExhaustedError(
                f"{self.label} model has no response left for request #{len(self.requests)}")
        step = self._steps.pop(0)
        if isinstance(step, ModelResponse):
            return step
        if isinstance(step, str):
            return ModelResponse(text=step)
        return step(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        """The next response, its text streamed word by word first."""
        response = await self.respond(request)
        for piece in re.findall(r"\S+\s*|\s+", response.text):
            yield TextDelta(piece)
        yield response


def call(name: str, args: dict[str, object] | str | None = None, *, id: str | None = None,
         text: str = "") -> ModelResponse:
    """A scripted step that asks for one tool call (``id`` defaults to ``call_<name>``)."""
    return ModelResponse(text=text, tool_calls=(ToolCall.of(id or f"call_{name}", name, args),))

"""The typed event stream of a run, and a plain-text renderer for terminals and logs."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from agent_ext.core import ToolResult
from agent_ext.models import ToolCall, Usage
from agent_ext.models.base import ReasoningDelta, TextDelta  # the model's deltas, passed on

from .approval import ApprovalRequest, Decision

if TYPE_CHECKING:
    from .agent import RunResult


__all__ = [
    "ApprovalRequested", "ApprovalResolved", "CallAllowed", "Event", "EventSink", "Notice",
    "PlainTextRenderer", "ReasoningDelta", "RunFinished", "RunStarted", "TextDelta",
    "ToolCallFinished", "ToolCallStarted", "ToolOutput", "UsageUpdated",
]

@dataclass(frozen=True)
class RunStarted:
    prompt: str
    model: str


@dataclass(frozen=True)
class ToolCallStarted:
    call: ToolCall
    description: str


@dataclass(frozen=True)
class ToolOutput:
    """Live output of a running call (e.g. a shell command), throttled by the tool."""

    call_id: str
    text: str


@dataclass(frozen=True)
class ToolCallFinished:
    call: ToolCall
    result: ToolResult
    seconds: float


@dataclass(frozen=True)
class CallAllowed:
    """A call that changes something ran unasked: a mode or a saved rule allowed it."""

    call_id: str
    tool_name: str
    reason: str


@dataclass(frozen=True)
class ApprovalRequested:
    request: ApprovalRequest


@dataclass(frozen=True)
class ApprovalResolved:
    request: ApprovalRequest
    decision: Decision


@dataclass(frozen=True)
class UsageUpdated:
    turn: Usage
    total: Usage
    #: True when the provider gave no usage and the figures are estimates.
    estimated: bool


@dataclass(frozen=True)
class Notice:
    """Something the user should know: a cap hit, a compaction, a retry, a model choice."""

    text: str
    level: str = "info"


@dataclass(frozen=True)
class RunFinished:
    result: RunResult


Event = (RunStarted | TextDelta | ReasoningDelta | ToolCallStarted | ToolOutput
         | ToolCallFinished | CallAllowed | ApprovalRequested | ApprovalResolved | UsageUpdated
         | Notice | RunFinished)
EventSink = Callable[[Event], None]


class PlainTextRenderer:
    """Writes events as readable lines: streamed text inline, one line per tool call."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out if out is not None else sys.stdout
        self._mid_line = False

    def __call__(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self.out.write(event.text)
            self._mid_line = not event.text.endswith("\n")
            return
        if isinstance(event, ReasoningDelta | ToolOutput):
            return
        line = self._line(event)
        if line is None:
            return
        if self._mid_line:
            self.out.write("\n")
            self._mid_line = False
        self.out.write(line + "\n")

    def _line(self, event: Event) -> str | None:
        if isinstance(event, RunStarted):
            return f"[agent_ext · {event.model}]"
        if isinstance(event, ToolCallStarted):
            return f"→ {event.description}"
        if isinstance(event, ToolCallFinished):
            error = event.result.error
            status = f"error ({error.code})" if error else "done"
            line = f"  {event.call.name}: {status} in {event.seconds:.2f}s"
            if error is None:
                return line
            reason = " ".join(error.message.split())
            return f"{line}: {reason if len(reason) <= 160 else reason[:157] + '...'}"
        if isinstance(event, CallAllowed):
            return f"  {event.reason}"
        if isinstance(event, ApprovalRequested):
            return f"? approval needed: {event.request.details.summary} ({event.request.reason})"
        if isinstance(event, ApprovalResolved):
            return f"  decision: {event.decision.outcome}"
        if isinstance(event, Notice):
            return f"[{event.level}] {event.text}"
        if isinstance(event, UsageUpdated):
            mark = "~" if event.estimated else ""
            return (f"  tokens: {mark}{event.total.input_tokens} in, "
                    f"{mark}{event.total.output_tokens} out")
        if isinstance(event, RunFinished):
            return None
        return None

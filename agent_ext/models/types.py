"""Provider-neutral conversation types: what agent_ext sends to and receives from a model."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from agent_ext.core import Part, ToolDeclaration

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolCall:
    """A call the model asked for. ``arguments`` is the raw JSON text the model produced."""

    id: str
    name: str
    arguments: str = "{}"

    @classmethod
    def of(cls, id: str, name: str, args: dict[str, Any] | str | None = None) -> ToolCall:
        text = args if isinstance(args, str) else json.dumps(args or {}, ensure_ascii=False)
        return cls(id=id, name=name, arguments=text)


@dataclass(frozen=True)
class ToolReturn:
    """The answer to one tool call, as the model will see it."""

    call_id: str
    name: str
    content: tuple[Part, ...]
    is_error: bool = False


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input_tokens + other.input_tokens,
                     self.output_tokens + other.output_tokens)


@dataclass(frozen=True)
class Message:
    """One conversation turn. ``provider_data`` carries what a provider needs back untouched
    (reasoning text, thinking signatures)."""

    role: Role
    parts: tuple[Part, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    tool_returns: tuple[ToolReturn, ...] = ()
    provider_data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ModelRequest:
    """Everything a model is sent for one step."""

    messages: tuple[Message, ...]
    tools: tuple[ToolDeclaration, ...]
    system: str = ""
    #: A cap on this step's output, over the model's own (None: the model's default).
    max_output_tokens: int | None = None
    #: The sampling temperature for this step where the model would otherwise decode greedily
    #: by its own default (None: the model's default). A temperature set by the user wins.
    resample_temperature: float | None = None


@dataclass(frozen=True)
class ModelResponse:
    """A finished model step: its text, the calls it asked for, and what it cost."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    provider_data: dict[str, Any] = field(default_factory=dict)

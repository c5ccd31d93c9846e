"""What the loop does with an answer before trusting it: tool calls written as text, cut
answers, the same failing call made again and again, and calls the history keeps as another
(``ToolResult.remembered_as``)."""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from agent_ext.core import Part, Registry, TextPart, ToolResult
from agent_ext.core.result import Content
from agent_ext.models import Message, ModelResponse, ToolCall, ToolReturn
from agent_ext.models import inband as ib

#: Identical failing calls after which the run stops.
REPEAT_STOP = 3
#: The temperature of the one answer after a repeated failing call, for a model that decodes
#: greedily by default: greedy decoding of nearly the same conversation gives the same call a
#: third time, so the model gets one sampled answer, which can differ.
RESAMPLE_TEMPERATURE = 0.7


def resolver(registry: Registry) -> Callable[[str], str | None]:
    """A name (or alias) the model may call, as registered; None for unknown or disabled."""
    def resolve(name: str) -> str | None:
        canonical = registry.resolve(name)
        return canonical if canonical is not None and not registry.is_disabled(canonical) else None
    return resolve


def in_band(response: ModelResponse, resolve: Callable[[str], str | None]
            ) -> tuple[ModelResponse, ib.InBandCalls | None]:
    """``response`` with calls written in its text made proper tool calls (the text that was
    the call dropped), and what was found; unchanged when the text holds no call."""
    if response.tool_calls:
        return response, None
    found = ib.parse(response.text, resolve)
    if found is None or not found.calls:
        return response, None
    if was_cut(response) and len(found.calls) > 1:
        # Calls written until the cap cut the answer off are a run-on: the first was meant.
        found = replace(found, calls=found.calls[:1],
                        left_out=found.left_out + len(found.calls) - 1)
    salt = secrets.token_hex(4)
    calls = tuple(ToolCall.of(f"call_inband_{n}_{salt}", c.name, c.arguments)
                  for n, c in enumerate(found.calls))
    data = {**response.provider_data, "in_band": found.format}
    return replace(response, text=found.prose, tool_calls=calls, provider_data=data), found


def unknown_call_notice(model: str, text: str) -> str | None:
    """A notice when ``text`` is shaped like calls but names no registered tool (it stays
    text: the user should know why nothing ran)."""
    shaped = ib.parse(text, lambda name: name)
    if shaped is None:
        return None
    names = ", ".join(sorted({c.name for c in shaped.calls}))
    return (f"{model} wrote a tool call as text for {names}, which is not one of its tools; "
            "nothing was run and the text is shown as its answer.")


def in_band_notice(model: str, found: ib.InBandCalls) -> str:
    return (f"{model} wrote its tool call as text ({found.format}) instead of a structured call; "
            f"agent_ext read it as {ib.describe(found)} and reads such calls for the rest of "
            'this session (set "inBandTools": "never" in the settings to turn this off).')


def run_on_notice(model: str, found: ib.InBandCalls) -> str:
    kept = len(found.calls)
    return (f"{model} wrote more calls in one answer than it could have meant (it repeated "
            "itself, or wrote calls until its output cap cut it off); agent_ext takes the "
            f"first {kept if kept != 1 else ''}{' calls' if kept != 1 else 'call'} and leaves "
            f"the other {found.left_out} out.")


def was_cut(response: ModelResponse) -> bool:
    """Whether the answer stopped at the output cap (Chat Completions' ``length``, Anthropic's
    ``max_tokens``)."""
    data = response.provider_data
    return data.get("finish_reason") == "length" or data.get("stop_reason") == "max_tokens"


def cut_call(response: ModelResponse, resolve: Callable[[str], str | None]) -> bool:
    """Whether an answer stopped by the output cap ended inside the tool call it meant to make
    (not after complete calls: those are taken, and a higher cap only lengthens a run-on)."""
    if not was_cut(response):
        return False
    if response.tool_calls:
        return True
    found = ib.parse(response.text, resolve)
    if found is not None and found.calls:
        return False  # complete calls came before the cut: those are the answer
    return ib.looks_like_cut_call(response.text, resolve)


@dataclass
class RepeatGuard:
    """Counts identical failing calls (same tool, same arguments) within a run."""

    failures: dict[tuple[str, str], tuple[int, str]] = field(default_factory=dict)
    stopped: str = ""
    #: The tool of a call repeated unchanged in the last batch ("" for none): the next answer
    #: is sampled rather than greedy.
    repeated: str = ""

    def clear(self) -> None:
        self.failures.clear()
        self.stopped = ""
        self.repeated = ""

    def check(self, call: ToolCall, result: ToolResult) -> ToolResult:
        """``result``, with the repeat said plainly when this exact call failed before (a call
        the history keeps as another is not one the model can be told it made)."""
        key = (call.name, _canonical(call.arguments))
        if result.remembered_as is not None:
            return result
        if not result.is_error:
            self.failures.pop(key, None)
            return result
        count, first = self.failures.get(key, (0, result.text))
        count += 1
        self.failures[key] = (count, first)
        if count < 2:
            return result
        self.repeated = call.name
        if count >= REPEAT_STOP:
            self.stopped = (f"stopped: the model made the same failing call to {call.name} "
                            f"{count} times; send another prompt with more guidance to continue")
        if first == result.text:
            # The error already holds what to change; quoting it twice only buries that.
            note = ("You made this exact call already, and it failed the same way then: it "
                    "cannot succeed unchanged. Change the arguments as the error below says, "
                    "or take another approach:\n\n")
        else:
            reason = " ".join(first.split())
            reason = reason if len(reason) <= 300 else reason[:297] + "..."
            note = (f"You made this exact call already, and it failed then with: {reason}\n"
                    "Change the arguments or take another approach; do not repeat it unchanged. "
                    "This time it failed with:\n\n")
        content = result.llm_content
        return replace(result, llm_content=note + content if isinstance(content, str)
                       else [TextPart(note), *content])


def remember(messages: list[Message], answered: list[tuple[ToolCall, ToolResult]]
             ) -> dict[str, ToolReturn]:
    """The returns of calls whose results ask to be remembered as another call, by call id,
    with those calls rewritten in the assistant message that made them (``messages`` is
    changed). An answer whose signed reasoning must be sent back unchanged keeps its calls."""
    wanted = {c.id: r.remembered_as for c, r in answered if r.remembered_as is not None}
    if not wanted:
        return {}
    for at in range(len(messages) - 1, -1, -1):
        message = messages[at]
        if message.role != "assistant" or not wanted.keys() & {c.id for c in message.tool_calls}:
            continue
        if message.provider_data.get("thinking_blocks"):
            return {}
        calls = tuple(ToolCall.of(c.id, wanted[c.id].name,
                                  json.dumps(dict(wanted[c.id].arguments), ensure_ascii=False))
                      if c.id in wanted else c for c in message.tool_calls)
        messages[at] = replace(message, tool_calls=calls)
        return {call_id: ToolReturn(call_id, how.name, _parts(how.content))
                for call_id, how in wanted.items()}
    return {}


def _parts(content: Content) -> tuple[Part, ...]:
    return (TextPart(content),) if isinstance(content, str) else tuple(content)


def _canonical(arguments: str) -> str:
    try:
        value: Any = json.loads(arguments)
    except ValueError:
        return arguments.strip()
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


@dataclass
class ModelTurns:
    """Per-session state of the answer checks: whether in-band reading was announced, the
    window asked, the text held back during the current step, and the repeat counts."""

    in_band_tools: ib.InBandMode | None = None
    window_known: bool = False
    noticed: bool = False
    hold: ib.StreamHold | None = None
    repeats: RepeatGuard = field(default_factory=RepeatGuard)

    def in_band_on(self, model: object) -> bool:
        """Agent option over the model's option; ``auto`` is on for local servers."""
        mode = self.in_band_tools or getattr(model, "in_band_tools", None) or "auto"
        return ib.mode_applies(str(mode), local=bool(getattr(model, "local", False)))

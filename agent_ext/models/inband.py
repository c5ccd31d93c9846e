"""Tool calls written as text: read them back when a model does not use the structured channel.

Small local models, and servers whose chat template cannot emit structured calls, often answer
a request that offered tools with the call as text: ``<tool_call>{...}</tool_call>``, a
```` ```json ```` fence, or a bare ``{"name": ..., "arguments": ...}`` object. ``parse`` finds
such calls, but only for names ``resolve`` knows and only when the text is nothing but the
call(s) plus prose around them; anything else (JSON in an explanation, a JSON answer to a
plain question, a code fence that is not a call) stays text. Pure functions, no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import json_repair

Format = Literal["tool_call tag", "json fence", "bare JSON"]
InBandMode = Literal["auto", "always", "never"]
IN_BAND_MODES: tuple[InBandMode, ...] = ("auto", "always", "never")

_TAG = re.compile(r"<(tool_call|tool_calls|function_call)>\s*(.*?)\s*(?:</\1>|$)",
                  re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)(?:\n[ \t]*```|$)", re.DOTALL)
#: Fence languages that may hold a call; any other fence (python, bash ...) is code, not a call.
_CALL_FENCES = frozenset({"", "json", "json5", "tool_call", "tool_calls", "tool_code",
                          "function_call", "javascript", "js"})
_ARG_KEYS = ("arguments", "parameters", "args", "input")
#: Where a call may start in streamed text (used to hold text back while it might be a call).
_MARKERS = ("<tool_call", "<function_call", "```")


Block = tuple[int, int, str]


@dataclass(frozen=True)
class InBandCall:
    """One call read from text: the registered tool name and its arguments."""

    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class InBandCalls:
    """What ``parse`` found: the calls, their format, the prose left, and where calls were."""

    calls: tuple[InBandCall, ...]
    format: Format
    prose: str
    spans: tuple[tuple[int, int], ...]
    #: Calls left out: where the answer began to repeat itself (``until_repeat``), and the calls
    #: after the first of an answer the output cap cut off.
    left_out: int = 0


def parse(text: str, resolve: Callable[[str], str | None]) -> InBandCalls | None:
    """The tool calls written in ``text``, or None when it should stay text.

    ``resolve`` maps a name the model wrote (a tool name or an alias) to the registered name,
    or None for an unknown name. Every block that looks like a call must be a complete call
    for a known tool; if any is not, nothing is read.
    """
    if not text.strip():
        return None
    fences = _fences(text)
    if fences is None:
        return None
    finders: tuple[tuple[Format, Callable[[str], list[Block]]], ...] = (
        ("tool_call tag", _tags), ("json fence", lambda _: fences), ("bare JSON", _bare))
    for fmt, find in finders:
        blocks = find(text)
        if not blocks:
            continue
        calls: list[InBandCall] = []
        for _, _, body in blocks:
            found = _calls_in(body, resolve)
            if found is None:
                return None
            calls += found
        spans = tuple((start, end) for start, end, _ in blocks)
        kept = until_repeat(calls)
        return InBandCalls(kept, fmt, _prose(text, spans), spans, len(calls) - len(kept))
    return None


def until_repeat(calls: list[InBandCall]) -> tuple[InBandCall, ...]:
    """The calls before the first one that repeats an earlier call of the same answer.

    A small model that loops writes its calls again, and again, until the output cap cuts it
    off; the answer it meant ends where the loop starts.
    """
    seen: set[str] = set()
    for n, call in enumerate(calls):
        key = json.dumps([call.name, call.arguments], sort_keys=True, default=str)
        if key in seen:
            return tuple(calls[:n])
        seen.add(key)
    return tuple(calls)


def looks_like_cut_call(text: str, resolve: Callable[[str], str | None]) -> bool:
    """Whether ``text`` ends inside what began as a call to a known tool (an answer cut by the
    output cap). Names are matched as written, e.g. ``{"name": "edit", "arguments": {...``."""
    start = _open_call_start(text)
    if start is None:
        return False
    name = re.search(r"""["']?(?:name|function)["']?\s*:\s*["']([^"']+)["']""", text[start:])
    return name is not None and resolve(name.group(1)) is not None


def mode_applies(mode: str, *, local: bool) -> bool:
    """Whether in-band reading is on: ``always``, ``never``, or ``auto`` (on for local servers)."""
    return mode == "always" or (mode == "auto" and local)


class StreamHold:
    """Holds streamed text back from the point where a call may begin, so a call written as
    text is not shown as the answer.

    ``feed`` returns what may be shown now; ``finish`` what remains once the whole answer is
    known (the prose around the calls, when it held calls). Once the text cannot be a call (a
    code fence in another language, a finished block that is no call) everything flows.
    """

    def __init__(self, resolve: Callable[[str], str | None]) -> None:
        self.resolve = resolve
        self.text = ""
        self.shown = 0
        self.free = False

    def feed(self, piece: str) -> str:
        self.text += piece
        if not self.free and self._not_a_call():
            self.free = True
        hold = len(self.text) if self.free else _hold_from(self.text, self.shown)
        out = self.text[self.shown:hold]
        self.shown = hold
        return out

    def _not_a_call(self) -> bool:
        held = self.text[self.shown:]
        if _fences(self.text) is None:
            return True
        stripped = held.lstrip()
        if stripped[:1] in ("{", "["):
            start = len(held) - len(stripped)
            end = _balanced_end(held, start)
            return end is not None and _calls_in(held[start:end], self.resolve) is None
        fence = _FENCE.match(stripped)
        if fence is not None and re.search(r"\n[ \t]*```", stripped[3:]):
            return _calls_in(fence.group(2), self.resolve) is None
        return False

    def finish(self, found: InBandCalls | None) -> str:
        if found is None:
            out = self.text[self.shown:]
        else:
            keep, pos = [], self.shown
            for start, end in found.spans:
                if end <= pos:
                    continue
                keep.append(self.text[pos:max(pos, start)])
                pos = max(pos, end)
            keep.append(self.text[pos:])
            out = "".join(keep)
            out = out if out.strip() else ""
        self.shown = len(self.text)
        return out


# -- finding blocks -------------------------------------------------------------------------------

def _tags(text: str) -> list[Block]:
    return [(m.start(), m.end(), m.group(2)) for m in _TAG.finditer(text)]


def _fences(text: str) -> list[Block] | None:
    """Every fence in the text; None when one is code in another language (python, bash ...):
    then any JSON in the text is part of an explanation."""
    blocks: list[Block] = []
    for m in _FENCE.finditer(text):
        if m.group(1).lower() not in _CALL_FENCES:
            return None
        blocks.append((m.start(), m.end(), m.group(2)))
    return blocks


def _bare(text: str) -> list[Block]:
    """Top-level JSON objects or lists that start a line (or the text)."""
    blocks: list[Block] = []
    pos = 0
    while True:
        m = re.compile(r"(?m)^[ \t]*([\[{])").search(text, pos)
        if m is None:
            return blocks
        start = m.start(1)
        end = _balanced_end(text, start)
        if end is None:
            return blocks
        blocks.append((start, end, text[start:end]))
        pos = end


def _balanced_end(text: str, start: int) -> int | None:
    """The index after the bracket that closes the one at ``start``, strings skipped."""
    depth, quote, escaped = 0, "", False
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            # An apostrophe inside a word (it's) does not open a string.
            if ch == '"' or not (i > 0 and text[i - 1].isalnum()):
                quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def _open_call_start(text: str) -> int | None:
    """Where an unfinished call block starts at the end of ``text``."""
    tag = list(_TAG.finditer(text))
    if tag and not re.search(r"</(tool_call|tool_calls|function_call)>\s*$", text, re.I):
        last = tag[-1]
        if last.end() == len(text):
            return last.start()
    for m in re.finditer(r"(?m)^[ \t]*([\[{])", text):
        if _balanced_end(text, m.start(1)) is None:
            return m.start(1)
    return None


def _hold_from(text: str, shown: int) -> int:
    """Where text must be held from: the first call marker after ``shown``, a partial marker
    at the end, or a line that opens a JSON object."""
    cut = len(text)
    for marker in _MARKERS:
        at = text.find(marker, shown)
        if at >= 0:
            cut = min(cut, at)
        for k in range(len(marker) - 1, 0, -1):
            if text.endswith(marker[:k]) and len(text) - k >= shown:
                cut = min(cut, len(text) - k)
                break
    m = re.compile(r"(?m)^[ \t]*[\[{]").search(text, shown)
    if m is not None:
        cut = min(cut, m.start())
    return max(shown, cut)


# -- reading calls ----------------------------------------------------------------------------


def _calls_in(body: str, resolve: Callable[[str], str | None]) -> list[InBandCall] | None:
    """The calls in one block; None when the block is not (only) calls for known tools."""
    value = _load(body)
    items = value if isinstance(value, list) else [value]
    if not items:
        return None
    calls = []
    for item in items:
        call = _call(item, resolve)
        if call is None:
            return None
        calls.append(call)
    return calls


def _load(body: str) -> Any:
    """JSON, else what the repair library makes of it (single quotes, trailing commas, doubled
    braces); None when neither gives a value."""
    text = body.strip()
    if not text or text[0] not in "[{":
        return None
    try:
        return json.loads(text)
    except ValueError:
        pass
    if _balanced_end(text, 0) is None:
        return None  # cut off: never guess the rest of a call
    try:
        value = json_repair.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict | list) else None


def _call(item: Any, resolve: Callable[[str], str | None]) -> InBandCall | None:
    if not isinstance(item, dict):
        return None
    if isinstance(item.get("function"), dict):  # {"type": "function", "function": {...}}
        item = item["function"]
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        return None
    keys = [k for k in _ARG_KEYS if k in item]
    if not keys or set(item) - {"name", "type", "id", *_ARG_KEYS}:
        return None
    args = item[keys[0]]
    if isinstance(args, str):
        args = _load(args) if args.strip() else {}
    if not isinstance(args, dict):
        return None
    canonical = resolve(name.strip())
    if canonical is None:
        return None
    return InBandCall(canonical, args)


def _prose(text: str, spans: tuple[tuple[int, int], ...]) -> str:
    parts, pos = [], 0
    for start, end in spans:
        parts.append(text[pos:start])
        pos = end
    parts.append(text[pos:])
    return "\n".join(p.strip() for p in parts if p.strip())


def describe(found: InBandCalls) -> str:
    """The calls as ``name(arg, ...)``, for a notice."""
    return ", ".join(f"{c.name}({', '.join(c.arguments)})" for c in found.calls)

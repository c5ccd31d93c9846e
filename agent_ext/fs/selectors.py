"""The read-selector grammar: the text after ``path:`` (``10-20``, ``-20``, ``raw:1-50``, ...).

Models address parts of files the way they cite them (``a.py:10-20``), so every tool that takes
a path takes a selector too. Lines are 1-based and ranges inclusive.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FORMS = ("Valid forms: :N (line N to the end; a single line inside a comma list), :N-M, :N..M, "
         ":LN-LM, :N+K (K lines from N), :N- (to the end), :-N (the last N lines), "
         "comma lists such as :1-5,20-30, :raw, :conflicts, :img, "
         "or raw with a range such as :raw:50-100. Lines start at 1.")

_RANGE = re.compile(r"^L?(\d+)(?:(\.\.|[-+])(?:L?(\d+))?)?$", re.IGNORECASE)
_TAIL = re.compile(r"^-(\d+)$")
_TAIL_LIKE = re.compile(r"^-\d+(?:[-+]\d+)?$")
_ATOMS = ("raw", "conflicts", "img")


class SelectorError(ValueError):
    """A selector that looks like one but is malformed; the message lists the valid forms."""

    def __init__(self, selector: str, problem: str) -> None:
        super().__init__(f"Invalid selector ':{selector}': {problem}. {FORMS}")
        self.selector = selector


@dataclass(frozen=True)
class LineRange:
    """Lines ``start``..``end`` inclusive; ``end`` None means to the end of the file."""

    start: int
    end: int | None = None


@dataclass(frozen=True)
class Selector:
    """A parsed selector: merged ranges or a tail count, plus the raw/conflicts/img atoms."""

    ranges: tuple[LineRange, ...] = ()
    tail: int | None = None
    raw: bool = False
    conflicts: bool = False
    image: bool = False
    text: str = ""

    @property
    def has_lines(self) -> bool:
        return bool(self.ranges) or self.tail is not None

    @property
    def is_multi_range(self) -> bool:
        return len(self.ranges) > 1

    def resolve(self, total_lines: int) -> list[tuple[int, int]]:
        """Absolute inclusive ranges for a source of ``total_lines`` lines.

        Ends are clamped to the last line; ranges starting past the end are dropped, so an empty
        list with ``has_lines`` true means the selector lies entirely past the end.
        """
        if total_lines <= 0:
            return []
        if self.tail is not None:
            return [(max(1, total_lines - self.tail + 1), total_lines)]
        if not self.ranges:
            return [(1, total_lines)]
        out = []
        for r in self.ranges:
            if r.start > total_lines:
                continue
            out.append((r.start, total_lines if r.end is None else min(r.end, total_lines)))
        return out

    def to_offset_limit(self, total_lines: int | None = None) -> tuple[int | None, int | None]:
        """A single range as ``(offset, limit)``: offset is the 1-based first line, limit None
        means to the end. A tail needs ``total_lines``; a multi-range selector cannot convert."""
        if self.is_multi_range:
            raise ValueError(f"selector ':{self.text}' has {len(self.ranges)} ranges; "
                             "read them one at a time or use resolve()")
        if self.tail is not None:
            if total_lines is None:
                raise ValueError("a tail selector needs the line count to become offset/limit")
            start = max(1, total_lines - self.tail + 1)
            return start, total_lines - start + 1 if total_lines else None
        if not self.ranges:
            return None, None
        first = self.ranges[0]
        return first.start, None if first.end is None else first.end - first.start + 1


def parse_selector(text: str) -> Selector | None:
    """Parse the text after ``path:``. None when it is not a selector at all (left to others).

    Raises SelectorError when it is made only of selector-like chunks but is malformed
    (``0``, ``5-3``, ``-0``, ``4+0``, ``conflicts:1-5``).
    """
    if not text:
        return None
    chunks = text.split(":")
    if len(chunks) == 2:
        a, b = chunks
        a_raw, b_raw = a.lower() == "raw", b.lower() == "raw"
        if a_raw != b_raw:
            ranged = _range_or_tail(text, b if a_raw else a, raw=True)
            if ranged is not None:
                return ranged
    if len(chunks) > 1:
        if all(_looks_like_selector(c) for c in chunks):
            raise SelectorError(text, "only a range or tail combined with raw may be chained")
        return None
    lower = text.lower()
    if _TAIL_LIKE.match(text) and not _TAIL.match(text):
        raise SelectorError(text, "a tail is -N alone; use -N for the last N lines or N-M "
                                  "for a range")
    if lower in _ATOMS:
        return Selector(raw=lower == "raw", conflicts=lower == "conflicts",
                        image=lower == "img", text=text)
    return _range_or_tail(text, text, raw=False)


def is_selector_chain(text: str) -> bool:
    """Whether ``text`` is made only of selector-shaped chunks joined by ``:``, valid or not
    (``12``, ``raw:1-5``, ``0``): such a tail is a selector's, never a URL's."""
    return bool(text) and all(_looks_like_selector(c) for c in text.split(":"))


def _looks_like_selector(chunk: str) -> bool:
    chunk = chunk.strip()
    return (chunk.lower() in _ATOMS or bool(_TAIL_LIKE.match(chunk))
            or all(_RANGE.match(part.strip()) for part in chunk.split(",")))


def _range_or_tail(text: str, chunk: str, *, raw: bool) -> Selector | None:
    tail = _TAIL.match(chunk.strip())
    if tail is not None:
        count = int(tail[1])
        if count < 1:
            raise SelectorError(text, "-0 selects nothing; use -N with N of 1 or more")
        return Selector(tail=count, raw=raw, text=text)
    parts = [part.strip() for part in chunk.split(",")]
    if not all(_RANGE.match(part) for part in parts):
        return None
    # A bare N alone reads from N to the end; in a list, or with raw, it is the single line N.
    single = len(parts) > 1 or raw
    ranges = [_parse_range(text, part, single=single) for part in parts]
    return Selector(ranges=_merge(ranges), raw=raw, text=text)


def _parse_range(text: str, part: str, *, single: bool) -> LineRange:
    found = _RANGE.match(part)
    assert found is not None
    start, sep, rhs = int(found[1]), found[2], found[3]
    if start < 1:
        raise SelectorError(text, "line 0 does not exist; use 1 for the first line")
    if sep == "+":
        if rhs is None:
            raise SelectorError(text, f"{start}+ needs a line count after '+', such as {start}+10")
        count = int(rhs)
        if count < 1:
            raise SelectorError(text, f"{start}+{count} selects no lines; "
                                      "the count must be 1 or more")
        return LineRange(start, start + count - 1)
    if sep is None:
        return LineRange(start, start if single else None)
    if rhs is None:
        return LineRange(start, None)
    end = int(rhs)
    if end < start:
        raise SelectorError(text, f"range {start}-{end} ends before it starts; write {end}-{start}")
    return LineRange(start, end)


def _merge(ranges: list[LineRange]) -> tuple[LineRange, ...]:
    """Sort by start and merge overlapping or adjacent ranges; an open end absorbs the rest."""
    merged: list[LineRange] = []
    for r in sorted(ranges, key=lambda r: r.start):
        if not merged:
            merged.append(r)
            continue
        last = merged[-1]
        if last.end is None:
            break
        if r.start <= last.end + 1:
            end = None if r.end is None else max(r.end, last.end)
            merged[-1] = LineRange(last.start, end)
        else:
            merged.append(r)
    return tuple(merged)

"""A re-implementation of the seed's edit matching, as a baseline for the edit benchmark.

It follows the seed's helper and edit calculation: new_string loses trailing whitespace on every
line; old_string becomes the first slice found by literal search, look-alike-mapped search, then
line windows (exact, right-trimmed, mapped and right-trimmed), then the same windows without a
final empty line (which also drops one trailing newline from new_string); a deletion takes a
following newline when ``old + "\\n"`` occurs anywhere; occurrences are counted without overlap
and every one is replaced.
"""

from __future__ import annotations

from collections.abc import Callable

_MAP = {
    **dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"), "-"),
    **dict.fromkeys(map(ord, "\u2018\u2019\u201a\u201b"), "'"),
    **dict.fromkeys(map(ord, "\u201c\u201d\u201e\u201f"), '"'),
    **dict.fromkeys(map(ord, "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
                             "\u202f\u205f\u3000"), " "),
}
# What JavaScript's trimEnd() removes: WhiteSpace and LineTerminator code points.
_JS_WS = ("\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
          "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff")


def _normalize(text: str) -> str:
    return text.translate(_MAP)


def _trim_end(text: str) -> str:
    return text.rstrip(_JS_WS)


_PASSES: tuple[Callable[[str], str], ...] = (
    lambda s: s, _trim_end, lambda s: _trim_end(_normalize(s)))


def _seek(lines: list[str], pattern: list[str], transform: Callable[[str], str]) -> int | None:
    if len(pattern) > len(lines):
        return None
    want = [transform(p) for p in pattern]
    for i in range(len(lines) - len(pattern) + 1):
        if all(transform(lines[i + p]) == want[p] for p in range(len(pattern))):
            return i
    return None


def _slice_lines(text: str, offsets: list[int], lines: list[str], start: int, count: int,
                 with_newline: bool) -> str:
    if count == 0:
        return "\n" if with_newline else ""
    last = start + count - 1
    end = offsets[last] + len(lines[last])
    if with_newline:
        if start + count < len(lines):
            end = offsets[start + count]
        elif text.endswith("\n"):
            end = len(text)
    return text[offsets[start]:end]


def _line_match(haystack: str, needle: str) -> tuple[str, bool] | None:
    lines = haystack.split("\n")
    offsets: list[int] = []
    cursor = 0
    for line in lines:
        offsets.append(cursor)
        cursor += len(line) + 1
    pattern = needle.split("\n")
    ends_newline = needle.endswith("\n")

    def attempt(candidate: list[str]) -> int | None:
        for transform in _PASSES:
            idx = _seek(lines, candidate, transform)
            if idx is not None:
                return idx
        return None

    idx = attempt(pattern)
    if idx is not None:
        return _slice_lines(haystack, offsets, lines, idx,
                            len(pattern) - (1 if ends_newline else 0), ends_newline), False
    if pattern[-1] == "":
        trimmed = pattern[:-1]
        if not trimmed:
            return None
        idx = attempt(trimmed)
        if idx is not None:
            return _slice_lines(haystack, offsets, lines, idx, len(trimmed), False), True
    return None


def matched_slice(haystack: str, needle: str) -> tuple[str, bool] | None:
    """The file's own text for ``needle`` and whether a final empty line was dropped, or None."""
    if needle == "":
        return None
    at = haystack.find(needle)
    if at != -1:
        return haystack[at:at + len(needle)], False
    at = _normalize(haystack).find(_normalize(needle))
    if at != -1:
        return haystack[at:at + len(needle)], False
    return _line_match(haystack, needle)


def count_occurrences(source: str, sub: str) -> int:
    """Non-overlapping occurrences, left to right; an empty needle has none."""
    return source.count(sub) if sub else 0


def seed_edit(content: str, old: str, new: str, replace_all: bool = False) -> str | None:
    """The file after the seed's edit, or None where the seed reports an error."""
    new = "\n".join(_trim_end(line) for line in new.split("\n"))
    if old == "":
        return None
    found = matched_slice(content, old)
    if found is not None:
        old = found[0]
        if found[1]:
            if new.endswith("\r\n"):
                new = new[:-2]
            elif new.endswith(("\n", "\r")):
                new = new[:-1]
    if new == "" and not old.endswith("\n") and old + "\n" in content:
        old += "\n"
    occurrences = count_occurrences(content, old)
    if occurrences == 0 or (not replace_all and occurrences > 1) or old == new:
        return None
    result = content.replace(old, new)
    return None if result == content else result

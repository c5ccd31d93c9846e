"""Escaped old_strings: a model that escapes twice sends backslash-n where it meant a line break.

Only used once old_string matches nowhere as written. Each spelling of the escapes is tried
(all decoded, only line breaks and tabs decoded, or each escape either way as the file dictates),
and new_string is decoded the same way only when it was escaped the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from difflib import SequenceMatcher

from ._match_text import MAX_PLACES, TooManyPlacesError, normalize_chars

_ESCAPE = re.compile(r"\\([nt\"'\\])")
_LAYOUT = re.compile(r"\\([nt])")
_DECODED = {"n": "\n", "t": "\t", '"': '"', "'": "'", "\\": "\\"}


def has_escapes(text: str) -> bool:
    """True when ``text`` holds a backslash escape a double-escaping model would produce."""
    return _LAYOUT.search(text) is not None or re.search(r"\\[\"']", text) is not None


def decode_all(text: str) -> str:
    """Undo one level of escaping: ``\\n``, ``\\t``, quotes and backslashes."""
    return _ESCAPE.sub(lambda m: _DECODED[m.group(1)], text)


def decode_layout(text: str) -> str:
    """Turn only ``\\n`` and ``\\t`` into line breaks and tabs."""
    return _LAYOUT.sub(lambda m: _DECODED[m.group(1)], text)


Decoder = Callable[[str], str]
DECODERS: tuple[tuple[str, Decoder], ...] = (("all", decode_all), ("layout", decode_layout))


def escaped_alike(old: str, new: str) -> bool:
    """True when new_string is escaped like old_string, so it should be decoded the same way.

    A new_string with real line breaks was not escaped twice, whatever old_string looked like.
    """
    return has_escapes(new) and ("\n" not in new or "\n" in old)


@dataclass(frozen=True)
class EscapeHit:
    """Where an escaped old_string matched, and which of its escapes stood for a real character."""

    start: int
    end: int
    decoded: tuple[bool, ...]


def search(text: str, old: str) -> Iterator[EscapeHit]:
    """Every placement of ``old`` where each escape may be either itself or the character it names.

    Both sides are compared with look-alike characters mapped; overlapping hits are all reported.
    An escaped backslash stays as written here (either way would start with a backslash, and
    runs of them would make the search exponential); the decoders cover that spelling.
    """
    parts: list[str] = []
    cursor = 0
    count = 0
    for m in _ESCAPE.finditer(old):
        parts.append(re.escape(normalize_chars(old[cursor:m.start()])))
        if m.group(1) == "\\":
            parts.append(re.escape(m.group()))
        else:
            parts.append(f"(?:(?P<e{count}>{re.escape(_DECODED[m.group(1)])})|"
                         f"{re.escape(m.group())})")
        count += 1
        cursor = m.end()
    parts.append(re.escape(normalize_chars(old[cursor:])))
    pattern = re.compile("".join(parts))
    haystack = normalize_chars(text)
    hit = pattern.search(haystack)
    looked = 0
    while hit is not None:
        looked += 1
        if looked > MAX_PLACES:
            raise TooManyPlacesError
        groups = hit.groupdict()
        yield EscapeHit(hit.start(), hit.end(),
                        tuple(groups.get(f"e{i}") is not None for i in range(count)))
        hit = pattern.search(haystack, hit.start() + 1)


def decode_like(old: str, decoded: tuple[bool, ...], new: str) -> str:
    """Decode ``new``'s escapes the way the file showed ``old``'s were meant.

    An escape new_string shares with old_string (found by aligning the two) follows its twin; any
    other escape is decoded when old_string's escapes of that kind all were, kept when none were,
    and otherwise decoded only outside a quoted string on its line.
    """
    old_parts = _ESCAPE.split(old)
    new_parts = _ESCAPE.split(new) if new != old else old_parts
    # split() with one group alternates text and escape letter: escapes sit at odd indices.
    twins: dict[int, bool] = {}
    if new_parts is old_parts:
        twins = {2 * k + 1: d for k, d in enumerate(decoded)}
    else:
        matcher = SequenceMatcher(None, old_parts, new_parts, autojunk=False)
        for a, b, size in matcher.get_matching_blocks():
            for k in range(size):
                if (b + k) % 2 == 1:
                    twins[b + k] = decoded[(a + k) // 2]
    by_kind: dict[str, set[bool]] = {}
    for kind, was in zip(old_parts[1::2], decoded, strict=True):
        by_kind.setdefault(kind, set()).add(was)
    out: list[str] = []
    for i, part in enumerate(new_parts):
        if i % 2 == 0:
            out.append(part)
            continue
        seen = by_kind.get(part, set())
        if i in twins:
            decode = twins[i]
        elif len(seen) == 1:
            decode = next(iter(seen))
        else:
            decode = not _inside_quotes("".join(out))
        out.append(_DECODED[part] if decode else "\\" + part)
    return "".join(out)


def _inside_quotes(before: str) -> bool:
    """True when the current line of ``before`` has an unclosed single or double quote."""
    line = before[before.rfind("\n") + 1:]
    line = re.sub(r"\\.|(?<=\w)'(?=\w)", "", line)  # escaped characters; apostrophes in words
    return line.count('"') % 2 == 1 or line.count("'") % 2 == 1

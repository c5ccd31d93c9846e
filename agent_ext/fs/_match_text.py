"""Text primitives of the edit matcher: the look-alike character map and a canonical line index.

Models retype quotes, dashes and spaces as typographic look-alikes and pad or trim whitespace at
line ends. The map is one character in, one out, so an offset found in mapped text is an offset in
the original; the line index strips each line's ends so a needle can be found regardless of
indentation and trailing blanks, and every hit still maps back to exact offsets in the file.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"
_SINGLE_QUOTES = "\u2018\u2019\u201a\u201b"
_DOUBLE_QUOTES = "\u201c\u201d\u201e\u201f"
_SPACES = "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"

CHAR_MAP: dict[int, str] = {
    **dict.fromkeys(map(ord, _DASHES), "-"),
    **dict.fromkeys(map(ord, _SINGLE_QUOTES), "'"),
    **dict.fromkeys(map(ord, _DOUBLE_QUOTES), '"'),
    **dict.fromkeys(map(ord, _SPACES), " "),
}

#: How many places of one spelling the approximate search looks at before it gives up: an
#: old_string that fits more places than this can never pick one, and checking each costs time.
MAX_PLACES = 10_000


class TooManyPlacesError(Exception):
    """old_string, relaxed, fits more than MAX_PLACES places: no search can single one out."""


# Blanks stripped from line ends once the map has turned look-alike spaces into plain ones.
WS = " \t\r\f\v"


def normalize_chars(text: str) -> str:
    """Map look-alike dashes, quotes and spaces to ASCII; the length never changes."""
    return text.translate(CHAR_MAP)


def split_blanks(line: str) -> tuple[str, str, str]:
    """Split a (mapped) line into leading blanks, content and trailing blanks."""
    content = line.strip(WS)
    if not content:
        return line, "", ""
    lead = len(line) - len(line.lstrip(WS))
    return line[:lead], content, line[lead + len(content):]


def common_prefix_len(a: str, b: str) -> int:
    """How many leading characters two strings share."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def visual_width(lead: str, tab: int) -> int:
    """Column reached after ``lead`` when tabs stop every ``tab`` columns."""
    col = 0
    for ch in lead:
        col = (col // tab + 1) * tab if ch == "\t" else col + 1
    return col


def line_numbers(text: str, offsets: list[int]) -> tuple[int, ...]:
    """1-based line number of each offset in ``text`` (ascending offsets), in one pass."""
    numbers: list[int] = []
    line, cursor = 1, 0
    for offset in offsets:
        line += text.count("\n", cursor, offset)
        cursor = offset
        numbers.append(line)
    return tuple(numbers)


@dataclass(frozen=True)
class LineIndex:
    """The file split on ``\\n`` with, per line, its offset, mapped text and stripped content.

    ``canon`` joins every line's content (mapped, blanks stripped at both ends) with ``\\n``; a
    position in it maps back to the file through the line's offset and leading-blank width.
    """

    text: str
    starts: tuple[int, ...]
    mapped: tuple[str, ...]
    leads: tuple[int, ...]
    contents: tuple[str, ...]
    canon: str
    canon_starts: tuple[int, ...]

    @classmethod
    def build(cls, text: str) -> LineIndex:
        """Index ``text``; linear in its length."""
        starts: list[int] = []
        mapped: list[str] = []
        leads: list[int] = []
        contents: list[str] = []
        canon_starts: list[int] = []
        offset = 0
        canon_offset = 0
        for raw in text.split("\n"):
            line = normalize_chars(raw)
            lead, content, _ = split_blanks(line)
            starts.append(offset)
            mapped.append(line)
            leads.append(len(lead))
            contents.append(content)
            canon_starts.append(canon_offset)
            offset += len(raw) + 1
            canon_offset += len(content) + 1
        return cls(text, tuple(starts), tuple(mapped), tuple(leads), tuple(contents),
                   "\n".join(contents), tuple(canon_starts))

    def locate(self, canon_pos: int) -> tuple[int, int]:
        """Line and column within that line's content of a position in ``canon``."""
        line = bisect_right(self.canon_starts, canon_pos) - 1
        return line, canon_pos - self.canon_starts[line]

    def content_start(self, line: int) -> int:
        """File offset where the content of ``line`` begins (after its leading blanks)."""
        return self.starts[line] + self.leads[line]

    def line_end(self, line: int) -> int:
        """File offset of the end of ``line``, before its ``\\n``."""
        return self.starts[line] + len(self.mapped[line])

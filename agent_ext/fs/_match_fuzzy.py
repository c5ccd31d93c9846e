"""Approximate placements of old_string: every place it matches once whitespace and look-alikes are
relaxed, each checked line by line and labelled with exactly what had to be relaxed.

All candidates are returned, never just the first, so the caller can refuse when more than one
place fits: a guess is worse than an error the model can fix by adding context.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._match_indent import Reindent, analyse
from ._match_text import (
    MAX_PLACES,
    WS,
    LineIndex,
    TooManyPlacesError,
    common_prefix_len,
    normalize_chars,
    split_blanks,
)

# Order in which relaxations are named in a stage label.
RELAXATION_ORDER = ("crlf", "unescaped", "drop_trailing_newline", "normalized", "rtrim_lines",
                    "indent_shift", "tabs")


@dataclass(frozen=True)
class Candidate:
    """One place old_string fits: file offsets, what was relaxed, and how to adapt new_string."""

    start: int
    end: int
    relaxed: frozenset[str]
    reindent: Reindent
    inline_first: bool


@dataclass(frozen=True)
class _Line:
    raw: str
    lead: str
    content: str
    trail: str


def _parse(raw: str) -> _Line:
    lead, content, trail = split_blanks(normalize_chars(raw))
    return _Line(raw, lead, content, trail)


def find_candidates(index: LineIndex, needle: str, *, full_last_line: bool = False
                    ) -> list[Candidate]:
    """Every placement of ``needle`` up to look-alikes, line-end blanks and indentation.

    With ``full_last_line`` the match must run to the end of its last line (used when a trailing
    newline of old_string was dropped, so the slice covers whole lines as the newline implied).
    """
    lines = [_parse(raw) for raw in needle.split("\n")]
    canon = "\n".join(line.content for line in lines)
    if not canon.strip():
        return []
    found: list[Candidate] = []
    pos = index.canon.find(canon)
    looked = 0
    while pos != -1:
        looked += 1
        if looked > MAX_PLACES:
            raise TooManyPlacesError
        cand = _verify(index, lines, pos, len(canon), full_last_line=full_last_line)
        if cand is not None:
            found.append(cand)
        pos = index.canon.find(canon, pos + 1)
    return found


def _verify(index: LineIndex, lines: list[_Line], pos: int, size: int, *, full_last_line: bool
            ) -> Candidate | None:
    """Turn a hit in the canonical text into file offsets, or reject it."""
    first_line, col = index.locate(pos)
    last_line = first_line + len(lines) - 1
    end_col = pos + size - index.canon_starts[last_line]
    relaxed: set[str] = set()
    pairs: list[tuple[str, str]] = []
    raw_leads: list[tuple[str, str]] = []

    starts = _starts(index, lines[0], first_line, col, relaxed)
    if not starts:
        return None
    if len(lines) > 1:
        _trailing(index, lines[0], first_line, relaxed)
    for offset, line in enumerate(lines[1:-1], start=1):
        number = first_line + offset
        if line.content:
            pairs.append((_lead(index, number), line.lead))
            raw_leads.append((_raw_lead(index, number), line.raw[:len(line.lead)]))
        _trailing(index, line, number, relaxed)
    end = _end(index, lines[-1], last_line, end_col, relaxed, full_last_line=full_last_line)
    if end is None:
        return None
    if len(lines) > 1 and lines[-1].content:
        pairs.append((_lead(index, last_line), lines[-1].lead))
        raw_leads.append((_raw_lead(index, last_line), lines[-1].raw[:len(lines[-1].lead)]))
    if "rtrim_lines" in relaxed and lines[-1].content and index.mapped[last_line][
            index.leads[last_line] + end_col:].strip(WS) == "":
        # Trailing blanks were not copied faithfully: take the last line whole, as its others are.
        end = index.line_end(last_line)

    for start, first_pair in starts:
        reindent = analyse([first_pair, *pairs] if first_pair else pairs) if (
            first_pair or pairs) else Reindent()
        if reindent is None or (first_pair is None and len(starts) > 1
                                and not reindent.is_identity):
            # Reading the first line as copied from inside its indentation is only believable
            # when every other line then sits exactly where the file has it.
            continue
        found = set(relaxed) | set(reindent.relaxations)
        leads = raw_leads
        if first_pair:
            leads = [*raw_leads, (_raw_lead(index, first_line), lines[0].raw[:len(lines[0].lead)])]
        if reindent.is_identity and any(f != n for f, n in leads):
            found.add("normalized")
        if _contents_differ(index, lines, first_line, col):
            found.add("normalized")
        return Candidate(start, end, frozenset(found), reindent, inline_first=first_pair is None)
    return None


def _lead(index: LineIndex, line: int) -> str:
    return index.mapped[line][:index.leads[line]]


def _raw_lead(index: LineIndex, line: int) -> str:
    start = index.starts[line]
    return index.text[start:start + index.leads[line]]


def _starts(index: LineIndex, first: _Line, line: int, col: int, relaxed: set[str]
            ) -> list[tuple[int, tuple[str, str] | None]]:
    """Where the match may begin, best first, each with the first line's indentation pair.

    A pair of None means new_string's first line goes in inline, after whatever precedes the
    match on that line; an empty list means the hit does not fit.
    """
    mapped = index.mapped[line]
    content_end = index.leads[line] + len(index.contents[line])
    if not first.content:
        # old_string opens with the tail of a line: its blanks line up with the file's.
        taken = common_prefix_len(first.lead, mapped[content_end:])
        if taken < len(first.lead):
            relaxed.add("rtrim_lines")
        return [(index.starts[line] + content_end + taken, None)]
    at = index.leads[line] + col
    if col > 0:
        # Starts inside the line's text: the blanks it opens with must be the file's, and it
        # must not cut a run of one punctuation character (such as a ---- rule) in two.
        begin = at - len(first.lead)
        if begin <= 0 or mapped[begin:at] != first.lead or _joined(mapped[begin - 1],
                                                                   mapped[begin]):
            return []
        return [(index.starts[line] + begin, None)]
    file_lead = mapped[:index.leads[line]]
    if not file_lead:
        # At the margin on both sides or only in the model's text: either way its indentation
        # is one to compare, not one to skip.
        return [(index.starts[line], (file_lead, first.lead))]
    if not first.lead:
        return [(index.content_start(line), None)]
    options: list[tuple[int, tuple[str, str] | None]] = [(index.starts[line], (file_lead,
                                                                              first.lead))]
    if len(file_lead) > len(first.lead) and file_lead.endswith(first.lead):
        # Or copied from inside the indentation, as a literal substring would be.
        options.append((index.content_start(line) - len(first.lead), None))
    return options


def _end(index: LineIndex, last: _Line, line: int, end_col: int, relaxed: set[str], *,
         full_last_line: bool) -> int | None:
    """File offset where the match ends, or None when the needle's edge blanks don't fit."""
    mapped = index.mapped[line]
    if not last.content:
        # Ends with a newline, or a newline plus blanks that must open the next file line.
        taken = common_prefix_len(last.lead, mapped[:index.leads[line]])
        if taken < len(last.lead):
            relaxed.add("rtrim_lines")
        return index.starts[line] + taken
    at = index.leads[line] + end_col
    if end_col < len(index.contents[line]):
        stop = at + len(last.trail)
        if full_last_line or mapped[at:stop] != last.trail:
            return None
        return index.starts[line] + stop
    file_trail = mapped[at:]
    taken = common_prefix_len(last.trail, file_trail)
    if taken < len(last.trail):
        relaxed.add("rtrim_lines")
    if full_last_line:
        return index.line_end(line)
    return index.starts[line] + at + taken


def _joined(before: str, after: str) -> bool:
    """True when a match edge between these two characters would split a punctuation run.

    Where in ``------`` a shorter run of dashes starts is anyone's guess; words may be cut, as a
    literal search would.
    """
    return before == after and not (before.isalnum() or before == "_")


def _trailing(index: LineIndex, line: _Line, number: int, relaxed: set[str]) -> None:
    """Note when a whole line's trailing blanks differ from the file's."""
    mapped = index.mapped[number]
    file_trail = mapped[index.leads[number] + len(index.contents[number]):]
    if line.content:
        if line.trail != file_trail:
            relaxed.add("rtrim_lines")
    elif line.lead != mapped:
        relaxed.add("rtrim_lines")


def _contents_differ(index: LineIndex, lines: list[_Line], first_line: int, col: int) -> bool:
    """True when the text only matched once look-alike characters were mapped."""
    for offset, line in enumerate(lines):
        if not line.content:
            continue
        number = first_line + offset
        begin = index.content_start(number) + (col if offset == 0 else 0)
        raw = line.raw[len(line.lead):len(line.lead) + len(line.content)]
        if index.text[begin:begin + len(raw)] != raw:
            return True
    return False

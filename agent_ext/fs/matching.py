"""Where an ``edit`` lands: find old_string in a file even when the model retyped it imperfectly.

Models send old_strings with typographic quotes, trailing blanks, a shifted or tab-swapped
indentation, CRLF line ends or doubly escaped newlines. The search runs from exact to relaxed and
returns the real slice of the file, so replacements act on the file's own bytes. It never guesses:
when a relaxed search finds more than one place, the result is an error naming their lines.
Only old_string is matched loosely; new_string is taken as the model wrote it, except that the
correction that made old_string fit (indentation, line ends, escaping) is applied to it as well.
Pure string logic, stdlib only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from itertools import pairwise

from ._match_escape import DECODERS, decode_like, escaped_alike, has_escapes, search
from ._match_fuzzy import RELAXATION_ORDER, Candidate, find_candidates
from ._match_indent import Reindent
from ._match_text import MAX_PLACES, LineIndex, TooManyPlacesError, line_numbers

__all__ = ["Match", "MatchResult", "apply_edit", "closest_lines", "find_edit", "snippet",
           "suggest_edit", "without_line_numbers"]

NO_OCCURRENCE = "edit_no_occurrence_found"
OCCURRENCE_MISMATCH = "edit_expected_occurrence_mismatch"
NO_CHANGE = "edit_no_change"

SNIPPET_MAX_LINES = 1000
_TOKEN = re.compile(r"\w+|[^\w\s]")
_LINE_NUMBER = re.compile(r"[ ]*\d+(?:\t|\| )")
#: How alike (difflib ratio, 0..1) the file's text must be to old_string to be shown as closest.
CLOSEST_MIN_RATIO = 0.4
#: How alike (difflib ratio) a line must be to another to count as that line changed or
#: retyped, not new code.
ALIKE = 0.6

_HOW = {
    "crlf": "its line ends are matched to the file's (CRLF or LF)",
    "unescaped": "escapes such as \\n are decoded",
    "drop_trailing_newline": "its final newline is dropped",
    "normalized": "look-alike quotes, dashes and spaces are read as ASCII",
    "rtrim_lines": "trailing whitespace is ignored",
    "indent_shift": "its indentation is shifted",
    "tabs": "tabs and spaces are swapped",
}


@dataclass(frozen=True)
class Match:
    """One replacement: file offsets, the stage that found it, and the text to put there."""

    start: int
    end: int
    stage: str
    new_string: str


@dataclass(frozen=True)
class MatchResult:
    """The outcome of :func:`find_edit`: matches to apply, or an error code and what to do next.

    ``lines`` holds the 1-based line of each match or, for an ambiguity, of each candidate.
    """

    matches: tuple[Match, ...]
    error: str | None
    message: str
    lines: tuple[int, ...] = ()

    @property
    def ok(self) -> bool:
        """True when the edit can be applied."""
        return self.error is None


@dataclass(frozen=True)
class _Placement:
    """A place old_string fits, before the caller's count and no-change rules are applied."""

    start: int
    end: int
    relaxed: frozenset[str]
    new: str | int  # the adapted new_string, or the new_string line that could not be adapted
    how: str = ""   # the indentation correction, in words
    exact: bool = False  # old_string is the file's text as it stands

    @property
    def stage(self) -> str:
        return "+".join(r for r in RELAXATION_ORDER if r in self.relaxed) or "literal"


def find_edit(content: str, old: str, new: str, *, replace_all: bool = False) -> MatchResult:
    """Locate ``old`` in ``content`` and say what to replace it with, or why not.

    First the exact text, counted without overlap; then the same with its line ends matched to
    the file's. Failing those, every placement up to look-alike characters, line-end blanks and
    indentation (shifted uniformly, or tabs for spaces) is collected, together with placements at
    the end of a file that lacks old_string's final newline and placements of old_string with em
    dashes or ellipses spelled the other way; only when none fits are old_string's unescaped
    spellings tried. An exact text found more than once is an error unless ``replace_all``; the
    relaxed search must find exactly one place, or with ``replace_all`` places that all match the
    same way and don't overlap. ``content`` is the file with ``\n`` line ends, as the text layer
    reads it.
    """
    if not old:
        return _failure(NO_OCCURRENCE, "old_string is empty, so there is nothing to find. Put the "
                        "lines around the change in old_string and the edited lines in new_string.")
    found = _find(content, old, new, replace_all)
    bare_old = without_line_numbers(old)
    if found.error == NO_OCCURRENCE and bare_old is None:
        return _with_suggestion(found, content, old, new)
    if found.error != NO_OCCURRENCE or bare_old is None:
        return found
    # Copied from read_file's numbered output, numbers and all: drop them from both strings.
    bare_new = without_line_numbers(new)
    bare = _find(content, bare_old, new if bare_new is None else bare_new, replace_all)
    if not bare.ok:
        return _with_suggestion(found, content, old, new)
    matches = tuple(replace(m, stage="line_numbers") for m in bare.matches)
    also = "" if bare_new is None else ", and from new_string too"
    return MatchResult(matches, None, f"old_string held read_file's line numbers; it matched "
                       f"({_lines(bare.lines)}) with them dropped{also}. Leave the numbers out "
                       "next time.", bare.lines)


def suggest_edit(content: str, old: str, new: str) -> tuple[str, str] | None:
    """The edit a missed old_string most likely meant: the change it makes (old_string and
    new_string without what they share at both ends), made on the one line of the file that
    holds the changed text and is most like old_string. None when that is not clear."""
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while (tail < min(len(old), len(new)) - head
           and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]):
        tail += 1
    gone, put = old[head:len(old) - tail], new[head:len(new) - tail]
    if not gone.strip() or "\n" in gone or "\n" in put:
        return None
    lines = content.split("\n")
    holding = [line for line in lines if line.count(gone) == 1]
    if not holding:
        return None
    scored = sorted(((SequenceMatcher(None, line.strip(), old.strip()).ratio(), line)
                     for line in holding), reverse=True)
    best, line = scored[0]
    if best < CLOSEST_MIN_RATIO or (len(scored) > 1 and scored[1][0] == best):
        return None
    if lines.count(line) != 1:
        return None
    return line, line.replace(gone, put)


def _with_suggestion(found: MatchResult, content: str, old: str, new: str) -> MatchResult:
    """A missed old_string's error, with the call that makes its change when that is clear."""
    suggestion = suggest_edit(content, old, new)
    if suggestion is None:
        return found
    old_line, new_line = suggestion
    as_json = json.dumps({"old_string": old_line, "new_string": new_line}, ensure_ascii=False)
    return replace(found, message=f"{found.message}\nThe change you sent fits one line of the "
                   f"file; to make it there, send: {as_json}")


def without_line_numbers(text: str) -> str | None:
    """``text`` without the line-number prefix read_file puts on every line (``   12\t``, or
    ``12| `` as an edit error shows lines), or None when not every non-blank line has one."""
    lines = text.split("\n")
    if not any(line.strip() for line in lines):
        return None
    bare = []
    for line in lines:
        prefix = _LINE_NUMBER.match(line)
        if prefix is None and line.strip():
            return None
        bare.append(line[prefix.end():] if prefix else line)
    return "\n".join(bare)


def _find(content: str, old: str, new: str, replace_all: bool) -> MatchResult:
    file_crlf = _uses_crlf(content)
    if "\r\n" in new and not file_crlf:
        # Line ends are the file's business; CRLF pasted into an LF file would mix them.
        new = new.replace("\r\n", "\n")
    found = _literal(content, old, new, replace_all, frozenset())
    if found is not None:
        return found
    relaxed: frozenset[str] = frozenset()
    model_crlf = "\r\n" in old
    if model_crlf != file_crlf and "\n" in old:
        old, new = _line_ends(old, model_crlf), _line_ends(new, model_crlf)
        relaxed = frozenset({"crlf"})
        found = _literal(content, old, new, replace_all, relaxed)
        if found is not None:
            return found
    index = LineIndex.build(content)
    try:
        placements = _merge([_relaxed(index, old, new, relaxed),
                             *_retyped(index, old, new, relaxed)])
        if not placements and has_escapes(old):
            placements = _merge(_unescaped(index, old, new, relaxed | {"unescaped"}))
    except TooManyPlacesError:
        return _failure(OCCURRENCE_MISMATCH, "old_string is not in the file as written, and "
                        f"once whitespace and look-alike characters are relaxed it fits more "
                        f"than {MAX_PLACES:,} places, so no single place can be chosen. No edit "
                        "was made. Copy old_string exactly from the file, with enough "
                        "surrounding lines to make it unique.")
    return _decide(content, placements, replace_all, old)


def _uses_crlf(text: str) -> bool:
    return text.count("\r\n") * 2 > text.count("\n")


def _line_ends(text: str, to_lf: bool) -> str:
    lf = text.replace("\r\n", "\n")
    return lf if to_lf else lf.replace("\n", "\r\n")


def apply_edit(content: str, result: MatchResult) -> str:
    """``content`` with every match of ``result`` replaced; new text is inserted verbatim."""
    if result.error is not None:
        raise ValueError(f"cannot apply a failed edit ({result.error}): {result.message}")
    parts: list[str] = []
    cursor = 0
    for match in result.matches:
        parts.append(content[cursor:match.start])
        parts.append(match.new_string)
        cursor = match.end
    parts.append(content[cursor:])
    return "".join(parts)


def snippet(old_content: str | None, new_content: str, context: int = 4
            ) -> tuple[int, int, str] | None:
    """The edited region of ``new_content`` with ``context`` lines around it: (first, last, text).

    Lines are 1-based and inclusive. A new file (``old_content`` None) is shown whole; no change,
    an empty result or a change spanning more than 1,000 lines gives None.
    """
    new_lines = new_content.split("\n")
    total = len(new_lines)
    if old_content is None:
        return 1, total, new_content
    if old_content == new_content or not new_content:
        return None
    old_lines = old_content.split("\n")
    first = 0
    while first < min(len(old_lines), total) and old_lines[first] == new_lines[first]:
        first += 1
    old_end, new_end = len(old_lines) - 1, total - 1
    while old_end >= first and new_end >= first and old_lines[old_end] == new_lines[new_end]:
        old_end -= 1
        new_end -= 1
    change_start, change_end = first + 1, new_end + 1
    if change_end - change_start > SNIPPET_MAX_LINES:
        return None
    start = max(1, change_start - context)
    end = min(total, change_end + context)
    return start, end, "\n".join(new_lines[start - 1:end])


def _literal(content: str, old: str, new: str, replace_all: bool, relaxed: frozenset[str]
             ) -> MatchResult | None:
    """Exact occurrences of ``old``, counted without overlap; None when there are none."""
    starts: list[int] = []
    pos = content.find(old)
    while pos != -1:
        starts.append(pos)
        pos = content.find(old, pos + len(old))
    if not starts:
        return None
    if not replace_all:
        overlapping = content.find(old, starts[0] + 1)
        if len(starts) > 1 or overlapping != -1:
            at = starts if len(starts) > 1 else [starts[0], overlapping]
            lines = line_numbers(content, at)
            where = "times" if len(starts) > 1 else "times, overlapping"
            return _failure(OCCURRENCE_MISMATCH, f"old_string occurs {len(at)} {where} "
                            f"({_lines(lines)}); no edit was made. Add surrounding lines to "
                            "old_string so it matches exactly one place, or set replace_all to "
                            "true to change every occurrence.", lines)
    if replace_all:
        placements = [_Placement(s, s + len(old), relaxed, new, exact=True) for s in starts]
    else:
        placements = [_in_frame(content, starts[0], old, new, relaxed)]
    return _decide(content, placements, replace_all, old)


def _in_frame(content: str, start: int, old: str, new: str, relaxed: frozenset[str]
              ) -> _Placement:
    """An exact placement; new_string's later lines follow when old_string began mid-indentation.

    A one-line old_string with some indentation, found inside a deeper indentation, was written
    with the enclosing block's indentation dropped; the extra lines of new_string were written
    the same way, so they get the dropped part back.
    """
    end = start + len(old)
    line_start = content.rfind("\n", 0, start) + 1
    dropped = content[line_start:start]
    if ("\n" not in old.rstrip("\n") and old[:1] in (" ", "\t") and "\n" in new.rstrip("\n")
            and dropped and not dropped.strip(" \t")):
        shift = Reindent(add=dropped)
        adapted = shift.apply(new, skip_first=True)
        return _Placement(start, end, relaxed | {"indent_shift"}, adapted, shift.describe(),
                          exact=True)
    return _Placement(start, end, relaxed, new, exact=True)


def _relaxed(index: LineIndex, old: str, new: str, relaxed: frozenset[str]) -> list[_Placement]:
    """Placements up to look-alikes, blanks and indentation, and without a final newline.

    A final newline of old_string may be one the file lacks at its end; those placements join the
    others (rather than being tried only when there are none) so an exact block at the end of the
    file and a re-indented one elsewhere are seen as the ambiguity they are.
    """
    placements = [_adapt(c, new, relaxed) for c in find_candidates(index, old)]
    if old.endswith("\n"):
        dropped = relaxed | {"drop_trailing_newline"}
        for c in find_candidates(index, old[:-1], full_last_line=True):
            extra = _adapt(c, new, dropped)
            if all(extra.start != p.start for p in placements):
                placements.append(extra)
    return sorted(placements, key=lambda p: p.start)


def _adapt(candidate: Candidate, new: str, relaxed: frozenset[str]) -> _Placement:
    """The placement of a candidate, with new_string corrected the way old_string had to be."""
    adapted = candidate.reindent.apply(new, skip_first=candidate.inline_first)
    if isinstance(adapted, str) and "drop_trailing_newline" in relaxed and adapted.endswith("\n"):
        adapted = adapted[:-1]
    how = "" if candidate.reindent.is_identity else candidate.reindent.describe()
    return _Placement(candidate.start, candidate.end, candidate.relaxed | relaxed, adapted, how)


# Typographic spellings that are not one character for one, so the character map can't hold them.
_RESPELLINGS = (("\u2014", "--"), ("\u2026", "..."), ("--", "\u2014"), ("...", "\u2026"))


def _retyped(index: LineIndex, old: str, new: str, relaxed: frozenset[str]
             ) -> list[list[_Placement]]:
    """Placements of old_string with em dashes and ellipses swapped for ASCII runs or back."""
    return [_spelling(index, old.replace(typed, meant), new, relaxed | {"normalized"})
            for typed, meant in _RESPELLINGS if typed in old]


def _merge(variants: Sequence[Sequence[_Placement]]) -> list[_Placement]:
    """All placements of several spellings, once each: spellings landing on one span agree.

    Placements on different spans stay distinct even when they overlap, so the caller sees the
    ambiguity.
    """
    merged: dict[tuple[int, int], _Placement] = {}
    for variant in variants:
        for p in variant:
            merged.setdefault((p.start, p.end), p)
    return sorted(merged.values(), key=lambda p: p.start)


def _unescaped(index: LineIndex, old: str, new: str, relaxed: frozenset[str]
               ) -> list[list[_Placement]]:
    """Placements of old_string's unescaped spellings, one list per spelling."""
    content = index.text
    alike = escaped_alike(old, new)
    exact: list[_Placement] = []
    for hit in search(content, old):
        meant = decode_like(old, hit.decoded, old)
        tags = relaxed if content[hit.start:hit.end] == meant else relaxed | {"normalized"}
        exact.append(_Placement(hit.start, hit.end, tags,
                                decode_like(old, hit.decoded, new) if alike else new))
    variants = [exact]
    for _name, decoder in DECODERS:
        decoded = decoder(old)
        if decoded != old:
            variants.append(_spelling(index, decoded, decoder(new) if alike else new, relaxed))
    return variants


def _spelling(index: LineIndex, old: str, new: str, relaxed: frozenset[str]) -> list[_Placement]:
    """Placements of one respelling: its exact occurrences, else its relaxed ones."""
    exact: list[_Placement] = []
    pos = index.text.find(old)
    while pos != -1:
        if len(exact) >= MAX_PLACES:
            raise TooManyPlacesError
        exact.append(_Placement(pos, pos + len(old), relaxed, new))
        pos = index.text.find(old, pos + 1)
    return exact or _relaxed(index, old, new, relaxed)


def _overlap(a: _Placement, b: _Placement) -> bool:
    return a.start < b.end and b.start < a.end


def _decide(content: str, placements: Sequence[_Placement], replace_all: bool,
            old: str) -> MatchResult:
    """Apply the count rules to the placements found and build the result."""
    if not placements:
        return _failure(NO_OCCURRENCE, "old_string was not found in the file, even ignoring "
                        "trailing whitespace, indentation, tabs vs spaces, look-alike quotes, "
                        "dashes and spaces, CRLF vs LF line ends and escaped newlines. No edit "
                        "was made." + _closest_hint(content, old))
    lines = line_numbers(content, [p.start for p in placements])
    stages = sorted({p.stage for p in placements})
    fuzzy = stages != ["literal"]
    if fuzzy and not replace_all and len(placements) > 1:
        return _failure(OCCURRENCE_MISMATCH, f"old_string is not in the file as written; it "
                        f"matches {len(placements)} places once {_describe(placements)} "
                        f"({_lines(lines)}). No edit was made rather than guess. Re-read the "
                        "file and add surrounding lines to old_string so it matches one place, or "
                        "set replace_all to true to change every one.", lines)
    if fuzzy and len(placements) > 1 and (
            len(stages) > 1 or any(_overlap(a, b) for a, b in pairwise(placements))):
        return _failure(OCCURRENCE_MISMATCH, f"old_string is not in the file as written; it "
                        f"matches {len(placements)} places only approximately, and not all the "
                        f"same way ({_lines(lines)}: {', '.join(stages)}). No edit was made. "
                        "Re-read the file and send old_string exactly as it appears there, or "
                        "edit the places one at a time.", lines)
    matches: list[Match] = []
    for p, line in zip(placements, lines, strict=True):
        if isinstance(p.new, int):
            return _failure(NO_OCCURRENCE, f"old_string matches line {line} once {p.how}, but "
                            f"line {p.new} of new_string is indented less than that, so it can't "
                            "be re-indented to fit. No edit was made. Re-read the file and send "
                            "old_string and new_string with the file's exact indentation.", lines)
        start, end = _whole_lines(content, p.start, p.end) if not p.new else (p.start, p.end)
        matches.append(Match(start, end, p.stage, p.new))
    if all(content[m.start:m.end] == m.new_string for m in matches):
        return _failure(NO_CHANGE, "old_string and new_string are identical"
                        f"{' once matched to the file' if fuzzy else ''}, so there is nothing to "
                        "change. No edit was made. Put the text you want in new_string.", lines)
    return MatchResult(tuple(matches), None, _success(placements, lines), lines)


def _whole_lines(content: str, start: int, end: int) -> tuple[int, int]:
    """A deletion's span grown to whole lines when it covers whole lines but their edges.

    Deleting lines without their last newline would leave a blank line (so the deletion takes
    the newline too); deleting from the text of a line without its indentation would glue
    that indentation onto the next line.
    """
    line_start = content.rfind("\n", 0, start) + 1
    at_line_end = content[end - 1:end] == "\n" or end == len(content) or content[end] == "\n"
    if not at_line_end or content[line_start:start].strip(" \t"):
        return start, end
    if content[end - 1:end] != "\n" and content[end:end + 1] == "\n":
        end += 1
    return line_start, end


def _success(placements: Sequence[_Placement], lines: tuple[int, ...]) -> str:
    where = f"{_lines(lines)}"
    if all(p.stage == "literal" for p in placements):
        plural = "s" if len(placements) > 1 else ""
        return f"Replaced {len(placements)} occurrence{plural} ({where})."
    extra = next((p.how for p in placements if p.how), "")
    if all(p.exact for p in placements) and extra:
        return (f"old_string was found ({where}) inside deeper indentation; the other lines of "
                f"new_string were indented to match by {extra}.")
    adjusted = f"; new_string was adjusted by {extra}" if extra else ""
    return (f"old_string did not match exactly; it matched ({where}) once {_describe(placements)}"
            f"{adjusted}. Re-read the file before the next edit of this region.")


def _describe(placements: Iterable[_Placement]) -> str:
    relaxed: set[str] = set()
    for p in placements:
        relaxed |= p.relaxed
    parts = [_HOW[r] for r in RELAXATION_ORDER if r in relaxed]
    return " and ".join(parts) if len(parts) < 3 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _lines(lines: Sequence[int]) -> str:
    shown = ", ".join(str(n) for n in lines[:20])
    more = f" and {len(lines) - 20} more" if len(lines) > 20 else ""
    return f"line{'s' if len(lines) > 1 else ''} {shown}{more}"


def closest_lines(content: str, old: str, *, limit: int = 20_000) -> tuple[int, list[str]]:
    """The run of the file's lines most like ``old``, compared token by token without
    indentation and line breaks (as many lines as it has, or up to two more: lines run together
    into one are found too): its first 1-based line number and the lines as they are in the file, or
    ``(0, [])`` when nothing is alike or the file has more than ``limit`` lines."""
    lines = content.split("\n")
    wanted = [line.strip() for line in old.strip("\n").split("\n")]
    if len(lines) > limit or not any(wanted):
        return 0, []
    tokens = [_TOKEN.findall(line) for line in lines]
    target = _TOKEN.findall(" ".join(wanted))
    best, best_at, best_size = 0.0, -1, 0
    matcher: SequenceMatcher[str] = SequenceMatcher(autojunk=False)
    matcher.set_seq2(target)
    for size in range(min(len(wanted), len(lines)), min(len(wanted) + 2, len(lines)) + 1):
        for start in range(len(lines) - size + 1):
            window = [t for line in tokens[start:start + size] for t in line]
            if not window:
                continue
            matcher.set_seq1(window)
            if matcher.real_quick_ratio() <= best or matcher.quick_ratio() <= best:
                continue
            ratio = matcher.ratio()
            if ratio < CLOSEST_MIN_RATIO:
                continue
            # Alike as a whole, and holding as much of old_string as may be (in order).
            found = sum(b.size for b in matcher.get_matching_blocks()) / len(target)
            if ratio * found > best:
                best, best_at, best_size = ratio * found, start, size
    if best_at < 0:
        return 0, []
    return best_at + 1, lines[best_at:best_at + best_size]


def _closest_hint(content: str, old: str) -> str:
    """What to do next, with the file's text nearest to ``old`` when there is some."""
    first, lines = closest_lines(content, old)
    if not lines:
        return " Re-read the file and copy old_string exactly from it."
    width = len(str(first + len(lines) - 1))
    shown = "\n".join(f"{n:>{width}}| {line}" for n, line in enumerate(lines, first))
    span = f"line {first}" if len(lines) == 1 else f"lines {first}-{first + len(lines) - 1}"
    return (f" The closest text in the file is at {span} (shown after the line number and "
            f"'| '; old_string must not include them):\n{shown}\n"
            "Copy old_string exactly from these lines and try again.")


def _failure(code: str, message: str, lines: tuple[int, ...] = ()) -> MatchResult:
    return MatchResult((), code, message, lines)

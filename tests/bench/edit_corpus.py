"""Edit cases for the edit-matching benchmark, generated from real-looking source files.

Each case is one ``edit`` call as a model would send it: a region of a file is picked, the intended
file after the edit is computed, then the model's old_string (and, where a model would be
consistent, its new_string) is perturbed the ways models perturb them. The expected outcome is
decided by a brute-force oracle that knows the intended place and which perturbations were applied:
``land`` (the intended file), ``refuse`` (the old_string is as close to another place as to the
intended one, or too far from anything), or ``either`` (adversarial files with near-duplicate
blocks, where landing exactly at the intended place and refusing are both right).
Everything is seeded, so the corpus is the same on every run.
"""

from __future__ import annotations

import os
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "edit_corpus"

_CHAR_MAP = {
    **dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"), "-"),
    **dict.fromkeys(map(ord, "\u2018\u2019\u201a\u201b"), "'"),
    **dict.fromkeys(map(ord, "\u201c\u201d\u201e\u201f"), '"'),
    **dict.fromkeys(map(ord, "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
                             "\u202f\u205f\u3000"), " "),
}
_ALL_RELAX = frozenset({"chars", "rtrim", "indent", "tabs"})


@dataclass(frozen=True)
class EditCase:
    """One edit call and what should come of it."""

    case_id: str
    kind: str
    path: str
    content: str
    old: str
    new: str
    intended: str
    expect: str  # "land" | "either" | "refuse"
    replace_all: bool = False


@dataclass(frozen=True)
class Region:
    """Lines ``first..last`` of a file, as one old_string.

    ``partial`` starts at the first line's text (its indentation left out, as models often copy);
    ``newline`` includes the last line's newline.
    """

    first: int
    last: int
    partial: bool
    newline: bool

    @property
    def count(self) -> int:
        return self.last - self.first + 1


def load_files() -> dict[str, str]:
    """The corpus files as the edit tool sees them: CRLF turned into LF."""
    return {p.name: p.read_text(encoding="utf-8").replace("\r\n", "\n")
            for p in sorted(DATA.iterdir()) if p.name != "README.md"}


# ---------------------------------------------------------------------------------------------
# Regions and the oracle


def region_text(lines: list[str], r: Region) -> str:
    chunk = lines[r.first:r.last + 1]
    if r.partial:
        chunk = [chunk[0].lstrip(" \t"), *chunk[1:]]
    text = "\n".join(chunk)
    return text + "\n" if r.newline else text


def region_span(lines: list[str], r: Region) -> tuple[int, int]:
    start = sum(len(line) + 1 for line in lines[:r.first])
    if r.partial:
        start += len(lines[r.first]) - len(lines[r.first].lstrip(" \t"))
    end = sum(len(line) + 1 for line in lines[:r.last]) + len(lines[r.last])
    return start, end + (1 if r.newline else 0)


def _lead(line: str) -> str:
    return line[:len(line) - len(line.lstrip(" \t"))]


def relaxed_key(text: str, relax: frozenset[str], partial: bool, tab: int = 4) -> str:
    """``text`` with the differences ``relax`` allows erased (the oracle's notion of sameness)."""
    if "typography" in relax:
        text = text.replace("\u2014", "--").replace("\u2026", "...")
    if "chars" in relax:
        text = text.translate(_CHAR_MAP)
    lines = text.split("\n")
    if "rtrim" in relax:
        lines = [line.rstrip() for line in lines]
    if "tabs" in relax:
        lines = [_lead(line).expandtabs(tab) + line[len(_lead(line)):] for line in lines]
    if relax & {"indent", "tabs"}:
        head, body = (lines[:1], lines[1:]) if partial else ([], lines)
        common = os.path.commonprefix([_lead(line) for line in body if line.strip()])  # noqa: RUF071
        body = [line[len(common):] if line.strip() else line for line in body]
        lines = head + body
    return "\n".join(lines)


def windows(lines: list[str], r: Region) -> Iterator[tuple[int, str]]:
    """Every region of the same shape as ``r``, by first line."""
    for i in range(len(lines) - r.count + 1):
        last = i + r.count - 1
        if r.newline and last >= len(lines) - 1:
            continue
        if r.partial and not lines[i].strip():
            continue
        yield i, region_text(lines, replace(r, first=i, last=last))


def look_alikes(lines: list[str], r: Region, relax: frozenset[str], tab: int,
                needle_key: str | None = None) -> list[int]:
    """First lines of every region indistinguishable from ``r`` (or from ``needle_key``)."""
    want = needle_key if needle_key is not None else relaxed_key(
        region_text(lines, r), relax, r.partial, tab)
    return [i for i, text in windows(lines, r) if relaxed_key(text, relax, r.partial, tab) == want]


def matches_anywhere(lines: list[str], r: Region, needle: str) -> bool:
    """True when ``needle`` fits some region of ``r``'s shape under every relaxation we allow."""
    for tab in (2, 4, 8):
        key = relaxed_key(needle, _ALL_RELAX, r.partial, tab)
        if look_alikes(lines, r, _ALL_RELAX, tab, key):
            return True
    return False


# ---------------------------------------------------------------------------------------------
# What the model meant: edits of a region


def _comment(path: str) -> str:
    if path.endswith((".js", ".ts", ".go", ".c", ".cs")):
        return "//"
    if path.endswith(".ini"):
        return ";"
    if path.endswith(".md"):
        return ">"
    return "#"


def _added_line(path: str, lead: str, rng: random.Random) -> str:
    if path.endswith(".json"):
        return f'{lead}"checked": {rng.choice(["true", "false", "1"])},'
    if path.endswith(".md"):
        return f"{lead}See also the changelog for {rng.choice(['2.3', '2.4', '3.0'])}."
    if path.endswith(".yaml"):
        return f"{lead}# {rng.choice(['TODO: pin the version', 'keep in sync with tox.ini'])}"
    return f"{lead}{_comment(path)} {rng.choice(['checked by hand', 'see issue 412', 'FIXME'])}"


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_NUMBER = re.compile(r"\b\d+\b")


def _modify_line(line: str, path: str, rng: random.Random) -> str:
    numbers = list(_NUMBER.finditer(line))
    words = list(_WORD.finditer(line))
    if numbers and rng.random() < 0.3:
        m = rng.choice(numbers)
        return line[:m.start()] + str(int(m.group()) + rng.randint(1, 9)) + line[m.end():]
    if words:
        m = rng.choice(words)
        suffix = rng.choice(["_v2", "_new", "2", "_tmp"])
        return line[:m.start()] + m.group() + suffix + line[m.end():]
    return f"{line} {_comment(path)} edited"


def intended_region(old: str, r: Region, path: str, rng: random.Random, *,
                    allow_delete: bool = True) -> str:
    """A plausible edit of the region's text, as the model means it."""
    body = old[:-1] if r.newline else old
    lines = body.split("\n")
    ops = ["modify"] * 7 + ["insert"] * 5 + ["comment"] * 3
    if len(lines) > 1:
        ops += ["drop_line"] * 2
    if allow_delete and not r.partial:
        ops += ["delete"] * 3
    op = rng.choice(ops)
    editable = [i for i, line in enumerate(lines) if line.strip()]
    if op == "delete":
        return ""
    if op == "modify":
        i = rng.choice(editable)
        lines[i] = _modify_line(lines[i], path, rng)
    elif op == "insert":
        i = rng.choice(editable)
        lead = _lead(lines[i])
        if i == 0 and r.partial:  # the first line's indentation is not in the region
            lead = _lead(lines[1]) if len(lines) > 1 else ""
        lines.insert(i + 1, _added_line(path, lead, rng))
    elif op == "comment":
        mark = _comment(path)
        lines = [(_lead(line) + mark + " " + line.lstrip(" \t")) if line.strip() else line
                 for line in lines]
    else:
        candidates = [i for i in editable if not (i == 0 and r.partial)]
        if len(candidates) < 2:
            lines[editable[-1]] = _modify_line(lines[editable[-1]], path, rng)
        else:
            del lines[rng.choice(candidates)]
    text = "\n".join(lines)
    return text + "\n" if r.newline else text


# ---------------------------------------------------------------------------------------------
# How models garble old_string


Perturb = Callable[[str, random.Random], "str | None"]


def _sprinkle(text: str, pattern: str, choices: str, rng: random.Random, rate: float
              ) -> str | None:
    spots = [m.start() for m in re.finditer(pattern, text)]
    if not spots:
        return None
    chosen = {s for s in spots if rng.random() < rate} or {rng.choice(spots)}
    out = list(text)
    for s in chosen:
        out[s] = rng.choice(choices)
    return "".join(out)


def curly_quotes(text: str, rng: random.Random) -> str | None:
    """Straight quotes retyped as typographic ones, mostly in pairs."""
    out: list[str] = []
    opened = {"'": False, '"': False}
    changed = False
    rate = rng.choice([0.5, 1.0, 1.0])
    for ch in text:
        if ch in opened and rng.random() < rate:
            single = ch == "'"
            curly = ("\u2019" if opened[ch] else "\u2018") if single else (
                "\u201d" if opened[ch] else "\u201c")
            if rng.random() < 0.15:
                curly = rng.choice("\u201a\u201b" if single else "\u201e\u201f")
            out.append(curly)
            changed = True
        else:
            out.append(ch)
        if ch in opened:
            opened[ch] = not opened[ch]
    return "".join(out) if changed else None


def dashes(text: str, rng: random.Random) -> str | None:
    """Hyphens retyped as en/em dashes or minus signs."""
    return _sprinkle(text, "-", "\u2013\u2014\u2212\u2010\u2011", rng, 0.5)


def nbsp(text: str, rng: random.Random) -> str | None:
    """Spaces retyped as no-break or typographic spaces."""
    return _sprinkle(text, "(?<=\\S) (?=\\S)", "\u00a0\u00a0\u00a0\u2009\u202f\u2002\u3000",
                     rng, 0.3)


def typography(text: str, rng: random.Random) -> str | None:
    """Double hyphens and triple dots retyped as em dashes and ellipses, or the reverse."""
    pairs = [("--", "\u2014"), ("...", "\u2026"), ("\u2014", "--"), ("\u2026", "...")]
    usable = [(a, b) for a, b in pairs if a in text]
    if not usable:
        return None
    a, b = rng.choice(usable)
    return text.replace(a, b)


def trailing_added(text: str, rng: random.Random) -> str | None:
    """Blanks appended to some line ends."""
    lines = text.split("\n")
    usable = [i for i, line in enumerate(lines) if line and not (i == len(lines) - 1 == 0)]
    usable = [i for i in usable if i < len(lines) - 1 or not text.endswith("\n")]
    if not usable:
        return None
    chosen = {i for i in usable if rng.random() < 0.4} or {rng.choice(usable)}
    for i in chosen:
        lines[i] += rng.choice([" ", "  ", "\t", "   ", " \t"])
    return "\n".join(lines)


def trailing_removed(text: str, rng: random.Random) -> str | None:
    """Trailing blanks the model did not see, dropped."""
    out = "\n".join(line.rstrip(" \t") for line in text.split("\n"))
    return out if out != text else None


def shift_indent(text: str, by: str | int, partial: bool) -> str | None:
    """Every non-blank line's indentation grown by prefix ``by`` or cut by ``-by`` spaces."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if not line.strip() or (i == 0 and partial):
            continue
        if isinstance(by, str):
            lines[i] = by + line
        elif line.startswith(" " * -by):
            lines[i] = line[-by:]
        else:
            return None
    return "\n".join(lines)


def swap_tabs(text: str, unit: int, partial: bool) -> str | None:
    """Tabs written as ``unit`` spaces, or runs of ``unit`` spaces as tabs."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        lead = _lead(line)
        if not line.strip() or (i == 0 and partial) or not lead:
            continue
        if "\t" in lead:
            lines[i] = lead.expandtabs(unit) + line[len(lead):]
        elif len(lead) % unit == 0:
            lines[i] = "\t" * (len(lead) // unit) + line[len(lead):]
        else:
            return None
    return "\n".join(lines)


def to_crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def escape_newlines(text: str, double: bool) -> str:
    """What a model that escapes twice sends: backslash-n for line breaks."""
    if double:
        text = text.replace("\\", "\\\\").replace('"', '\\"')
    return text.replace("\n", "\\n").replace("\t", "\\t")


_RELAX_OF = {"curly_quotes": "chars", "dashes": "chars", "nbsp": "chars", "typography": "typography",
             "trailing_added": "rtrim", "trailing_removed": "rtrim", "indent_shift": "indent",
             "tabs": "tabs"}


# ---------------------------------------------------------------------------------------------
# Case building


class _Builder:
    """Draws cases of one kind until enough are found."""

    def __init__(self, files: dict[str, str], rng: random.Random) -> None:
        self.files = files
        self.rng = rng
        self.cases: list[EditCase] = []

    def pick_region(self, lines: list[str], *, max_lines: int = 8, partial: float = 0.3,
                    newline: float = 0.75, need: Callable[[str], bool] | None = None,
                    tries: int = 60) -> Region | None:
        rng = self.rng
        for _ in range(tries):
            count = min(rng.choice([1, 2, 2, 3, 3, 3, 4, 4, 5, 6, 7, 8]), max_lines)
            first = rng.randrange(0, max(1, len(lines) - count))
            last = first + count - 1
            if last >= len(lines) or not lines[first].strip() or not lines[last].strip():
                continue
            r = Region(first, last, rng.random() < partial and bool(_lead(lines[first])),
                       rng.random() < newline and last < len(lines) - 1)
            text = region_text(lines, r)
            if len(text.strip()) < 8 or (need is not None and not need(text)):
                continue
            if "\n".join(lines).count(text) != 1:
                continue
            return r
        return None

    def add(self, kind: str, path: str, content: str, r: Region, old_true: str, new_true: str,
            old: str, new: str, relax: frozenset[str], tab: int = 4, *,
            adversarial: bool = False) -> bool:
        """Label and keep a case; False when it is unusable.

        Unusable: the perturbation changed nothing, or the garbled old_string is text of the file
        as it stands (an exact match elsewhere, which no matcher could tell from the intent).
        """
        lines = content.split("\n")
        if kind != "clean" and (old == old_true or old in content):
            return False
        start, end = region_span(lines, r)
        if not new_true and not r.newline and content[end:end + 1] == "\n":
            end += 1  # deleting whole lines takes their newline
        intended = content[:start] + new_true + content[end:]
        if intended == content:
            return False
        ambiguous = len(look_alikes(lines, r, relax, tab)) > 1
        expect = "refuse" if ambiguous else ("either" if adversarial else "land")
        self.cases.append(EditCase(f"{kind}-{len(self.cases):04d}", kind, path, content, old, new,
                                   intended, expect))
        return True


def _space_indented(content: str) -> bool:
    return "\n\t" not in content


def _kinds(b: _Builder, counts: dict[str, int]) -> None:
    rng = b.rng
    names = sorted(b.files)

    def draw(kind: str, make: Callable[[str, str], bool]) -> None:
        target = len(b.cases) + counts[kind]
        attempts = 0
        while len(b.cases) < target and attempts < counts[kind] * 40:
            attempts += 1
            path = rng.choice(names)
            make(path, b.files[path])

    def simple(kind: str, perturb: Perturb, need: Callable[[str], bool] | None = None,
               *, both: bool = False) -> Callable[[str, str], bool]:
        def make(path: str, content: str) -> bool:
            lines = content.split("\n")
            r = b.pick_region(lines, need=need)
            if r is None:
                return False
            old_true = region_text(lines, r)
            new_true = intended_region(old_true, r, path, rng)
            old = perturb(old_true, rng)
            if old is None:
                return False
            new: str | None = new_true
            if both and new_true:
                new = perturb(new_true, rng)
            if new is None:
                return False
            relax = frozenset({_RELAX_OF[kind]}) if kind in _RELAX_OF else frozenset()
            return b.add(kind, path, content, r, old_true, new_true, old, new, relax)
        return make

    draw("clean", simple("clean", lambda s, _: s))
    draw("curly_quotes", simple("curly_quotes", curly_quotes, lambda t: "'" in t or '"' in t))
    draw("dashes", simple("dashes", dashes, lambda t: "-" in t))
    draw("nbsp", simple("nbsp", nbsp, lambda t: " " in t.strip()))
    draw("typography", simple("typography", typography,
                              lambda t: any(x in t for x in ("--", "...", "\u2014", "\u2026"))))
    draw("trailing_added", simple("trailing_added", trailing_added))
    draw("crlf", simple("crlf", lambda s, _: to_crlf(s), lambda t: "\n" in t.rstrip("\n"),
                        both=True))

    def messy(path: str, content: str) -> str:
        # A copy of the file with blanks left at some line ends, as many real files have.
        local = random.Random(f"{path}-messy")
        return "\n".join(line + local.choice(["", "", "", "", " ", "  ", "\t"]) if line.strip()
                         else line for line in content.split("\n"))

    def trailing_removed_case(path: str, content: str) -> bool:
        content = messy(path, content)
        lines = content.split("\n")
        r = b.pick_region(lines, need=lambda t: bool(re.search(r"[ \t]\n|[ \t]$", t)))
        if r is None:
            return False
        old_true = region_text(lines, r)
        new_true = intended_region(old_true, r, path, rng)
        old = trailing_removed(old_true, rng)
        if old is None:
            return False
        return b.add("trailing_removed", path, content, r, old_true, new_true, old, new_true,
                     frozenset({"rtrim"}))

    draw("trailing_removed", trailing_removed_case)

    def indent_case(path: str, content: str) -> bool:
        lines = content.split("\n")
        r = b.pick_region(lines, partial=0.25, need=lambda t: bool(re.search(r"^[ \t]+\S", t, re.M)))
        if r is None:
            return False
        old_true = region_text(lines, r)
        new_true = intended_region(old_true, r, path, rng)
        if not _space_indented(content) and rng.random() < 0.5:
            # The model dropped one tab of the enclosing block.
            removed = _remove_tabs(old_true, r.partial)
            removed_new = _remove_tabs(new_true, r.partial) if new_true else ""
            if removed is None or removed_new is None:
                return False
            return b.add("indent_shift", path, content, r, old_true, new_true, removed,
                         removed_new, frozenset({"indent"}))
        by: str | int = rng.choice([-8, -4, -2, 2, 4, 8]) if _space_indented(content) else "\t"
        if isinstance(by, int) and by > 0:
            by = " " * by
        old = shift_indent(old_true, by, r.partial)
        new = shift_indent(new_true, by, r.partial) if new_true else new_true
        if old is None or new is None:
            return False
        return b.add("indent_shift", path, content, r, old_true, new_true, old, new,
                     frozenset({"indent"}))

    draw("indent_shift", indent_case)

    def tabs_case(path: str, content: str) -> bool:
        lines = content.split("\n")
        r = b.pick_region(lines, partial=0.2, need=lambda t: bool(re.search(r"^[ \t]+\S", t, re.M)))
        if r is None:
            return False
        old_true = region_text(lines, r)
        new_true = intended_region(old_true, r, path, rng)
        unit = rng.choice([4, 4, 8, 2]) if "\t" in old_true else _indent_unit(content)
        old = swap_tabs(old_true, unit, r.partial)
        new = swap_tabs(new_true, unit, r.partial) if new_true else new_true
        if old is None or new is None:
            return False
        return b.add("tabs", path, content, r, old_true, new_true, old, new,
                     frozenset({"tabs"}), unit)

    draw("tabs", tabs_case)

    def final_newline_case(path: str, content: str) -> bool:
        content = content.rstrip("\n")
        lines = content.split("\n")
        count = rng.randint(1, 4)
        first = len(lines) - count
        if first < 0 or not lines[first].strip():
            return False
        r = Region(first, len(lines) - 1, False, False)
        old_true = region_text(lines, r)
        new_true = intended_region(old_true, r, path, rng, allow_delete=False)
        return b.add("final_newline", path, content, r, old_true, new_true, old_true + "\n",
                     new_true + "\n", frozenset())

    draw("final_newline", final_newline_case)

    def escaped_case(path: str, content: str) -> bool:
        lines = content.split("\n")
        r = b.pick_region(lines, need=lambda t: "\n" in t.rstrip("\n"))
        if r is None:
            return False
        old_true = region_text(lines, r)
        new_true = intended_region(old_true, r, path, rng)
        double = rng.random() < 0.3
        return b.add("escaped", path, content, r, old_true, new_true,
                     escape_newlines(old_true, double), escape_newlines(new_true, double),
                     frozenset())

    draw("escaped", escaped_case)

    def combo_case(path: str, content: str) -> bool:
        lines = content.split("\n")
        r = b.pick_region(lines, partial=0.2)
        if r is None:
            return False
        old_true = region_text(lines, r)
        new_true = intended_region(old_true, r, path, rng)
        chosen = rng.sample(["curly_quotes", "dashes", "nbsp", "trailing_added", "indent_shift",
                             "tabs", "crlf", "escaped"], rng.choice([2, 2, 3]))
        if "crlf" in chosen and "escaped" in chosen:
            return False
        old, new, relax, tab = old_true, new_true, set(), 4
        for name in ("curly_quotes", "dashes", "nbsp", "trailing_added"):
            if name in chosen:
                changed = {"curly_quotes": curly_quotes, "dashes": dashes, "nbsp": nbsp,
                           "trailing_added": trailing_added}[name](old, rng)
                if changed is None:
                    return False
                old = changed
                relax.add(_RELAX_OF[name])
        if "indent_shift" in chosen:
            by: str | int = (rng.choice([-4, -2, 2, 4, 8]) if _space_indented(content)
                             else "\t")
            if isinstance(by, int) and by > 0:
                by = " " * by
            old_s = shift_indent(old, by, r.partial)
            new_s = shift_indent(new, by, r.partial) if new else new
            if old_s is None or new_s is None or old_s == old:
                return False
            old, new = old_s, new_s
            relax.add("indent")
        if "tabs" in chosen:
            tab = rng.choice([4, 8]) if "\t" in old_true else _indent_unit(content)
            old_t = swap_tabs(old, tab, r.partial)
            new_t = swap_tabs(new, tab, r.partial) if new else new
            if old_t is None or new_t is None or old_t == old:
                return False
            old, new = old_t, new_t
            relax.add("tabs")
        if "crlf" in chosen:
            old, new = to_crlf(old), to_crlf(new)
        if "escaped" in chosen:
            if "\n" not in old.rstrip("\n"):
                return False
            old, new = escape_newlines(old, False), escape_newlines(new, False)
        return b.add("combo", path, content, r, old_true, new_true, old, new, frozenset(relax),
                     tab)

    draw("combo", combo_case)
    _subline(b, counts, draw)
    _replace_all(b, counts, draw)
    _too_far(b, counts, draw)


def _remove_tabs(text: str, partial: bool) -> str | None:
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if not line.strip() or (i == 0 and partial):
            continue
        if not line.startswith("\t"):
            return None
        lines[i] = line[1:]
    return "\n".join(lines)


def _indent_unit(content: str) -> int:
    widths = {len(_lead(line)) for line in content.split("\n") if line.strip() and _lead(line)}
    return 2 if 2 in widths and 4 not in widths - {8, 12, 16} else 4


Draw = Callable[[str, Callable[[str, str], bool]], None]


def _subline(b: _Builder, counts: dict[str, int], draw: Draw) -> None:
    """Part of one line (a call, a string), retyped with look-alike characters."""
    rng = b.rng

    def make(path: str, content: str) -> bool:
        lines = content.split("\n")
        i = rng.randrange(len(lines))
        line = lines[i]
        begin = len(_lead(line))
        if len(line) - begin < 10:
            return False
        a = rng.randint(begin, len(line) - 10)
        z = rng.randint(a + 10, min(len(line), a + 50))
        piece = line[a:z]
        if piece.strip() != piece or content.count(piece) != 1:
            return False
        offset = sum(len(x) + 1 for x in lines[:i]) + a
        perturb = rng.choice([curly_quotes, dashes, nbsp])
        old = perturb(piece, rng)
        if old is None or old in content:
            return False
        new_piece = _modify_line(piece, path, rng)
        intended = content[:offset] + new_piece + content[offset + len(piece):]
        mapped = content.translate(_CHAR_MAP)
        want = piece.translate(_CHAR_MAP)
        hits = [k for k in range(len(mapped)) if mapped.startswith(want, k)]
        expect = "land" if len(hits) == 1 else "refuse"
        b.cases.append(EditCase(f"subline-{len(b.cases):04d}", "subline", path, content, old,
                                new_piece, intended, expect))
        return True

    draw("subline", make)


def _replace_all(b: _Builder, counts: dict[str, int], draw: Draw) -> None:
    """A token repeated through a file renamed everywhere, sometimes retyped with look-alikes."""
    rng = b.rng

    def make(path: str, content: str) -> bool:
        tokens = re.findall(r"""(?:'[^'\n]{2,20}'|"[^"\n]{2,20}"|[A-Za-z_][\w.>-]{5,30})""",
                            content)
        repeated = sorted({t for t in tokens if 2 <= content.count(t) <= 8})
        if not repeated:
            return False
        token = rng.choice(repeated)
        mapped = content.translate(_CHAR_MAP)
        if mapped.count(token.translate(_CHAR_MAP)) != content.count(token):
            return False
        old = token
        if rng.random() < 0.6:
            old = curly_quotes(token, rng) or dashes(token, rng) or token
        new_token = token[:-1] + "_renamed" + token[-1] if token[-1] in "'\"" else token + "_x"
        intended = content.replace(token, new_token)
        b.cases.append(EditCase(f"replace_all-{len(b.cases):04d}", "replace_all", path, content,
                                old, new_token, intended, "land", replace_all=True))
        return True

    draw("replace_all", make)


def _too_far(b: _Builder, counts: dict[str, int], draw: Draw) -> None:
    """old_strings no relaxation should accept: the right answer is to refuse."""
    rng = b.rng

    def garble(text: str, partial: bool) -> str | None:
        lines = text.split("\n")
        how = rng.choice(["relative_indent", "interior_space", "typo", "missing_line",
                          "unmapped_char"])
        body = [i for i, line in enumerate(lines) if line.strip() and not (i == 0 and partial)]
        if not body:
            return None
        i = rng.choice(body)
        line = lines[i]
        if how == "relative_indent":
            if len(body) < 2:
                return None
            lines[i] = " " * rng.choice([1, 2, 3]) + line
        elif how == "interior_space":
            spots = [m.start() for m in re.finditer(r"(?<=\S) (?=\S)", line)]
            if not spots:
                return None
            s = rng.choice(spots)
            lines[i] = line[:s] + rng.choice(["  ", ""]) + line[s + 1:]
        elif how == "typo":
            words = list(_WORD.finditer(line))
            if not words:
                return None
            m = rng.choice(words)
            w = m.group()
            lines[i] = line[:m.start()] + w[0] + w[2] + w[1] + w[3:] + line[m.end():]
        elif how == "missing_line":
            if len(lines) < 3:
                return None
            del lines[rng.randrange(1, len(lines) - 1)]
        else:
            spots = [m.start() for m in re.finditer(r"(?<=\S) (?=\S)", line)]
            if not spots:
                return None
            s = rng.choice(spots)
            lines[i] = line[:s] + rng.choice(["\u2000", "\u2001", "\u200b "]) + line[s + 1:]
        out = "\n".join(lines)
        return out if out != text else None

    def make(path: str, content: str) -> bool:
        lines = content.split("\n")
        r = b.pick_region(lines, partial=0.2)
        if r is None:
            return False
        old_true = region_text(lines, r)
        new_true = intended_region(old_true, r, path, rng)
        old = garble(old_true, r.partial)
        if old is None or old in content:
            return False
        if rng.random() < 0.3:
            old = trailing_added(old, rng) or old
        shape = replace(r, last=r.first + len(old.split("\n")) - (2 if r.newline else 1))
        if matches_anywhere(lines, shape, old):
            return False
        start, end = region_span(lines, r)
        intended = content[:start] + new_true + content[end:]
        b.cases.append(EditCase(f"too_far-{len(b.cases):04d}", "too_far", path, content, old,
                                new_true, intended, "refuse"))
        return True

    draw("too_far", make)


# ---------------------------------------------------------------------------------------------
# Adversarial files: near-duplicate blocks


def _blocks(files: dict[str, str]) -> Iterator[tuple[str, list[str]]]:
    """Indented runs of 3-6 non-blank lines from the space-indented sources."""
    for path, content in files.items():
        if not path.endswith((".py", ".ts", ".js", ".cs")) or not _space_indented(content):
            continue
        lines = content.split("\n")
        i = 0
        while i < len(lines) - 6:
            run = lines[i:i + 6]
            if all(line.strip() and _lead(line) for line in run[:3]):
                size = 3
                while size < 6 and run[size].strip() and _lead(run[size]):
                    size += 1
                yield path, lines[i:i + size]
                i += size + 3
            else:
                i += 1


def _adversarial(b: _Builder, count: int) -> None:
    rng = b.rng
    pool = list(_blocks(b.files))
    made = 0
    attempts = 0
    while made < count and attempts < count * 40:
        attempts += 1
        path, block = rng.choice(pool)
        lines = b.files[path].split("\n")
        variant = rng.choice(["indent_dup", "trailing_dup", "quote_dup", "repeated_line"])
        twin = list(block)
        if variant == "indent_dup":
            step = rng.choice([2, 4, 8])
            twin = [" " * step + line for line in block]
        elif variant == "trailing_dup":
            twin = [line + (" " if k % 2 == 0 else "") for k, line in enumerate(block)]
        elif variant == "quote_dup":
            swapped = [line.replace("'", "\u2019") if rng.random() < 0.5 else
                       line.replace('"', "'") for line in block]
            if swapped == block:
                continue
            twin = swapped
        else:
            twin = block
        filler_at = rng.randrange(0, max(1, len(lines) - 30))
        filler = lines[filler_at:filler_at + rng.randint(4, 20)]
        first_is_twin = rng.random() < 0.5
        parts = [filler[: len(filler) // 2], twin if first_is_twin else block,
                 filler[len(filler) // 2:], block if first_is_twin else twin, ["", "# end"]]
        doc = [line for part in parts for line in part]
        target_first = (len(parts[0]) + len(parts[1]) + len(parts[2])) if first_is_twin \
            else len(parts[0])
        if variant == "repeated_line":
            r = Region(target_first + rng.randrange(len(block)), 0, False, True)
            r = replace(r, last=r.first)
        else:
            r = Region(target_first, target_first + len(block) - 1, rng.random() < 0.2, True)
        content = "\n".join(doc)
        old_true = region_text(doc, r)
        if variant != "repeated_line" and content.count(old_true) != 1:
            continue
        new_true = intended_region(old_true, r, path, rng)
        kind = rng.choice(["trailing_added", "curly_quotes", "nbsp", "indent_shift",
                           "trailing_removed", "tabs"])
        relax = frozenset({_RELAX_OF[kind]})
        tab = 4
        new = new_true
        if kind == "indent_shift":
            by: str | int = rng.choice([-4, -2, 2, 4])
            if isinstance(by, int) and by > 0:
                by = " " * by
            old = shift_indent(old_true, by, r.partial)
            new_s = shift_indent(new_true, by, r.partial) if new_true else new_true
            if new_s is None:
                continue
            new = new_s
        elif kind == "tabs":
            tab = _indent_unit(content)
            old = swap_tabs(old_true, tab, r.partial)
            new_t = swap_tabs(new_true, tab, r.partial) if new_true else new_true
            if new_t is None:
                continue
            new = new_t
        else:
            perturb = {"trailing_added": trailing_added, "curly_quotes": curly_quotes,
                       "nbsp": nbsp, "trailing_removed": trailing_removed}[kind]
            old = perturb(old_true, rng)
        if old is None:
            continue
        if b.add(f"adv_{variant}", path, content, r, old_true, new_true, old, new, relax, tab,
                 adversarial=True):
            made += 1


DEFAULT_COUNTS = {
    "clean": 40, "curly_quotes": 70, "dashes": 50, "nbsp": 60, "typography": 30,
    "trailing_added": 70,
    "trailing_removed": 50, "crlf": 50, "indent_shift": 90, "tabs": 60, "final_newline": 50,
    "escaped": 70, "combo": 140, "subline": 40, "replace_all": 30, "too_far": 70,
}
ADVERSARIAL_COUNT = 160


def build_corpus(seed: int = 20261129, counts: dict[str, int] | None = None,
                 adversarial: int = ADVERSARIAL_COUNT) -> list[EditCase]:
    """The benchmark's cases, the same for the same seed."""
    b = _Builder(load_files(), random.Random(seed))
    _kinds(b, counts or DEFAULT_COUNTS)
    _adversarial(b, adversarial)
    return b.cases


def kind_group(kind: str) -> str:
    """The row a case is reported under: adversarial variants share one."""
    return "adversarial" if kind.startswith("adv_") else kind

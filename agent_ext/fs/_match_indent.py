"""Indentation of an approximate match: tell a uniform shift or a tab/space swap from a mismatch.

A model often drops or adds the enclosing block's indentation, or writes spaces where the file has
tabs, while keeping the relative indentation of its lines intact. Such an old_string still names
one place; its new_string then needs the same correction before it goes into the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import gcd

from ._match_text import normalize_chars, visual_width

_TAB_WIDTHS = (4, 8, 2)


@dataclass(frozen=True)
class Reindent:
    """How the file's indentation differs from the model's, as a rule to apply to new_string.

    ``add`` is a prefix the file has and the model left out; ``remove`` one the model wrote and the
    file lacks; ``tab`` > 0 means indentation is re-rendered at that tab width, ``delta`` columns
    deeper, with tabs when ``use_tabs``.
    """

    add: str = ""
    remove: str = ""
    tab: int = 0
    delta: int = 0
    use_tabs: bool = False

    @property
    def is_identity(self) -> bool:
        """True when new_string needs no change."""
        return not (self.add or self.remove or self.tab)

    @property
    def relaxations(self) -> tuple[str, ...]:
        """Stage names this rule stands for."""
        if self.tab:
            return ("indent_shift", "tabs") if self.delta else ("tabs",)
        return () if self.is_identity else ("indent_shift",)

    def describe(self) -> str:
        """The correction in words, for messages."""
        if self.add:
            return f"adding {_blanks(self.add)} of indentation"
        if self.remove:
            return f"removing {_blanks(self.remove)} of indentation"
        style = "tabs" if self.use_tabs else "spaces"
        shift = f", {self.delta:+d} columns" if self.delta else ""
        return f"converting indentation to {style} (tab width {self.tab}{shift})"

    def apply(self, new: str, *, skip_first: bool) -> str | int:
        """``new`` re-indented, or the 1-based line of new_string that can't be shifted left.

        Lines holding only blanks are kept as they are; the first line is left alone when it is
        inserted after the indentation already in the file.
        """
        if self.is_identity:
            return new
        out: list[str] = []
        for number, line in enumerate(new.split("\n"), start=1):
            if (number == 1 and skip_first) or not line.strip():
                out.append(line)
            elif self.add:
                out.append(self.add + line)
            elif self.remove:
                if not normalize_chars(line).startswith(self.remove):
                    return number
                out.append(line[len(self.remove):])
            else:
                lead = len(line) - len(line.lstrip(" \t"))
                width = visual_width(line[:lead], self.tab) + self.delta
                if width < 0:
                    return number
                out.append(self._render(width) + line[lead:])
        return "\n".join(out)

    def _render(self, width: int) -> str:
        if self.use_tabs:
            return "\t" * (width // self.tab) + " " * (width % self.tab)
        return " " * width


def _blanks(prefix: str) -> str:
    tabs, spaces = prefix.count("\t"), len(prefix) - prefix.count("\t")
    parts = [f"{n} {unit}{'s' if n != 1 else ''}" for n, unit in ((tabs, "tab"), (spaces, "space"))
             if n]
    return " and ".join(parts)


IDENTITY = Reindent()


def analyse(pairs: Sequence[tuple[str, str]]) -> Reindent | None:
    """The rule mapping each model indentation onto the file's, or None if there is none.

    ``pairs`` holds (file indentation, model indentation) for every non-blank line whose
    indentation both sides spell out. Accepted: equal; one fixed prefix added or removed on every
    line; or, when tabs are involved, equal visual widths (up to one constant column shift) at a
    tab width of 4, 8 or 2.
    """
    if all(f == n for f, n in pairs):
        return IDENTITY
    f0, n0 = pairs[0]
    extra = len(f0) - len(n0)
    if extra > 0 and all(f == f0[:extra] + n for f, n in pairs):
        return Reindent(add=f0[:extra])
    if extra < 0 and all(n == n0[:-extra] + f for f, n in pairs):
        return Reindent(remove=n0[:-extra])
    if not any("\t" in f or "\t" in n for f, n in pairs):
        return None
    options: list[tuple[int, int]] = []
    for tab in _TAB_WIDTHS:
        deltas = {visual_width(f, tab) - visual_width(n, tab) for f, n in pairs}
        if len(deltas) == 1:
            options.append((tab, deltas.pop()))
    if not options:
        return None
    hint = _space_unit(pairs)
    tab, delta = min(options, key=lambda o: (o[1] != 0, o[0] != hint, _TAB_WIDTHS.index(o[0])))
    return Reindent(tab=tab, delta=delta, use_tabs=any("\t" in f for f, _ in pairs))


def _space_unit(pairs: Sequence[tuple[str, str]]) -> int:
    """The indentation step of whichever side indents with spaces (0 when unknown)."""
    unit = 0
    for f, n in pairs:
        for lead in (f, n):
            if lead and "\t" not in lead:
                unit = gcd(unit, len(lead))
    return unit

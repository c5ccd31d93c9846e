"""Each common English word's nearest words, from the table shipped beside this module.

``neighbours.txt.gz`` holds one line per stem: ``stem other:similarity ...``, nearest first,
similarity in percent. It was distilled from a sentence encoder by
``scripts/build_neighbours.py``; reading it needs no model. Lines are split into a dict when
first needed and each line is parsed on first lookup.
"""

from __future__ import annotations

import gzip
from functools import cache
from importlib import resources

_TABLE = "neighbours.txt.gz"


class Neighbours:
    """Lookup of a stem's nearest stems with their similarity in [0, 1]."""

    def __init__(self, lines: dict[str, str]) -> None:
        self._lines = lines
        self._parsed: dict[str, tuple[tuple[str, float], ...]] = {}

    @classmethod
    def load(cls) -> Neighbours:
        """The shipped table; an empty one if the data file is missing or damaged."""
        try:
            raw = resources.files(__package__).joinpath(_TABLE).read_bytes()
            text = gzip.decompress(raw).decode("utf-8")
        except (OSError, EOFError, UnicodeDecodeError):
            # Missing or damaged: search goes on without neighbours.
            return cls({})
        lines: dict[str, str] = {}
        for line in text.splitlines():
            head, _, rest = line.partition(" ")
            if rest:
                lines[head] = rest
        return cls(lines)

    def __len__(self) -> int:
        return len(self._lines)

    def __contains__(self, word: object) -> bool:
        """Whether the table knows ``word``: a stem of an everyday English word."""
        return word in self._lines

    def of(self, word: str) -> tuple[tuple[str, float], ...]:
        """The stems near ``word``, nearest first; empty for a stem the table lacks."""
        hit = self._parsed.get(word)
        if hit is None:
            rest = self._lines.get(word)
            hit = tuple((w, int(p) / 100) for w, _, p in
                        (pair.rpartition(":") for pair in rest.split())
                        if p.isdigit()) if rest else ()
            self._parsed[word] = hit
        return hit


@cache
def shipped_neighbours() -> Neighbours:
    """The shipped table, read once on first use (about 30 ms)."""
    return Neighbours.load()

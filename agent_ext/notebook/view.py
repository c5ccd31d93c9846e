"""Which part of a notebook a read shows: a cell range, and sources with or without outputs.

A 500-cell notebook with outputs does not fit in one read, so reads page by cells (not lines) and
can leave outputs out. The form follows the path like a line selector does:

    nb://:cells=0-49            cells 0 to 49 (positions count from 0, as in cell-N)
    nb://:cells=50-             cell 50 to the end
    nb://:cells=ab12cd34..ef56  a range of cells by id (inclusive); a lone id is one cell
    nb://:source                every cell's source, no outputs
    x.ipynb:cells=0-9,20:source  combined; comma lists mix positions and ids

read_file's ``offset``/``limit`` on a notebook mean cells too: offset is the first position.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .document import NotebookSnapshot

FORMS = ("Notebook views: :cells=N-M (positions from 0, inclusive), :cells=N- (to the end), "
         ":cells=ID or :cells=ID1..ID2 (by cell id), comma lists such as :cells=0-9,20, and "
         ":source (sources only, no outputs); combine them as :cells=0-49:source.")

_POSITIONS = re.compile(r"^(\d+)(?:-(\d*))?$")
_SOURCE_WORDS = ("source", "sources")


class ViewError(ValueError):
    """A malformed notebook view; the message lists the valid forms."""


@dataclass(frozen=True)
class NotebookView:
    """A parsed view: which cells (empty: all) and whether outputs are left out."""

    items: tuple[str, ...] = ()
    sources_only: bool = False
    text: str = ""

    @property
    def whole(self) -> bool:
        """Every cell, with outputs."""
        return not self.items and not self.sources_only

    def positions(self, snapshot: NotebookSnapshot) -> list[int]:
        """The cell positions this view shows, in notebook order. Raises ViewError."""
        total = len(snapshot.cells)
        if not self.items:
            return list(range(total))
        shown = snapshot.display_ids()
        picked: set[int] = set()
        for item in self.items:
            picked.update(_resolve(item, shown, total))
        return sorted(picked)


def parse_view(text: str) -> NotebookView | None:
    """The view spelled by ``text`` (what follows the colon), or None if it is not one."""
    chunks = text.split(":")
    items: list[str] = []
    sources_only = False
    for chunk in chunks:
        word = chunk.strip()
        if word.lower() in _SOURCE_WORDS:
            sources_only = True
        elif word.lower().startswith("cells="):
            spec = word[len("cells="):]
            parts = [p.strip() for p in spec.split(",")]
            if not spec.strip() or not all(parts):
                raise ViewError(f"Invalid notebook view ':{text}': cells= needs positions or ids. "
                                f"{FORMS}")
            items.extend(parts)
        else:
            return None
    return NotebookView(tuple(items), sources_only, text)


def split_view(text: str) -> tuple[str, NotebookView | None]:
    """Split ``path:view`` at the first colon whose suffix is a notebook view."""
    start = 0
    while (i := text.find(":", start)) != -1:
        start = i + 1
        view = parse_view(text[i + 1:])
        if view is not None:
            return text[:i], view
    return text, None


def view_from_paging(offset: int | None, limit: int | None, *,
                     sources_only: bool = False) -> NotebookView:
    """read_file's ``offset`` (first cell position) and ``limit`` (cell count) as a view."""
    suffix = ":source" if sources_only else ""
    if offset is None and limit is None:
        return NotebookView(sources_only=sources_only, text=suffix.lstrip(":"))
    first = max(0, offset or 0)
    item = f"{first}-" if limit is None else f"{first}-{first + max(1, limit) - 1}"
    return NotebookView((item,), sources_only, f"cells={item}{suffix}")


def _resolve(item: str, shown: list[str], total: int) -> range | list[int]:
    if item in shown:
        return [shown.index(item)]
    found = _POSITIONS.match(item)
    if found is not None:
        start = int(found[1])
        end = total - 1 if found[2] == "" else int(found[2] or start)
        if end < start:
            raise ViewError(f"Cell range {item} ends before it starts; write {end}-{start}.")
        if start >= total:
            raise ViewError(f"Cell position {start} is past the end: the notebook has {total} "
                            f"cell(s), at positions 0-{max(0, total - 1)}.")
        return range(start, min(end, total - 1) + 1)
    if ".." in item:
        first, _, last = item.partition("..")
        a = _id_position(first, shown) if first else 0
        b = _id_position(last, shown) if last else total - 1
        if b < a:
            raise ViewError(f"Cell range {item}: {last} comes before {first} in the notebook.")
        return range(a, b + 1)
    raise ViewError(f"No cell {item!r} in the notebook. Use ids shown by read_file, or positions "
                    f"from 0 to {max(0, total - 1)}. {FORMS}")


def _id_position(cell_id: str, shown: list[str]) -> int:
    if cell_id in shown:
        return shown.index(cell_id)
    raise ViewError(f"No cell {cell_id!r} in the notebook. Use ids shown by read_file. {FORMS}")

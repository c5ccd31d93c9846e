"""Cell ids and the ways a model names a cell: by id, ``[12]`` or ``cell-N``.

Users say "cell 12" meaning the execution count, models copy ids, and notebooks without ids
(nbformat 4.4) only have positions. Every form resolves to exactly one cell or to an error that
lists the candidates, never to a guess.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Collection
from dataclasses import dataclass

from .document import NotebookSnapshot

_VALID_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_COUNT = re.compile(r"^\[\s*(\d+)\s*\]$")
_POSITION = re.compile(r"^cell-(\d+)$")


def is_valid_id(value: str) -> bool:
    """Whether ``value`` is a valid nbformat 4.5 cell id."""
    return bool(_VALID_ID.match(value))


def new_cell_id(taken: Collection[str]) -> str:
    """A fresh 8-hex-digit id (as JupyterLab makes them) not in ``taken``."""
    while True:
        found = uuid.uuid4().hex[:8]  # nbformat's random_cell_id
        if found not in taken:
            return found


@dataclass(frozen=True)
class CellRef:
    """A resolved reference: the cell's position and its display id, or an error for the model."""

    index: int | None
    cell_id: str = ""
    error: str | None = None
    message: str = ""


def resolve_cell(snapshot: NotebookSnapshot, ref: str, *, where: str = "the notebook") -> CellRef:
    """The cell ``ref`` names: an id, ``[N]`` (execution count N) or ``cell-N`` (position N).

    ``cell-N`` reaches the N-th cell (from 0) only when the notebook has no ids; ``[N]`` only
    when exactly one cell ran as N.
    """
    text = ref.strip()
    shown = snapshot.display_ids()
    if text in shown:
        index = shown.index(text)
        return CellRef(index, text)
    count = _COUNT.match(text)
    if count is not None:
        return _by_count(snapshot, int(count[1]), where)
    position = _POSITION.match(text)
    if position is not None and snapshot.has_ids and snapshot.cells:
        n = int(position[1])
        hint = (f" The cell at position {n} has id {shown[n]!r}." if n < len(shown) else "")
        return _missing(f"{where} has cell ids, so cells are named by id, not cell-N.{hint} "
                        "Use the ids shown by read_file.")
    return _missing(f"No cell {text!r} in {where}. {_known(shown)} Read the notebook again with "
                    "read_file to see its current cells, then retry with one of their ids.")


def _by_count(snapshot: NotebookSnapshot, n: int, where: str) -> CellRef:
    shown = snapshot.display_ids()
    hits = [i for i, c in enumerate(snapshot.cells) if c.execution_count == n]
    if len(hits) == 1:
        return CellRef(hits[0], shown[hits[0]])
    if not hits:
        return _missing(f"No cell in {where} has execution count [{n}] (it may have been re-run or "
                        "its outputs cleared). Name the cell by its id, as read_file shows it.")
    listing = "; ".join(f"{shown[i]} ({_first_line(snapshot.cells[i].source)})" for i in hits)
    return CellRef(None, error="invalid_tool_params",
                   message=f"[{n}] is ambiguous: {len(hits)} cells in {where} have execution count "
                           f"{n}: {listing}. Name the cell by its id instead.")


def _missing(message: str) -> CellRef:
    return CellRef(None, error="notebook_cell_not_found", message=message)


def _known(shown: list[str]) -> str:
    if not shown:
        return "The notebook has no cells."
    head = ", ".join(shown[:8])
    more = f", ... ({len(shown)} in all)" if len(shown) > 8 else ""
    return f"Its cells are: {head}{more}."


def _first_line(source: str) -> str:
    line = source.strip().split("\n", 1)[0]
    return repr(line[:60] + ("..." if len(line) > 60 else ""))

"""Cells named as users see them: position, execution count and first line.

Users know "cell 5", the ``[12]`` beside it and what it starts with, never its nbformat id, so
everything a user reads names a cell this way: ``cell 5 · [12] · `df = pd.read_csv(…` ``. The
model keeps addressing cells by id.
"""

from __future__ import annotations

from .document import CellData, NotebookSnapshot

#: Characters of the first line a label keeps.
FIRST_LINE = 28


def cell_label(snapshot: NotebookSnapshot, cell_id: str | None, *,
               source: str | None = None) -> str:
    """The label of the cell whose display id is ``cell_id`` in ``snapshot``.

    ``source`` stands in for the cell's source (a proposal not yet landed). A cell that is not
    in the snapshot is named by its id.
    """
    index = snapshot.index_of(cell_id) if cell_id is not None else None
    if index is None:
        return f"cell {cell_id}" if cell_id else "a new cell"
    return label_of(index, snapshot.cells[index], source=source)


def label_of(index: int, cell: CellData, *, source: str | None = None) -> str:
    """``cell N · [count] · `first line…` `` for the cell at position ``index`` (from 0)."""
    parts = [f"cell {index + 1}", prompt_of(cell)]
    first = first_line(cell.source if source is None else source)
    if first:
        parts.append(f"`{first}`")
    return " · ".join(parts)


def prompt_of(cell: CellData) -> str:
    """What JupyterLab shows beside the cell: ``[12]``, ``[ ]`` for a code cell never run, else
    its type."""
    if cell.cell_type != "code":
        return cell.cell_type
    return f"[{cell.execution_count}]" if cell.execution_count is not None else "[ ]"


def first_line(source: str, width: int = FIRST_LINE) -> str:
    """The first non-blank line of ``source``, cut to ``width`` characters with an ellipsis."""
    for line in source.splitlines():
        text = line.strip()
        if text:
            text = text.replace("`", "'")
            return text if len(text) <= width else text[:width - 1].rstrip() + "…"
    return ""

"""A notebook as the model reads it: every cell with its id, execution count, source and outputs.

Cells are headed ``--- Code Cell {id} [12] ---`` so the model can name cells by id and users can
say "cell 12". Outputs are capped per cell, images come back as image parts within a budget, and
the whole render is capped; whatever is left out is named with the read that shows it. The render
also reports which cells it showed whole, which is what licenses edits (``reads.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from agent_ext.core.result import ImagePart, Part, TextPart

from .document import CellData, NotebookSnapshot
from .outputs import ImageBudget, Piece, output_pieces
from .view import NotebookView

MAX_CELL_OUTPUT_CHARS = 10_000
MAX_RENDER_CHARS = 100_000
_TITLES = {"code": "Code Cell", "markdown": "Markdown Cell", "raw": "Raw Cell"}


@dataclass(frozen=True)
class RenderLimits:
    """Caps of one read."""

    max_chars: int = MAX_RENDER_CHARS
    max_cell_output_chars: int = MAX_CELL_OUTPUT_CHARS
    budget: ImageBudget = field(default_factory=ImageBudget)


@dataclass(frozen=True)
class RenderedNotebook:
    """A render: text and image parts in order, and which cells it showed whole."""

    parts: tuple[Part, ...]
    shown: tuple[str, ...]
    capped: bool
    total: int

    @property
    def text(self) -> str:
        """The text parts joined (images left out)."""
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    @property
    def images(self) -> int:
        return sum(isinstance(p, ImagePart) for p in self.parts)


def render_notebook(snapshot: NotebookSnapshot, view: NotebookView | None = None, *,
                    address: str, current: bool, limits: RenderLimits | None = None
                    ) -> RenderedNotebook:
    """Render ``snapshot`` (the cells ``view`` picks). ``address`` is how the model reads this
    notebook (``nb://`` or its path); ``current``: out:// and cell:// reach its cells.
    Raises ViewError for a view that names no cells of it."""
    view = view or NotebookView()
    limits = limits or RenderLimits()
    positions = view.positions(snapshot)
    total = len(snapshot.cells)
    header = _header(snapshot, view, positions)
    out: list[Piece] = [header]
    used = len(header)
    shown: list[str] = []
    ids = snapshot.display_ids()
    capped = False
    for n, index in enumerate(positions):
        block = render_cell(snapshot.cells[index], index, ids[index], snapshot.language,
                            sources_only=view.sources_only, address=address, current=current,
                            limits=limits)
        size = sum(len(p) for p in block if isinstance(p, str)) + 2
        if used + size > limits.max_chars:
            capped = True
            if not shown:
                how = (f"read_file cell://{ids[index]}:1-2000" if current else
                       f"the shell: jq -r '.cells[{index}].source | if type==\"array\" then "
                       f"join(\"\") else . end' {_quote(address)}")
                out.extend(["\n\n", _cut_source(snapshot.cells[index], ids[index],
                                                limits.max_chars - used, how)])
            _refund(block, limits.budget)
            out.append("\n\n" + _cap_note(positions[n:], address, max(1, len(shown)), limits))
            break
        out.append("\n\n")
        out.extend(block)
        used += size
        shown.append(ids[index])
    if not capped:
        note = _more_note(positions, total, address)
        if note:
            out.append("\n\n" + note)
    return RenderedNotebook(_merge(out), tuple(shown), capped, total)


def render_cell(cell: CellData, index: int, cell_id: str, language: str, *,
                sources_only: bool = False, address: str = "", current: bool = True,
                limits: RenderLimits | None = None) -> list[Piece]:
    """One cell block: a header line, its source (fenced for code) and its outputs."""
    limits = limits or RenderLimits()
    title = _TITLES.get(cell.cell_type, "Cell")
    if cell.cell_type != "code":
        return [f"--- {title} {cell_id} ---\n{cell.source}"]
    count = f" [{cell.execution_count}]" if cell.execution_count is not None else ""
    fence = _fence(cell.source)
    head = f"--- {title} {cell_id}{count} ---"
    body = cell.source if cell.source.endswith("\n") else cell.source + "\n"
    block: list[Piece] = [f"{head}\n{fence}{language}\n{body}{fence}"]
    if sources_only or not cell.outputs:
        return block
    where = f"out://{cell_id}" if current else ""
    pieces = output_pieces(cell.outputs, limits.budget, where=where)
    if not pieces:
        return block
    block.append("\nOutput:\n")
    how = (f"read_file out://{cell_id}" if current
           else f"the shell: jq '.cells[{index}].outputs' {_quote(address)}")
    block.extend(_capped_outputs(pieces, limits, how))
    return block


def _capped_outputs(pieces: list[Piece], limits: RenderLimits, how: str) -> list[Piece]:
    """The pieces, text joined by newlines and cut at the per-cell cap (images past it dropped)."""
    texts = [p for p in pieces if isinstance(p, str)]
    total = sum(len(t) for t in texts) + len(texts) - 1
    room = limits.max_cell_output_chars
    out: list[Piece] = []
    cut = False
    first = True
    for piece in pieces:
        if isinstance(piece, ImagePart):
            if room > 0:
                out.append(piece)
            else:
                _refund([piece], limits.budget)
            continue
        text = piece if first else "\n" + piece
        first = False
        if room <= 0:
            cut = True
            continue
        out.append(text[:room])
        cut = cut or len(text) > room
        room -= len(text)
    if cut:
        out.append(f"\n[output truncated: {total:,} characters in all. See all of it with {how}]")
    return out


def _header(snapshot: NotebookSnapshot, view: NotebookView, positions: list[int]) -> str:
    total = len(snapshot.cells)
    where = f" {snapshot.path}" if snapshot.path else ""
    head = f"Jupyter Notebook ({snapshot.language}, {total} cell{'s' if total != 1 else ''}){where}"
    if total == 0:
        return head + "\n(empty notebook)"
    notes = []
    if view.items:
        notes.append(f"showing cells {span_text(positions)} of {total} (positions from 0)")
    if view.sources_only:
        notes.append("sources only: outputs left out")
    return head + (f"\n[{'; '.join(notes)}]" if notes else "")


def span_text(positions: Sequence[int]) -> str:
    """Positions as compact ranges: ``0-9, 20, 30-31``."""
    spans: list[str] = []
    start = prev = None
    for p in [*positions, None]:
        if p is not None and prev is not None and p == prev + 1:
            prev = p
            continue
        if start is not None and prev is not None:
            spans.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = p
    return ", ".join(spans)


def _more_note(positions: list[int], total: int, address: str) -> str:
    if not positions or positions[-1] >= total - 1:
        return ""
    nxt = positions[-1] + 1
    step = max(1, len(positions))
    return (f"[Cells {nxt}-{total - 1} come after this view. Read on with read_file "
            f"{address}:cells={nxt}-{min(total - 1, nxt + step - 1)}]")


def _cap_note(rest: list[int], address: str, step: int, limits: RenderLimits) -> str:
    first = rest[0]
    return (f"[{len(rest)} more cell(s) not shown: a read is capped at {limits.max_chars:,} "
            f"characters, so this read does not license edits by itself. Read on with read_file "
            f"{address}:cells={first}-{first + step - 1}, or read sources only with "
            f"{address}:source]")


def _cut_source(cell: CellData, cell_id: str, room: int, how: str) -> str:
    cut = cell.source[:max(0, room - 300)]
    return (f"--- {_TITLES.get(cell.cell_type, 'Cell')} {cell_id} (source cut: "
            f"{len(cell.source):,} characters) ---\n{cut}\n[source cut. Read it in pieces with "
            f"{how}]")


def _fence(source: str) -> str:
    longest = run = 0
    for ch in source:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def _refund(pieces: Sequence[Piece], budget: ImageBudget) -> None:
    for piece in pieces:
        if isinstance(piece, ImagePart):
            budget.images -= 1
            budget.bytes -= len(piece.data)


def _merge(pieces: list[Piece]) -> tuple[Part, ...]:
    parts: list[Part] = []
    text: list[str] = []
    for piece in pieces:
        if isinstance(piece, str):
            text.append(piece)
            continue
        if text:
            parts.append(TextPart("".join(text)))
            text = []
        parts.append(piece)
    if text:
        parts.append(TextPart("".join(text)))
    return tuple(parts)


def _quote(path: str) -> str:
    return "'" + path.replace("'", "'\\''") + "'" if any(
        not (c.isalnum() or c in "@%+=:,./-_") for c in path) else path

"""``out://<id>``: a cell's outputs in the notebook the agent runs in, images as image parts.

The notebook render caps each cell's outputs; this is where the rest is read, paged by line
(``out://ab12cd34:200-400``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import unquote

from agent_ext.core.errors import ErrorCode
from agent_ext.core.result import ImagePart, Part, TextPart
from agent_ext.notebook.document import NotebookError
from agent_ext.notebook.ids import resolve_cell
from agent_ext.notebook.outputs import ImageBudget, output_pieces
from agent_ext.notebook.session import current_notebook
from agent_ext.urls.parse import ParsedURL
from agent_ext.urls.router import Resolved, URLError
from agent_ext.urls.schemes.base import cap, select_lines, target_of

from ._common import NotebookSchemeBase, url_error

if TYPE_CHECKING:
    from agent_ext.fs.selectors import Selector

MAX_CHARS = 40_000


class OutputScheme(NotebookSchemeBase):
    """A cell's outputs: text paged by line, images attached within a budget."""

    name = "out"

    def locations(self, url: ParsedURL) -> list[str] | None:
        return self.current_path()

    async def resolve(self, url: ParsedURL, selector: Selector | None) -> Resolved:
        ref = unquote(target_of(url))
        if not ref:
            raise URLError(ErrorCode.INVALID_TOOL_PARAMS,
                           "out:// needs a cell id, such as out://ab12cd34 or out://[12].")
        try:
            snapshot = await current_notebook(self.ctx).read()
        except NotebookError as err:
            raise url_error(err) from None
        found = resolve_cell(snapshot, ref, where="the current notebook")
        if found.index is None:
            raise URLError(found.error or ErrorCode.NOTEBOOK_CELL_NOT_FOUND, found.message)
        cell = snapshot.cells[found.index]
        count = f" [{cell.execution_count}]" if cell.execution_count is not None else ""
        head = f"Outputs of cell {found.cell_id}{count}"
        if not cell.outputs:
            return Resolved(text=f"{head}: none (the cell has no outputs).")
        lined = selector is not None and selector.has_lines
        pieces = output_pieces(cell.outputs, None if lined else ImageBudget(), where="")
        body = "\n".join(p for p in pieces if isinstance(p, str))
        text, whole = select_lines(body, selector, label=f"out://{found.cell_id}")
        text, cut = cap(text, MAX_CHARS, more=f"out://{found.cell_id}")
        images = [p for p in pieces if isinstance(p, ImagePart)]
        if lined or not images:
            return Resolved(text=f"{head}:\n{text}", cacheable=False, full=whole and not cut)
        parts: list[Part] = [TextPart(f"{head}:\n{text}"), *images]
        return Resolved(parts=tuple(parts), cacheable=False, full=not cut)

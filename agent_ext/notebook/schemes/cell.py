"""``cell://<id>``: one cell's source in the notebook the agent runs in; writable.

``read_file cell://ab12cd34`` (or ``cell://[12]``, ``cell://ab12cd34:10-20``) shows the source
as it is; ``edit`` on ``cell://ab12cd34`` replaces part of it through the fuzzy matcher. Writes
follow the strict notebook rule (every cell read, ids and this cell's source unchanged since),
clear a code cell's stale outputs, and count as read.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote

from agent_ext.core.errors import ErrorCode
from agent_ext.notebook.document import NotebookError, NotebookSnapshot
from agent_ext.notebook.edits import EditRequest, apply_edit, plan_edit
from agent_ext.notebook.ids import resolve_cell
from agent_ext.notebook.reading import sync_read_cache
from agent_ext.notebook.session import current_notebook, notebook_changes, notebook_reads
from agent_ext.urls.parse import ParsedURL
from agent_ext.urls.router import Resolved, URLError
from agent_ext.urls.schemes.base import select_lines, target_of

from ._common import NotebookSchemeBase, url_error

if TYPE_CHECKING:
    from agent_ext.fs.selectors import Selector

_WHERE = "the current notebook"


class CellScheme(NotebookSchemeBase):
    """A cell's source: readable with line selectors, writable under the strict rule."""

    name = "cell"
    read_only = False

    def locations(self, url: ParsedURL) -> list[str] | None:
        return self.current_path()

    async def resolve(self, url: ParsedURL, selector: Selector | None) -> Resolved:
        snapshot, cell_id, index = await self._cell(url)
        text, whole = select_lines(snapshot.cells[index].source, selector,
                                   label=f"cell://{cell_id}")
        return Resolved(text=text, cacheable=True, full=whole)

    async def check_write(self, url: ParsedURL) -> None:
        """Raise URLError when a write to ``url`` would be refused (call before asking the user).

        The whole-notebook read is checked before the cell is looked up, so nothing of a
        notebook the session has not seen (not even which cells a reference matches) is told.
        """
        reads = notebook_reads(self.ctx)
        try:
            snapshot = await current_notebook(self.ctx).read()
        except NotebookError as err:
            raise url_error(err) from None
        problem = reads.check_edit(snapshot, None, address="nb://")
        if problem is None:
            _, cell_id, _ = await self._cell(url)
            problem = reads.check_edit(snapshot, cell_id, address="nb://")
        if problem is not None:
            raise URLError(problem[0], problem[1])

    async def write(self, url: ParsedURL, text: str) -> None:
        reads = notebook_reads(self.ctx)
        try:
            doc = current_notebook(self.ctx)
            snapshot = await doc.read()
            plan = plan_edit(snapshot, EditRequest("replace", _ref(url), text), reads,
                             address="nb://")
            name = Path(doc.path).name if doc.path else "the current notebook"
            await apply_edit(doc, plan, reads, changes=notebook_changes(self.ctx), notebook=name)
        except NotebookError as err:
            raise url_error(err) from None
        sync_read_cache(self.ctx, doc)

    async def _cell(self, url: ParsedURL) -> tuple[NotebookSnapshot, str, int]:
        ref = _ref(url)
        try:
            snapshot = await current_notebook(self.ctx).read()
        except NotebookError as err:
            raise url_error(err) from None
        found = resolve_cell(snapshot, ref, where=_WHERE)
        if found.index is None:
            raise URLError(found.error or ErrorCode.NOTEBOOK_CELL_NOT_FOUND, found.message)
        return snapshot, found.cell_id, found.index


def _ref(url: ParsedURL) -> str:
    ref = unquote(target_of(url))
    if not ref:
        raise URLError(ErrorCode.INVALID_TOOL_PARAMS,
                       "cell:// needs a cell id, such as cell://ab12cd34 or cell://[12]; read the "
                       "notebook with read_file nb:// to see the ids.")
    return ref

"""One notebook read for the model: open, snapshot, render, and record what was seen.

read_file (for .ipynb paths) and the ``nb://`` scheme both come here, so every way of reading a
notebook counts toward the strict edit rule in the same way.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from agent_ext.core.errors import ErrorCode
from agent_ext.core.result import ImagePart, TextPart, ToolResult
from agent_ext.core.tool import ToolContext
from agent_ext.fs import ReadCache

from .document import NotebookDocument, NotebookError, NotebookSnapshot
from .file import FileNotebook
from .reads import ReadState
from .render import RenderedNotebook, RenderLimits, render_notebook
from .session import is_current, notebook_reads, open_notebook
from .view import NotebookView, ViewError, view_from_paging


@dataclass(frozen=True)
class NotebookRead:
    """A finished read: the render, the snapshot it came from, and what the session has seen."""

    doc: NotebookDocument
    snapshot: NotebookSnapshot
    rendered: RenderedNotebook
    state: ReadState
    view: NotebookView

    @property
    def full(self) -> bool:
        """This read alone showed the whole notebook, outputs included, uncut."""
        return self.view.whole and not self.rendered.capped


async def read_notebook(ctx: ToolContext, path: str | None, view: NotebookView | None = None, *,
                        limits: RenderLimits | None = None) -> NotebookRead:
    """Read the notebook at ``path`` (None: the one the agent runs in) through ``view``.

    Raises NotebookError (not found, invalid, none open) or ViewError (a bad cell range).
    """
    view = view or NotebookView()
    doc = open_notebook(ctx, path)
    snapshot = await doc.read()
    address = "nb://" if path is None else (doc.path or path)
    rendered = render_notebook(snapshot, view, address=address, current=is_current(ctx, doc),
                               limits=limits)
    state = notebook_reads(ctx).record_read(snapshot, rendered.shown, capped=rendered.capped)
    sync_read_cache(ctx, doc, full=not rendered.capped)
    return NotebookRead(doc, snapshot, rendered, state, view)


def sync_read_cache(ctx: ToolContext, doc: NotebookDocument, *, full: bool = True) -> None:
    """Keep the session's ReadCache in step with a notebook file the agent read or wrote.

    Recorded as not plain text, so ``edit`` on the .ipynb is still sent to notebook_edit.
    """
    cache = ctx.services.get(ReadCache)
    if isinstance(cache, ReadCache) and isinstance(doc, FileNotebook) and doc.path:
        st = doc.last_stat
        if st is not None:
            cache.record_read(doc.path, full=full, cacheable=False, st=st)


def licence_note(read: NotebookRead) -> str:
    """A line telling the model when paged reads have together covered the whole notebook."""
    if read.view.whole or not read.state.full or not read.snapshot.cells:
        return ""
    return "[You have now seen every cell of this notebook, so you may edit it with notebook_edit.]"


async def notebook_read_result(ctx: ToolContext, path: str | os.PathLike[str], *,
                               view: NotebookView | None = None, offset: int | None = None,
                               limit: int | None = None) -> ToolResult:
    """read_file's answer for an .ipynb path: the render as text (and image parts).

    ``view`` comes from a ``:cells=``/``:source`` suffix (``split_view``); ``offset``/``limit``
    count cells. Errors come back as failed results with the notebook error codes.
    """
    if view is not None and view.items and (offset is not None or limit is not None):
        return ToolResult.fail(ErrorCode.INVALID_TOOL_PARAMS,
                               "Give cells either with :cells= or with offset/limit, not both.")
    if offset is not None or limit is not None:
        view = view_from_paging(offset, limit,
                                sources_only=view is not None and view.sources_only)
    try:
        read = await read_notebook(ctx, os.fspath(path), view)
    except NotebookError as err:
        return ToolResult.fail(err.code, err.message)
    except ViewError as err:
        return ToolResult.fail(ErrorCode.INVALID_TOOL_PARAMS, str(err))
    return _result(read)


def _result(read: NotebookRead) -> ToolResult:
    parts = list(read.rendered.parts)
    note = licence_note(read)
    if note:
        parts.append(TextPart("\n\n" + note))
    shown = len(read.rendered.shown)
    display = (f"Read notebook {read.doc.path or '(unsaved)'} ({shown} of "
               f"{read.rendered.total} cells)")
    content = parts if any(isinstance(p, ImagePart) for p in parts) else "".join(
        p.text for p in parts if isinstance(p, TextPart))
    return ToolResult(llm_content=content, display=display,
                      file_paths=[read.doc.path] if read.doc.path else [])

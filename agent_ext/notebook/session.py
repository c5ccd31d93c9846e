"""The session's notebook services: the provider, the read record, and the current notebook.

Tools and URL schemes must share one ``NotebookReads`` per session and one way of finding
notebooks, or a read through ``nb://`` would not license an edit through ``notebook_edit``.
Both are kept in ``ctx.services``; a missing one is created on first use (files only).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from agent_ext.core.errors import ErrorCode
from agent_ext.core.kernel import kernel_of
from agent_ext.core.tool import ToolContext

from .changes import NotebookChanges
from .document import NotebookDocument, NotebookError, NotebookProvider
from .provider import FileNotebookProvider
from .reads import NotebookReads


def notebook_reads(ctx: ToolContext) -> NotebookReads:
    """The session's NotebookReads."""
    return ctx.service_or_create(NotebookReads, NotebookReads)


def notebook_changes(ctx: ToolContext) -> NotebookChanges:
    """The session's record of the agent's cell changes (what ``%agent undo`` takes back)."""
    return ctx.service_or_create(NotebookChanges, NotebookChanges)


def notebook_provider(ctx: ToolContext) -> NotebookProvider:
    """The host's NotebookProvider, or a file-only one rooted at the session's cwd."""
    return ctx.service_or_create(
        NotebookProvider,  # type: ignore[type-abstract]
        lambda: FileNotebookProvider(ctx.cwd, user_ns=lambda: _user_ns(ctx)))


def current_notebook(ctx: ToolContext) -> NotebookDocument:
    """The notebook the agent runs in; raises NotebookError(notebook_not_open) when unknown."""
    doc = notebook_provider(ctx).current()
    if doc is None:
        raise NotebookError("notebook_not_open",
                            "No notebook is known to be open in this session (the agent is not "
                            "running in a notebook, or the frontend did not say which one). Pass "
                            "the notebook's path instead (notebook_path, or nb://path/to/x.ipynb).")
    return doc


def open_notebook(ctx: ToolContext, path: str | None) -> NotebookDocument:
    """The notebook at ``path`` (relative to the cwd), or the current one when None."""
    if path is None:
        return current_notebook(ctx)
    full = ctx.resolve(path)
    if full.suffix.lower() != ".ipynb":
        raise NotebookError(ErrorCode.INVALID_TOOL_PARAMS,
                            f"{full} is not a notebook (.ipynb); use read_file and edit for other "
                            "files.")
    return notebook_provider(ctx).open(os.fspath(full))


def is_current(ctx: ToolContext, doc: NotebookDocument) -> bool:
    """Whether ``doc`` is the notebook the agent runs in (its cells are cell:// and out://)."""
    try:
        current = notebook_provider(ctx).current()
    except Exception:  # noqa: BLE001  a broken provider means "not known", not a failed read
        return False
    if current is None:
        return False
    if current is doc:
        return True
    return bool(current.path and doc.path
                and os.path.realpath(current.path) == os.path.realpath(doc.path))


def _user_ns(ctx: ToolContext) -> Mapping[str, object]:
    kernel = kernel_of(ctx.services)
    return kernel.user_namespace() if kernel is not None else {}

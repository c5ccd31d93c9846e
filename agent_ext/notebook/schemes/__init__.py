"""The notebook's URL schemes: ``nb://`` (the whole notebook), ``cell://`` (one cell, read and
edited) and ``out://`` (a cell's outputs).

They are bound to one session's services (its NotebookProvider and NotebookReads, looked up at
each use). The router knows nothing of notebooks: the session registers them onto it::

    register_notebook_schemes(router, ctx)
"""

from __future__ import annotations

from agent_ext.core.tool import ToolContext
from agent_ext.urls.router import URLRouter, URLScheme

from .cell import CellScheme
from .nb import NotebookScheme
from .out import OutputScheme

__all__ = ["CellScheme", "NotebookScheme", "OutputScheme", "notebook_schemes",
           "register_notebook_schemes"]


def notebook_schemes(ctx: ToolContext) -> list[URLScheme]:
    """One of each notebook scheme, bound to ``ctx``."""
    return [NotebookScheme(ctx), CellScheme(ctx), OutputScheme(ctx)]


def register_notebook_schemes(router: URLRouter, ctx: ToolContext, *,
                              replace: bool = True) -> None:
    """Register ``nb://``, ``cell://`` and ``out://`` on ``router`` for the session ``ctx``."""
    for scheme in notebook_schemes(ctx):
        router.register(scheme, replace=replace)

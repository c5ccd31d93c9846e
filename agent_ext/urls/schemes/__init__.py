"""The kernel-native URL schemes: ``nb://``, ``cell://``, ``out://``, ``var://``, ``history://``.

They are bound to one session's services (its NotebookProvider, NotebookReads and
KernelProvider, looked up at each use), so the host registers them once per session::

    register_notebook_schemes(router, ctx)
"""

from __future__ import annotations

from agent_ext.core.tool import ToolContext
from agent_ext.urls.router import URLRouter, URLScheme

from .cell import CellScheme
from .history import HistoryScheme
from .nb import NotebookScheme
from .out import OutputScheme
from .var import VariableScheme

__all__ = ["CellScheme", "HistoryScheme", "NotebookScheme", "OutputScheme", "VariableScheme",
           "notebook_schemes", "register_notebook_schemes"]


def notebook_schemes(ctx: ToolContext) -> list[URLScheme]:
    """One of each scheme, bound to ``ctx``."""
    return [NotebookScheme(ctx), CellScheme(ctx), OutputScheme(ctx), VariableScheme(ctx),
            HistoryScheme(ctx)]


def register_notebook_schemes(router: URLRouter, ctx: ToolContext, *,
                              replace: bool = True) -> None:
    """Register the five schemes on ``router`` for the session ``ctx``."""
    for scheme in notebook_schemes(ctx):
        router.register(scheme, replace=replace)

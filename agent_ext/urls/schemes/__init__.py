"""The kernel's URL schemes: ``var://`` (the user's variables) and ``history://`` (inputs).

They are bound to one session's services (its KernelProvider, looked up at each use), so the
host registers them once per session::

    register_kernel_schemes(router, ctx)

The notebook's ``nb://``, ``cell://`` and ``out://`` build on the same base in
``agent_ext.notebook.schemes``.
"""

from __future__ import annotations

from agent_ext.core.tool import ToolContext
from agent_ext.urls.router import URLRouter, URLScheme

from .history import HistoryScheme
from .var import VariableScheme

__all__ = ["HistoryScheme", "VariableScheme", "kernel_schemes", "register_kernel_schemes"]


def kernel_schemes(ctx: ToolContext) -> list[URLScheme]:
    """One of each kernel scheme, bound to ``ctx``."""
    return [VariableScheme(ctx), HistoryScheme(ctx)]


def register_kernel_schemes(router: URLRouter, ctx: ToolContext, *,
                            replace: bool = True) -> None:
    """Register ``var://`` and ``history://`` on ``router`` for the session ``ctx``."""
    for scheme in kernel_schemes(ctx):
        router.register(scheme, replace=replace)

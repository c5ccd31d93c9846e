"""agent_ext: an LLM coding agent that works inside the Jupyter kernel."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._version import __version__
from .core import FunctionTool, Kind, Registry, Tool, ToolResult, tool

if TYPE_CHECKING:
    from .agent import Agent, RunResult

__all__ = [
    "Agent",
    "FunctionTool",
    "Kind",
    "Registry",
    "RunResult",
    "Tool",
    "ToolResult",
    "__version__",
    "get_agent",
    "load_ipython_extension",
    "tool",
    "unload_ipython_extension",
]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext agent_ext``: the ``%agent``/``%%agent`` magics (imported only now)."""
    from .jupyter.extension import load_ipython_extension as load  # noqa: PLC0415

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext agent_ext``: removes what loading added and closes the session agent."""
    from .jupyter.extension import unload_ipython_extension as unload  # noqa: PLC0415

    unload(ipython)


def get_agent(**overrides: Any) -> Agent:
    """The kernel's session agent (the one ``%%agent`` cells talk to), built on first use.

    With keyword arguments (any of ``Agent``'s, e.g. ``model=``) a new session agent is built
    with them and the previous one is closed.
    """
    from .jupyter.session import get_agent as session_agent  # noqa: PLC0415

    return session_agent(**overrides)


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """Where JupyterLab finds the built bridge extension (``jupyter labextension develop``)."""
    return [{"src": "labextension", "dest": "agent-ext"}]


def __getattr__(name: str) -> Any:
    # The agent layer pulls in the model adapters; keep `import agent_ext` light.
    if name in ("Agent", "RunResult"):
        from . import agent  # noqa: PLC0415

        return getattr(agent, name)
    if name == "models":
        import importlib  # noqa: PLC0415

        return importlib.import_module(".models", __name__)
    raise AttributeError(f"module 'agent_ext' has no attribute {name!r}")

"""agent_ext: an LLM coding agent that works inside the Jupyter kernel."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .core import FunctionTool, Kind, Registry, Tool, ToolResult, tool

if TYPE_CHECKING:
    from .agent import Agent, RunResult

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "FunctionTool",
    "Kind",
    "Registry",
    "RunResult",
    "Tool",
    "ToolResult",
    "__version__",
    "tool",
]


def __getattr__(name: str) -> Any:
    # The agent layer pulls in the model adapters; keep `import agent_ext` light.
    if name in ("Agent", "RunResult"):
        from . import agent  # noqa: PLC0415

        return getattr(agent, name)
    if name == "models":
        import importlib  # noqa: PLC0415

        return importlib.import_module(".models", __name__)
    raise AttributeError(f"module 'agent_ext' has no attribute {name!r}")

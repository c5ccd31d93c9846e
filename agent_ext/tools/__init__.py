"""The built-in tools, registered lazily: nothing here is imported until first used."""

from __future__ import annotations

from agent_ext.core.registry import Registry

#: (name, "module:attribute", deferred, aliases other agents use for it)
BUILTINS: tuple[tuple[str, str, bool, tuple[str, ...]], ...] = (
    ("tool_search", "agent_ext.tools.tool_search:ToolSearchTool", False,
     ("ToolSearch", "tool_search_tool")),
)


def register_builtins(registry: Registry) -> None:
    """Register every built-in tool (lazily) with its aliases."""
    for name, spec, defer, aliases in BUILTINS:
        registry.register_lazy(name, spec, defer=defer, aliases=aliases)

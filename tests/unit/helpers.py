"""Small tools shared by the unit tests."""

from __future__ import annotations

from typing import Any

from agent_ext.core import FunctionTool, Kind


def echo_tool(name: str, description: str = "", *, defer: bool = True, kind: Kind = Kind.OTHER,
              read_only: bool = False, server: str | None = None) -> FunctionTool:
    """A raw-schema tool that returns its arguments."""

    def handler(**kwargs: Any) -> str:
        return f"{name}:{sorted(kwargs.items())}"

    return FunctionTool(
        handler, name=name, description=description or f"The {name.replace('_', ' ')} tool.",
        parameters={"type": "object", "properties": {"x": {"type": "string"}}},
        defer=defer, kind=kind, read_only=read_only, server=server)

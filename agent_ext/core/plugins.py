"""Third-party tools from the ``agent_ext.tools`` entry-point group, loaded lazily.

Each entry point names one tool: ``weather = "my_pkg.tools:WeatherTool"`` (a tool class, a tool
instance or a zero-argument factory). Plugin tools are deferred. ``AGENT_EXT_PLUGINS`` restricts
which are registered: unset means all, ``none`` (or empty) means none, otherwise a comma-separated
list of entry-point or distribution names.
"""

from __future__ import annotations

import importlib
import os
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Any

from .errors import ToolRegistrationError
from .naming import sanitize
from .tool import Tool

if TYPE_CHECKING:
    from .registry import Registry

GROUP = "agent_ext.tools"
ENV = "AGENT_EXT_PLUGINS"


def allowed_plugins(environ: dict[str, str] | None = None) -> set[str] | None:
    """None for "all"; otherwise the lower-cased names allowed (empty set for none)."""
    value = (environ if environ is not None else dict(os.environ)).get(ENV)
    if value is None:
        return None
    names = {n.strip().lower() for n in value.split(",") if n.strip()}
    return set() if names == {"none"} else names


def load_plugins(registry: Registry, *, environ: dict[str, str] | None = None) -> list[str]:
    """Register every allowed entry point lazily; returns the registered names.

    Nothing is imported here: a plugin's module loads on first use, and a broken plugin raises a
    ``ToolLoadError`` naming it each time it is used.
    """
    allowed = allowed_plugins(environ)
    registered = []
    problems = []
    for ep in entry_points(group=GROUP):
        dist = ep.dist.name if ep.dist is not None else ""
        if allowed is not None and not ({ep.name.lower(), dist.lower()} & allowed):
            continue
        try:
            registered.append(registry.register_lazy(
                sanitize(ep.name), _loader(ep), defer=True, server=dist or ep.name))
        except ToolRegistrationError as exc:
            problems.append(f"{ep.name} ({dist or 'unknown distribution'}): {exc}")
    if problems:
        raise ToolRegistrationError("plugin tools could not be registered: " + "; ".join(problems))
    return registered


def _loader(ep: EntryPoint) -> Any:
    def load() -> Tool[Any]:
        obj = ep.load()
        made = obj if isinstance(obj, Tool) else obj()
        if not isinstance(made, Tool):
            raise TypeError(f"entry point {ep.value} produced {type(made).__name__}, not a Tool")
        return made

    return load


def import_attribute(module_name: str, attribute: str) -> Any:
    """The object ``attribute`` (dotted for nested names) of module ``module_name``, imported;
    ImportError or AttributeError when there is none. What a ``module:attribute`` spec names."""
    found: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        found = getattr(found, part)
    return found

"""The tool catalogue widget: the registry's tools, searched and switched from the notebook.

Search uses ``Registry.search(..., everything=True)``, the scorer behind ``tool_search``, so you
see what the agent would find. Messages may arrive on a subshell thread; each handler is a few
quick registry calls, which the registry guards with its own locks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import traitlets

from agent_ext.core import AgentExtError

from ._assets import asset
from ._base import Widget
from ._static import cut, esc, wrap

if TYPE_CHECKING:
    from agent_ext.core import Registry

MAX_QUERY_CHARS = 500
DESCRIPTION_CHARS = 500
_TOGGLES = ("reveal", "unreveal", "disable", "enable")


def _first_line(text: object) -> str:
    lines = str(text or "").strip().splitlines()
    return lines[0] if lines else ""


class ToolCatalogueWidget(Widget):
    """Lists, searches, reveals, hides, disables and enables the tools of a ``Registry``.

    Tools disabled before the catalogue opened are not listed (the registry names only enabled
    ones); tools you disable here stay listed so you can enable them again.
    """

    _esm = asset("tool_catalogue.js")
    _css = asset("tool_catalogue.css")

    tools = traitlets.List(traitlets.Dict()).tag(sync=True)
    results = traitlets.List(traitlets.Unicode()).tag(sync=True)
    results_for = traitlets.Unicode("").tag(sync=True)
    selected_schema = traitlets.Dict().tag(sync=True)
    message = traitlets.Unicode("").tag(sync=True)

    def __init__(self, registry: Registry, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.registry = registry
        self._state = threading.RLock()
        self._seen: dict[str, dict[str, Any]] = {}
        self.refresh()

    def refresh(self) -> None:
        """Re-read the registry into the list."""
        with self._state:
            names = self.registry.names()
            gone = [n for n in self._seen if n not in names and n in self.registry]
            summaries = [self._summary(name) for name in [*names, *gone]]
            self._seen = {s["name"]: s for s in summaries}
        self.tools = summaries

    def _summary(self, name: str) -> dict[str, Any]:
        reg = self.registry
        disabled = reg.is_disabled(name)
        known = self._seen.get(name, {})
        summary: dict[str, Any] = {
            "name": name, "server": known.get("server"),
            "description": known.get("description", ""), "kind": known.get("kind"),
            "read_only": bool(known.get("read_only")), "error": None,
        }
        if not disabled:
            try:
                tool = reg.get(name)
            except AgentExtError as exc:
                summary["error"] = cut(str(exc), DESCRIPTION_CHARS)
            else:
                summary.update(server=tool.server,
                               description=cut(tool.description, DESCRIPTION_CHARS),
                               kind=tool.kind.value, read_only=tool.read_only)
        deferred = reg.is_deferred(name)
        summary.update(deferred=deferred, revealed=deferred and name in reg.revealed,
                       disabled=disabled, hidden=bool(reg.hidden(name)), visible=reg.visible(name))
        return summary

    # -- messages -------------------------------------------------------------------------------

    def _handle(self, kind: str, content: dict[str, Any]) -> None:
        if kind == "search":
            self._search(content.get("query"))
        elif kind == "select":
            self._select(content.get("name"))
        elif kind in _TOGGLES:
            self._toggle(kind, content.get("name"))
        else:
            super()._handle(kind, content)

    def _search(self, query: object) -> None:
        if not isinstance(query, str):
            raise TypeError("search needs a text query")
        query = query[:MAX_QUERY_CHARS]
        names: list[str] = []
        if query.strip():
            limit = max(1, len(self.registry.names()))
            names = [hit.name for hit in self.registry.search(query, limit, everything=True).hits]
        with self.hold_sync():
            self.results = names
            self.results_for = query

    def _select(self, name: object) -> None:
        if not isinstance(name, str):
            raise TypeError("select needs a tool name")
        schema: dict[str, Any] = {"name": name}
        try:
            tool = self.registry.get(name)
            schema.update(description=tool.description, parameters=tool.parameters_schema())
        except AgentExtError as exc:
            schema["error"] = ("It is disabled; enable it to see its schema."
                               if self.registry.is_disabled(name) else cut(str(exc), 2000))
        except Exception as exc:  # noqa: BLE001  a broken schema is shown, not raised
            schema["error"] = f"Its schema could not be built: {type(exc).__name__}: {exc}"
        self.selected_schema = schema

    def _toggle(self, kind: str, name: object) -> None:
        if not isinstance(name, str) or name not in self.registry:
            self.message = f"There is no tool named {name!r}."
            return
        if kind == "reveal" and not self.registry.is_deferred(name):
            self.message = f"{name} is not deferred: the agent always has its schema."
            return
        actions: dict[str, Callable[[], object]] = {
            "reveal": lambda: self.registry.reveal([name]),
            "unreveal": lambda: self.registry.unreveal([name]),
            "disable": lambda: self.registry.disable(name),
            "enable": lambda: self.registry.enable(name),
        }
        try:
            actions[kind]()
        except AgentExtError as exc:
            self.message = f"Could not {kind} {name}: {exc}"
            return
        self.message = ""
        self.refresh()

    # -- static fallback ------------------------------------------------------------------------

    @staticmethod
    def _badges(tool: dict[str, Any]) -> list[str]:
        flags = [
            (tool.get("deferred") and not tool.get("revealed"), "deferred"),
            (tool.get("deferred") and tool.get("revealed"), "revealed"),
            (tool.get("disabled"), "disabled"),
            (tool.get("hidden"), "hidden by a rule"),
            (tool.get("read_only"), "read-only"),
            (tool.get("error"), "failed to load"),
        ]
        return [label for on, label in flags if on]

    def static_html(self) -> str:
        rows = "".join(
            f"<tr><td><code>{esc(t['name'])}</code></td><td>{esc(t.get('server') or '')}</td>"
            f"<td>{esc(', '.join(self._badges(t)))}</td>"
            f"<td>{esc(_first_line(t.get('description')))}</td></tr>"
            for t in self.tools)
        table = ("<table><thead><tr><th>Tool</th><th>Server</th><th>State</th><th>Description</th>"
                 f"</tr></thead><tbody>{rows}</tbody></table>")
        return wrap("catalogue", f"<p>{len(self.tools)} tools</p>{table}")

    def static_text(self) -> str:
        lines = []
        for tool in self.tools:
            badges = self._badges(tool)
            lines.append(f"{tool['name']} [{', '.join(badges)}]" if badges else tool["name"])
        return "\n".join(lines) or "No tools."

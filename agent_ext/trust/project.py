"""What a project's own files ask for: the narrowing part, applied at once, and the rest.

A cloned repository can ship ``.mcp.json`` and ``.agent_ext/settings.json`` (and
``settings.local.json``: every file inside the project counts as the project's). Until the user
trusts them only what can narrow is applied: deny and ask rules, ``toolSearch``, a
``defaultMode`` of ``plan`` (or ``default`` when the user's own settings are not stricter) and
``"disabled": true`` for a server. Everything else is a ``TrustItem`` shown to the user and
withheld: servers, allow rules, additional directories, other modes, the model, and every key
agent_ext does not know (a key it may read one day is never applied unasked).

Servers are shown by command, args, cwd, url, and the *names* of env variables and headers:
their values often hold secrets, and a value that changes alone does not ask again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agent_ext.permissions.modes import Mode, parse_mode
from agent_ext.settings import MCP_JSON, Settings, SettingsFile, load_settings, read_settings_file

#: Keys applied from an untrusted project because they cannot widen anything.
HARMLESS_KEYS = frozenset({"toolSearch", "$schema"})
#: Permission keys applied from an untrusted project: they only refuse or ask more.
NARROWING_PERMISSIONS = ("deny", "ask")
_SECRET_VALUED = ("env", "headers")
#: Items named in one-line notes; the widget and ``%agent status`` show every one.
SUMMARY_ITEMS = 8

ItemKind = Literal["server", "setting"]


@dataclass(frozen=True)
class TrustItem:
    """One thing the project asks for that is withheld until trusted, and the file it is in."""

    kind: ItemKind
    file: str
    key: str
    value: Any

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "file": self.file, "key": self.key, "value": self.value}

    def key_text(self) -> str:
        """The item as one canonical JSON text (what the store keeps for the user's own)."""
        return _json(self.to_dict())

    def label(self) -> str:
        """``MCP server 'x'`` / ``allow rule Bash(*)``: the short name used in one-line notes."""
        if self.kind == "server":
            return f"MCP server {self.key!r}"
        names = {"permissions.allow": "allow rule", "permissions.additionalDirectories":
                 "additional directory", "permissions.defaultMode": "defaultMode",
                 "model": "model"}
        if self.key in names:
            return f"{names[self.key]} {_short(self.value)}"
        return f"setting {self.key!r}"

    def render(self) -> str:
        """The full line shown to the user (and hashed): what exactly would apply."""
        if self.kind == "server":
            return f"MCP server {self.key!r} ({self.file}): {describe_server(self.value)}"
        return f"{self.key} = {_json(self.value)} ({self.file})"


def describe_server(value: Mapping[str, Any]) -> str:
    """``command sh, args ["-c", "x"], env names TOKEN`` for a canonical server entry."""
    parts = [f"{key} {_json(value[key])}"
             for key in ("type", "transport", "command", "args", "cwd", "url") if key in value]
    for key in _SECRET_VALUED:
        if key in value:
            names = value[key]
            parts.append(f"{key} names {', '.join(map(str, names)) if names else '(none)'}")
    parts += [f"{k} {_json(v)}" for k, v in value.items()
              if k not in ("type", "transport", "command", "args", "cwd", "url", *_SECRET_VALUED)]
    return ", ".join(parts) or "(empty entry)"


@dataclass(frozen=True)
class ProjectAsk:
    """What a project asks for beyond narrowing: the items, and the narrowing rules applied."""

    root: Path
    items: tuple[TrustItem, ...] = ()
    narrowing: tuple[str, ...] = ()
    #: Items the user added through agent_ext (``%agent mcp add``, "always allow" saved in
    #: the project): in force without asking, as long as they are unchanged.
    own: tuple[TrustItem, ...] = ()

    def canonical(self) -> str:
        """The exact text that is hashed: every item, sorted, as JSON."""
        listed = sorted((i.to_dict() for i in self.items), key=_json)
        return json.dumps(listed, sort_keys=True, ensure_ascii=False, separators=(",", ":"))

    @property
    def digest(self) -> str:
        """``sha256:<hex>`` of ``canonical()``: a changed file means a new digest."""
        return "sha256:" + hashlib.sha256(self.canonical().encode("utf-8")).hexdigest()

    def __bool__(self) -> bool:
        return bool(self.items)

    def summary(self) -> str:
        """``MCP server 'x' (.mcp.json), allow rule Bash(*) (.agent_ext/settings.json)``."""
        ordered = sorted(self.items, key=lambda i: i.kind != "server")  # servers first
        listed = [f"{i.label()} ({i.file})" for i in ordered[:SUMMARY_ITEMS]]
        more = len(ordered) - SUMMARY_ITEMS
        return ", ".join(listed) + (f" and {more} more (`%agent status` lists them)"
                                    if more > 0 else "")


@dataclass(frozen=True)
class ProjectFiles:
    """A project's settings as read, with their narrowed versions and what was withheld."""

    root: Path
    settings: Settings
    mcp_json: SettingsFile | None
    narrowed: Settings
    narrowed_mcp_json: SettingsFile | None
    ask: ProjectAsk


def read_project(root: str | Path, *, environ: Mapping[str, str] | None = None,
                 own: frozenset[str] = frozenset()) -> ProjectFiles:
    """Read the settings files and ``.mcp.json`` of ``root``; never raises for their content.

    ``own`` holds the ``key()`` of items the user added through agent_ext: they stay in force.
    """
    path = Path(root).expanduser().resolve()
    settings = load_settings(path, environ=environ)
    mcp_path = path / MCP_JSON
    mcp_json = read_settings_file(mcp_path, "project") if mcp_path.is_file() else None
    user_mode = next((_mode(s) for s in settings.sources if s.scope == "user"), None)
    items: list[TrustItem] = []
    narrowing: list[str] = []
    sources: list[SettingsFile] = []
    for source in settings.sources:
        if source.scope == "user":
            sources.append(source)
            continue
        kept, found, notes = _narrow(source, path, user_mode, own)
        sources.append(SettingsFile(source.path, kept, source.problems, source.scope,
                                    source.text))
        items += found
        narrowing += notes
    narrowed_mcp: SettingsFile | None = None
    if mcp_json is not None:
        servers = mcp_json.data.get("mcpServers")
        kept_servers, found = _narrow_servers(servers, _relative(mcp_json.path, path), own)
        items += found
        narrowed_mcp = SettingsFile(mcp_json.path, {"mcpServers": kept_servers} if kept_servers
                                    else {}, mcp_json.problems, "project", mcp_json.text)
    ask = ProjectAsk(path, tuple(i for i in items if i.key_text() not in own),
                     tuple(narrowing), tuple(i for i in items if i.key_text() in own))
    return ProjectFiles(path, settings, mcp_json, Settings(tuple(sources), settings.searched),
                        narrowed_mcp, ask)


def _narrow(source: SettingsFile, root: Path, user_mode: Mode | None, own: frozenset[str]
            ) -> tuple[dict[str, Any], list[TrustItem], list[str]]:
    """The narrowing part of one project file, the withheld items, and notes on what applies."""
    file = _relative(source.path, root)
    kept: dict[str, Any] = {}
    items: list[TrustItem] = []
    notes: list[str] = []
    for key, value in source.data.items():
        if key in HARMLESS_KEYS:
            kept[key] = value
        elif key == "permissions" and isinstance(value, dict):
            perms, found, perm_notes = _narrow_permissions(value, file, user_mode, own)
            if perms:
                kept[key] = perms
            items += found
            notes += perm_notes
        elif key == "mcpServers":
            servers, found = _narrow_servers(value, file, own)
            if servers:
                kept[key] = servers
                notes += [f"{name} disabled ({file})" for name, entry in servers.items()
                          if entry == {"disabled": True}]
            items += found
        elif key != "permissions":  # a malformed permissions value applies nothing anyway
            items.append(TrustItem("setting", file, key, value))
    return kept, items, notes


def _narrow_permissions(perms: dict[str, Any], file: str, user_mode: Mode | None,
                        own: frozenset[str]) -> tuple[dict[str, Any], list[TrustItem], list[str]]:
    kept: dict[str, Any] = {}
    items: list[TrustItem] = []
    notes: list[str] = []
    for key, value in perms.items():
        if key in NARROWING_PERMISSIONS:
            kept[key] = value
            if isinstance(value, list):
                notes += [f"{key}: {v} ({file})" for v in value if isinstance(v, str)]
        elif key in ("allow", "additionalDirectories") and isinstance(value, list):
            found = [TrustItem("setting", file, f"permissions.{key}", v) for v in value]
            mine = [i.value for i in found if i.key_text() in own]
            if mine:
                kept[key] = mine
            items += found
        elif key == "defaultMode":
            mode = parse_mode(value) if isinstance(value, str) else None
            if mode is Mode.PLAN or (mode is Mode.DEFAULT and user_mode in (
                    None, Mode.DEFAULT, Mode.ACCEPT_EDITS, Mode.BYPASS, Mode.AUTO)):
                kept[key] = value
                notes.append(f"defaultMode: {value} ({file})")
            elif mode is not Mode.DEFAULT:  # default under a stricter user mode: nothing to ask
                items.append(TrustItem("setting", file, "permissions.defaultMode", value))
        else:
            items.append(TrustItem("setting", file, f"permissions.{key}", value))
    return kept, items, notes


def _narrow_servers(servers: object, file: str, own: frozenset[str] = frozenset()
                    ) -> tuple[dict[str, Any], list[TrustItem]]:
    """Disabled entries (narrowing) and the servers to withhold, each in canonical form."""
    if not isinstance(servers, dict):
        return {}, []
    kept: dict[str, Any] = {}
    items: list[TrustItem] = []
    for name, entry in servers.items():
        if isinstance(entry, dict) and entry.get("disabled") is True:
            kept[name] = {"disabled": True}
        else:
            item = TrustItem("server", file, str(name), canonical_server(entry))
            if item.key_text() in own:
                kept[name] = entry
            items.append(item)
    return kept, items


def canonical_server(entry: object) -> Any:
    """A server entry as shown and hashed: env and header values replaced by their names."""
    if not isinstance(entry, dict):
        return entry
    out: dict[str, Any] = {}
    for key, value in entry.items():
        if key in _SECRET_VALUED and isinstance(value, dict):
            out[key] = sorted(str(k) for k in value)
        else:
            out[key] = value
    return out


def _mode(source: SettingsFile) -> Mode | None:
    perms = source.data.get("permissions")
    value = perms.get("defaultMode") if isinstance(perms, dict) else None
    return parse_mode(value) if isinstance(value, str) else None


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _short(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) else _json(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


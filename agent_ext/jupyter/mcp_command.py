"""``%agent mcp``: list, add and remove MCP servers of the session.

A line magic cannot await, so ``add`` records the server (and saves it to ``.mcp.json``
unless ``--no-save``) and the next ``%%agent`` run connects it, before the model is asked;
``remove`` drops its tools at once and stops its process in the background.
"""

from __future__ import annotations

import json
import shlex
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

if TYPE_CHECKING:
    from agent_ext.agent import Agent

USAGE = ("type `%agent mcp` to list the servers, `%agent mcp add NAME -- COMMAND ARGS...`, "
         "`%agent mcp add NAME --url URL [--header 'Name: value']`, "
         "`%agent mcp add NAME --json '{\"command\": ...}'` or `%agent mcp remove NAME`")


def run(agent: Agent, text: str) -> str:
    """Carry out one ``%agent mcp`` line; the text to print."""
    manager = agent.mcp
    if manager is None:
        raise UsageError("this agent was made with mcp=False, so it has no MCP servers")
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise UsageError(f"{exc}; {USAGE}") from None
    if not words or words[0] in ("list", "ls"):
        lines = [s.line() for s in manager.status()]
        return "\n".join(lines) if lines else ("no MCP servers configured; add one with "
                                                "`%agent mcp add NAME -- COMMAND ARGS...` or "
                                                "`%agent mcp add NAME --url URL`")
    verb, rest = words[0], words[1:]
    if verb == "remove" and len(rest) == 1:
        from agent_ext.mcp.store import remove_server  # noqa: PLC0415

        known = manager.forget(rest[0])
        saved = remove_server(agent.cwd, rest[0])
        if not known and not saved:
            raise UsageError(f"there is no MCP server {rest[0]!r}; `%agent mcp` lists them")
        return f"removed MCP server {rest[0]!r}" + (" (and from .mcp.json)" if saved else "")
    if verb == "add" and rest:
        name, entry, save = _entry(rest)
        from agent_ext.mcp import McpConfigError  # noqa: PLC0415

        try:
            config = manager.configure(name, entry, save_in=agent.cwd if save else None)
        except McpConfigError as exc:
            raise UsageError(str(exc)) from None
        if save:  # the user's own server: project trust does not withhold it
            agent.keep_own_server(name)
        where = f", saved in {config.source}" if save else ""
        return (f"MCP server {name!r} added{where}; it connects when the next %%agent cell "
                "runs")
    raise UsageError(USAGE)


def _entry(words: list[str]) -> tuple[str, dict[str, Any], bool]:
    """The server name, its ``mcpServers`` entry and whether to save it, from the words."""
    name, rest = words[0], words[1:]
    save = "--no-save" not in rest
    rest = [w for w in rest if w != "--no-save"]
    if rest[:1] == ["--json"] and len(rest) == 2:
        try:
            entry = json.loads(rest[1])
        except ValueError as exc:
            raise UsageError(f"--json is not valid JSON ({exc}); {USAGE}") from None
        if not isinstance(entry, dict):
            raise UsageError(f"--json must be an object; {USAGE}")
        return name, entry, save
    if rest[:1] == ["--url"] and len(rest) >= 2:
        headers: dict[str, str] = {}
        extra = rest[2:]
        kind = "sse" if "--sse" in extra else "http"
        extra = [w for w in extra if w != "--sse"]
        while extra[:1] == ["--header"] and len(extra) >= 2:
            key, _, value = extra[1].partition(":")
            headers[key.strip()] = value.strip()
            extra = extra[2:]
        if extra:
            raise UsageError(f"unexpected {' '.join(extra)!r}; {USAGE}")
        return name, {"type": kind, "url": rest[1], "headers": headers}, save
    if rest[:1] == ["--"] and len(rest) >= 2:
        return name, {"command": rest[1], "args": rest[2:]}, save
    raise UsageError(USAGE)

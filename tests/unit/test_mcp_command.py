"""``%agent mcp`` add, list and remove against a real stdio MCP server."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from IPython.core.error import UsageError

from agent_ext import Agent
from agent_ext.jupyter.mcp_command import run
from agent_ext.models import ScriptedModel, call
from tests.mcp_servers.harness import stdio_config, wait_gone


async def test_add_connects_on_the_next_run_and_remove_stops_it(tmp_path: Path) -> None:
    cfg = stdio_config("demo")
    model = ScriptedModel([call("mcp__demo__lookup_weather", {"city": "Rome"}, id="w"), "ok"])
    agent = Agent(model, cwd=tmp_path, plugins=False)
    try:
        assert "no MCP servers configured" in run(agent, "")
        line = f"add demo -- {shlex.quote(cfg.command)} {shlex.quote(cfg.args[0])}"
        assert "connects when the next %%agent cell runs" in run(agent, line)
        saved = json.loads((tmp_path / ".mcp.json").read_text())
        assert saved["mcpServers"]["demo"]["command"] == cfg.command
        result = await agent.run("weather in Rome")
        assert "Rome" in result.tool_calls[0][1].text
        assert "demo: connected" in run(agent, "list")
        pids = [s.pid for s in agent.mcp.status() if s.pid]  # type: ignore[union-attr]
        assert run(agent, "remove demo") == "removed MCP server 'demo' (and from .mcp.json)"
        assert not any(n.startswith("mcp__demo__") for n in agent.registry.names())
        assert "demo" not in json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]
        assert await wait_gone(pids) == []
    finally:
        await agent.aclose()


@pytest.mark.parametrize("line", ["add", "add x --url", "add x --json '[1]'", "remove",
                                  "remove nope", "frobnicate", "add x --json '{bad'"])
async def test_usage_errors_say_what_to_type(tmp_path: Path, line: str) -> None:
    agent = Agent(ScriptedModel([]), cwd=tmp_path, plugins=False)
    with pytest.raises(UsageError):
        run(agent, line)
    await agent.aclose()

"""An Agent with a ScriptedModel and the real stdio test server: search, approve, call, read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_ext import Agent
from agent_ext.agent import ApprovalRequest
from agent_ext.agent.events import Event, Notice
from agent_ext.core import ImagePart
from agent_ext.models import ScriptedModel, call
from agent_ext.models.types import ModelRequest
from tests.mcp_servers.harness import attach_mcp, stdio_config, wait_gone

pytestmark = pytest.mark.timeout(90)


def request_chars(request: ModelRequest) -> int:
    """The whole request a model receives: system prompt, declarations JSON and messages."""
    tools = json.dumps([t.to_dict() for t in request.tools])
    messages = json.dumps([repr(m) for m in request.messages])
    return len(request.system) + len(tools) + len(messages)


async def test_the_agent_finds_approves_and_calls_mcp_tools(tmp_path: Path) -> None:
    approvals: list[ApprovalRequest] = []

    def approve(request: ApprovalRequest) -> str:
        approvals.append(request)
        return "approve"

    model = ScriptedModel([
        call("tool_search", {"query": "echo text back"}, id="s1"),
        call("mcp__demo__echo", {"text": "hello"}, id="c1"),
        call("tool_search", {"query": "select:mcp__demo__red_square"}, id="s2"),
        call("mcp__demo__red_square", {}, id="c2"),
        call("read_file", {"file_path": "mcp://demo/res://greeting"}, id="r1"),
        "done",
    ])
    agent = Agent(model, cwd=tmp_path, approver=approve, plugins=False)
    before = agent.request()
    manager = await attach_mcp(agent, [stdio_config()])
    try:
        first = agent.request()
        assert first.tools == before.tools
        assert "mcp__demo__{" in first.system and "echo" in first.system
        result = await agent.run("use the demo server")
        assert result.stop_reason == "end", result.error
        results = {c.id: r for c, r in result.tool_calls}
        assert "mcp__demo__echo" in results["s1"].text
        assert results["c1"].text == "echo: hello"
        parts = results["c2"].parts
        assert any(isinstance(p, ImagePart) and p.data.startswith(b"\x89PNG") for p in parts)
        assert "Hello from the demo server" in results["r1"].text
        assert [a.tool_name for a in approvals] == ["mcp__demo__echo", "mcp__demo__red_square"]
        assert approvals[0].details.kind == "mcp"
        assert approvals[0].scopes == ("tool", "server")
        sent = model.requests
        assert not any(t.name.startswith("mcp__") for t in sent[0].tools)
        assert "mcp__demo__echo" in [t.name for t in sent[1].tools]
        # The first turn adds the session context and the prompt to what `before` held.
        assert request_chars(sent[0]) <= request_chars(before) + len(
            agent.registry.deferred_summary()) + len(agent.session_context()) + 200
    finally:
        await manager.aclose()
        await agent.aclose()


async def test_the_agent_survives_a_crash_mid_call(tmp_path: Path) -> None:
    events: list[Event] = []
    model = ScriptedModel([
        call("mcp__demo__crash", {}, id="boom"),
        call("mcp__demo__echo", {"text": "after"}, id="after"),
        "done",
    ])
    agent = Agent(model, cwd=tmp_path, approver=lambda r: "approve", plugins=False,
                  on_event=events.append)
    manager = await attach_mcp(agent, [stdio_config("demo", "--spawn-child")])
    try:
        result = await agent.run("crash it, then try again")
        results = {c.id: r for c, r in result.tool_calls}
        assert results["boom"].error is not None
        assert results["boom"].error.code == "mcp_server_disconnected"
        assert results["after"].text == "echo: after"
        notes = [e.text for e in events if isinstance(e, Notice)]
        assert sum("stopped" in n for n in notes) == 1
    finally:
        await manager.aclose()
        await agent.aclose()


async def test_a_rejected_call_never_reaches_the_server(tmp_path: Path) -> None:
    model = ScriptedModel([call("mcp__demo__echo", {"text": "no"}, id="c1"), "ok"])
    agent = Agent(model, cwd=tmp_path, plugins=False)
    manager = await attach_mcp(agent, [stdio_config()])
    try:
        result = await agent.run("try")
        [(_, refused)] = result.tool_calls
        assert refused.error is not None and "echo: no" not in refused.text
    finally:
        await manager.aclose()
        await agent.aclose()


async def test_allow_rules_name_the_server_or_the_tool(tmp_path: Path) -> None:
    model = ScriptedModel([call("mcp__demo__echo", {"text": "ruled"}, id="c1"),
                           call("mcp__demo__lookup_weather", {"city": "Oslo"}, id="c2"), "ok"])
    agent = Agent(model, cwd=tmp_path, plugins=False,
                  rules={"allow": ["mcp__demo"], "deny": ["mcp__demo__lookup_weather"]})
    manager = await attach_mcp(agent, [stdio_config()])
    try:
        result = await agent.run("go")
        results = {c.id: r for c, r in result.tool_calls}
        assert results["c1"].text == "echo: ruled"
        assert results["c2"].error is not None and "denied" in results["c2"].text
    finally:
        await manager.aclose()
        await agent.aclose()


async def test_servers_in_mcp_json_start_with_the_first_run_and_stop_with_aclose(
        tmp_path: Path) -> None:
    cfg = stdio_config("proj")
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": {
        "command": cfg.command, "args": list(cfg.args)}}}))
    model = ScriptedModel([call("mcp__proj__lookup_weather", {"city": "Oslo"}, id="w"), "done"])
    agent = Agent(model, cwd=tmp_path, plugins=False, trust_project=True)
    assert agent.mcp is not None and "mcp__proj" not in agent.system_prompt()  # not started yet
    result = await agent.run("weather in Oslo")
    assert "mcp__proj__{" in model.requests[0].system  # the first request already names them
    assert "Oslo" in result.tool_calls[0][1].text  # read-only hint: ran unasked
    pids = [s.pid for s in agent.mcp.status() if s.pid]
    assert pids
    await agent.aclose()
    assert await wait_gone(pids) == []

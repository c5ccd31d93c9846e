"""The foundation's Agent: one call through the whole pipeline, and a scripted run."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from agent_ext import Agent, Kind, tool
from agent_ext.agent import ApprovalRequest
from agent_ext.core import ErrorCode
from agent_ext.models import ScriptedModel, call

from .helpers import echo_tool


@tool(kind=Kind.READ, read_only=True)
def peek(key: str) -> str:
    """Peek at a value."""
    return f"value of {key}"


@tool
def poke(key: str) -> str:
    """Change a value."""
    return f"changed {key}"


@tool(defer=False)
def explode() -> str:
    """Always fails."""
    raise RuntimeError("kaboom")


def agent(tmp_path: Path, **kw: object) -> Agent:
    kw.setdefault("model", ScriptedModel([]))
    a = Agent(cwd=tmp_path, plugins=False, **kw)  # type: ignore[arg-type]
    for t in (peek, poke, explode):
        a.registry.register(t)
    return a


async def test_deferred_tool_called_by_exact_name_runs_and_counts_as_revealed(tmp_path: Path) -> None:
    a = agent(tmp_path)
    assert "peek" not in [d.name for d in a.registry.declarations()]
    result = await a.call_tool("peek", {"key": "k"})
    assert result.text == "value of k"
    assert "peek" in a.registry.revealed
    assert "peek" in [d.name for d in a.registry.declarations()]


async def test_without_an_approver_writes_are_denied(tmp_path: Path) -> None:
    result = await agent(tmp_path).call_tool("poke", {"key": "k"})
    assert result.error is not None and result.error.code == ErrorCode.EXECUTION_DENIED
    assert "needs approval" in result.error.message


async def test_approver_sees_details_and_always_sticks(tmp_path: Path) -> None:
    seen: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> str:
        seen.append(request)
        return "always"

    a = agent(tmp_path, approver=approver)
    assert (await a.call_tool("poke", {"key": "a"})).text == "changed a"
    assert (await a.call_tool("poke", {"key": "b"})).text == "changed b"
    assert len(seen) == 1 and seen[0].tool_name == "poke" and "key='a'" in seen[0].details.summary


async def test_rejection_reaches_the_model(tmp_path: Path) -> None:
    async def approver(request: ApprovalRequest) -> str:
        return "reject"

    result = await agent(tmp_path, approver=approver).call_tool("poke", {"key": "a"})
    assert result.error is not None and "rejected" in result.error.message


async def test_unknown_tool_lists_close_names_and_tool_search(tmp_path: Path) -> None:
    result = await agent(tmp_path).call_tool("peak", {"key": "k"})
    assert result.error is not None and result.error.code == ErrorCode.UNKNOWN_TOOL
    assert "'peek'" in result.error.message and "tool_search" in result.error.message


async def test_tool_exception_becomes_error_result(tmp_path: Path) -> None:
    async def approver(request: ApprovalRequest) -> str:
        return "approve"

    result = await agent(tmp_path, approver=approver).call_tool("explode", {})
    assert result.error is not None and result.error.code == ErrorCode.UNHANDLED_EXCEPTION
    assert "kaboom" in result.error.message


async def test_scripted_run_finds_a_tool_then_calls_it(tmp_path: Path) -> None:
    model = ScriptedModel([
        call("tool_search", {"query": "peek value"}, id="1"),
        call("peek", '{"key": "answer"}', id="2"),
        "The value is known.",
    ])
    a = agent(tmp_path, model=model)
    a.registry.register_external("srv", echo_tool("unrelated"))
    run = await a.run("what is the value?")
    assert run.text == "The value is known."
    assert [c.name for c, _ in run.tool_calls] == ["tool_search", "peek"]
    assert run.tool_calls[1][1].text == "value of answer"
    first, second, third = model.requests
    first_tools = [d.name for d in first.tools]
    assert "explode" in first_tools and "tool_search" in first_tools and "peek" not in first_tools
    assert "peek" in first.system and "mcp__srv__unrelated" in first.system
    assert "peek" in [d.name for d in second.tools]
    assert [m.role for m in run.messages] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert third.messages[-1].tool_returns[0].content[0].text == "value of answer"  # type: ignore[union-attr]
    await a.aclose()


async def test_a_session_that_never_spills_leaves_no_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spills = tmp_path / "tmp"
    spills.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spills))
    a = agent(tmp_path / "work")
    assert (await a.call_tool("peek", {"key": "k"})).text == "value of k"
    assert list(spills.iterdir()) == []
    await a.aclose()

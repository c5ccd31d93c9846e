"""The tool_search tool: select mode, keyword mode, reveal with rollback, escaping."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import time
from typing import Any

import pytest

from agent_ext.core import ErrorCode, ExecControl, FunctionTool, Registry, ToolContext, ToolResult
from agent_ext.tools import register_builtins
from agent_ext.tools.tool_search import MAX_QUERY_WORDS, bounded_query

from .helpers import echo_tool


def registry() -> Registry:
    reg = Registry()
    register_builtins(reg)
    reg.register_external("github", echo_tool("create_pull_request", "Open a new pull request."))
    reg.register_external("github", echo_tool("list_issues", "List issues in a repository."))
    reg.register_external("github", echo_tool("create_issue", "Create a new issue."))
    reg.register_external("slack", echo_tool("post_message", "Post a message to a channel."))
    reg.register(echo_tool("local_helper", "Does <b>local</b> things."))
    reg.register(echo_tool("always_there", defer=False))
    return reg


async def search(reg: Registry, args: Any) -> ToolResult:
    built = reg.get("tool_search").build(args, ToolContext(registry=reg))
    if isinstance(built, ToolResult):
        return built
    return await built.execute(ExecControl())


def schemas(result: ToolResult) -> list[dict[str, Any]]:
    return [json.loads(m) for m in re.findall(r"<function>(.*?)</function>", result.text)]


async def test_select_mode_loads_and_reveals() -> None:
    reg = registry()
    result = await search(reg, {"query": "select:mcp__github__list_issues, 'MCP__SLACK__POST_MESSAGE'"})
    names = [s["name"] for s in schemas(result)]
    assert names == ["mcp__github__list_issues", "mcp__slack__post_message"]
    assert reg.revealed == frozenset(names)
    assert {"mcp__github__list_issues", "mcp__slack__post_message"} <= {d.name for d in reg.declarations()}


async def test_select_dedupes_reports_missing_and_overflow() -> None:
    reg = registry()
    result = await search(reg, {"query": 'SELECT: "local_helper",local_helper,nope,,always_there,mcp__github__create_issue',
                                "max_results": 3})
    assert [s["name"] for s in schemas(result)] == ["local_helper", "always_there"]
    assert "Not found: nope" in result.text
    assert "mcp__github__create_issue" in result.text.split("Not loaded")[1]


async def test_select_disabled_is_unavailable() -> None:
    reg = registry()
    reg.disable("local_helper")
    result = await search(reg, {"query": "select:local_helper"})
    assert "Unavailable" in result.text and "local_helper" in result.text
    assert schemas(result) == []


async def test_keyword_mode_finds_and_reveals() -> None:
    reg = registry()
    result = await search(reg, {"query": "open pull request"})
    found = [s["name"] for s in schemas(result)]
    assert found[0] == "mcp__github__create_pull_request"
    assert set(found) <= reg.revealed


async def test_keyword_overflow_is_reported() -> None:
    reg = registry()
    result = await search(reg, {"query": "issue", "max_results": 1})
    assert len(schemas(result)) == 1
    assert "more tool(s) matched" in result.text


async def test_revealed_tools_stay_searchable() -> None:
    reg = registry()
    await search(reg, {"query": "select:mcp__slack__post_message"})
    again = await search(reg, {"query": "post message slack"})
    assert schemas(again)[0]["name"] == "mcp__slack__post_message"


async def test_no_match_is_a_plain_message() -> None:
    result = await search(registry(), {"query": "quantum teleportation"})
    assert not result.is_error
    assert "No deferred tools match" in result.text


async def test_schemas_escape_angle_brackets() -> None:
    result = await search(registry(), {"query": "select:local_helper"})
    inner = result.text.split("<function>")[1].split("</function>")[0]
    assert "<" not in inner
    assert schemas(result)[0]["description"] == "Does <b>local</b> things."


async def test_blank_and_bad_arguments() -> None:
    reg = registry()
    for args in ({"query": "   "}, {"query": ""}, {}, {"query": "x", "extra": 1}):
        result = await search(reg, args)
        assert result.error is not None and result.error.code == ErrorCode.INVALID_TOOL_PARAMS, args


async def test_max_results_is_clamped() -> None:
    reg = registry()
    for given, expect in ((0, 1), (99, 20), ("3", 3), (2.7, 2), ("inf", 1), (float("nan"), 1)):
        built = reg.get("tool_search").build({"query": "x", "max_results": given}, ToolContext(registry=reg))
        assert not isinstance(built, ToolResult), given
        assert built.params.max_results == expect, given


async def test_reveal_is_rolled_back_when_the_refresh_fails() -> None:
    reg = registry()
    state = {"fail": False}

    def flaky() -> FunctionTool:
        if state["fail"]:
            raise ImportError("plugin vanished")
        return echo_tool("flaky_tool", "A flaky plugin tool.")

    reg.register_lazy("flaky_tool", flaky, defer=True, server="plugin")
    # Another lazy deferred tool that is already revealed but cannot be declared any more.
    calls = {"n": 0}

    def breaks_later() -> FunctionTool:
        calls["n"] += 1
        raise ImportError("gone")

    reg.register_lazy("breaks_later", breaks_later, defer=True)
    reg._revealed.add("breaks_later")  # revealed earlier in the session
    before = reg.revealed
    result = await search(reg, {"query": "select:flaky_tool"})
    assert result.error is not None and result.error.code == ErrorCode.TOOL_LOAD_FAILED
    assert reg.revealed == before
    assert "flaky_tool" not in reg.revealed


def test_a_query_is_bounded_and_deduplicated() -> None:
    assert bounded_query("mail the weekly report") == ("mail the weekly report", "")
    query, note = bounded_query("email " * 20_000)
    assert query == "email" and "first 1 distinct words" in note
    many = " ".join(f"w{i}" for i in range(500))
    query, note = bounded_query(many)
    assert len(query.split()) == MAX_QUERY_WORDS and note


async def test_a_huge_repeated_query_does_not_stall_the_loop() -> None:
    reg = Registry()
    register_builtins(reg)
    for i in range(200):
        reg.register_external("srv", FunctionTool(lambda **kw: "", name=f"tool_{i}",
                                                  description=f"does thing {i} with email",
                                                  parameters={"type": "object",
                                                              "properties": {}}))
    tool = reg.get("tool_search")
    invocation = tool.build({"query": "email " * 20_000}, ToolContext(registry=reg))
    assert not isinstance(invocation, ToolResult)
    ticks: list[float] = []

    async def ticker() -> None:
        while True:
            ticks.append(time.perf_counter())
            await asyncio.sleep(0.01)

    task = asyncio.ensure_future(ticker())
    try:
        result = await invocation.execute(ExecControl())
    finally:
        task.cancel()
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    assert not result.is_error, result.text
    assert max(gaps, default=0) < 0.1


async def test_even_a_short_search_runs_off_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first search of a session builds the index, so no search runs on the loop."""
    import threading
    reg = Registry()
    register_builtins(reg)
    reg.register_external("srv", FunctionTool(lambda **kw: "", name="send_mail",
                                              description="send an email",
                                              parameters={"type": "object", "properties": {}}))
    threads: list[threading.Thread] = []
    real = reg.search

    def recording(*args: Any, **kw: Any) -> Any:
        threads.append(threading.current_thread())
        return real(*args, **kw)

    monkeypatch.setattr(reg, "search", recording)
    invocation = reg.get("tool_search").build({"query": "email"}, ToolContext(registry=reg))
    assert not isinstance(invocation, ToolResult)
    result = await invocation.execute(ExecControl())
    assert "send_mail" in result.text
    assert threads and threads[0] is not threading.main_thread()

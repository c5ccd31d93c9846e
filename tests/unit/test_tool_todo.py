"""todo_write: replaces the session's list, one item in progress at most, a short confirmation."""

from __future__ import annotations

from typing import Any

import pytest

from agent_ext.core import ErrorCode, ExecControl, ToolContext, ToolResult
from agent_ext.tools.todo_write import TodoItem, TodoList, TodoWriteTool

pytestmark = pytest.mark.timeout(30)


async def write(ctx: ToolContext, todos: Any) -> ToolResult:
    built = TodoWriteTool().build({"todos": todos}, ctx)
    if isinstance(built, ToolResult):
        return built
    assert built.tier().name == "READ" and built.default_permission().value == "allow"
    return await built.execute(ExecControl())


async def test_replaces_the_list_and_confirms() -> None:
    ctx = ToolContext()
    heard: list[tuple[TodoItem, ...]] = []
    first = await write(ctx, [{"content": "Read the code", "status": "completed"},
                              {"content": "Fix the bug", "status": "in_progress",
                               "active_form": "Fixing the bug"},
                              {"content": "Run tests", "status": "pending"}])
    assert not first.is_error
    assert first.text == ("Todo list updated (1/3 completed):\n[x] Read the code\n"
                          "[>] Fix the bug\n[ ] Run tests")
    todos = ctx.service(TodoList)
    assert todos is not None
    todos.add_listener(heard.append)
    assert todos.current() == TodoItem("Fix the bug", "in_progress", "Fixing the bug")
    await write(ctx, [{"content": "Run tests", "status": "in_progress"}])
    assert [i.content for i in todos.items] == ["Run tests"]
    assert heard == [todos.items]


async def test_at_most_one_in_progress() -> None:
    ctx = ToolContext()
    result = await write(ctx, [{"content": "a", "status": "in_progress"},
                               {"content": "b", "status": "in_progress"}])
    assert result.error is not None and result.error.code == ErrorCode.INVALID_TOOL_PARAMS
    assert "keep exactly one in_progress" in result.text
    assert ctx.service(TodoList) is None


async def test_validation_and_json_string_arguments() -> None:
    ctx = ToolContext()
    bad = await write(ctx, [{"content": "x", "status": "done"}])
    assert bad.is_error and "status" in bad.text
    blank = await write(ctx, [{"content": "   ", "status": "pending"}])
    assert blank.is_error and "blank" in blank.text
    ok = await write(ctx, '[{"content": "x", "status": "pending"}]')
    assert not ok.is_error and "Mark the item you work on next in_progress" in ok.text
    cleared = await write(ctx, [])
    assert cleared.text == "Todo list cleared."

"""todo_write: the model's task list for the session, replaced whole on every call.

A visible plan keeps long tasks on track and shows the user what the agent is doing; keeping
exactly one item in progress makes "what now" unambiguous. The transcript renders the list from
the call's arguments; the session's copy lives in the ``TodoList`` service.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agent_ext.core import (
    ExecControl,
    Kind,
    Params,
    Tool,
    ToolContext,
    ToolInvocation,
    ToolResult,
)

Status = Literal["pending", "in_progress", "completed"]
MAX_ITEMS = 100
_MARKS = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]"}


@dataclass(frozen=True)
class TodoItem:
    """One task: what to do, where it stands, and the "-ing" form shown while it runs."""

    content: str
    status: Status = "pending"
    active_form: str = ""

    def line(self) -> str:
        return f"{_MARKS[self.status]} {self.content}"


class TodoList:
    """The session's current task list; listeners hear of every replacement."""

    def __init__(self) -> None:
        self._items: tuple[TodoItem, ...] = ()
        self._lock = threading.Lock()
        self._listeners: list[Callable[[tuple[TodoItem, ...]], None]] = []

    @property
    def items(self) -> tuple[TodoItem, ...]:
        return self._items

    def replace(self, items: tuple[TodoItem, ...]) -> None:
        with self._lock:
            self._items = items
        for listener in list(self._listeners):
            listener(items)

    def add_listener(self, callback: Callable[[tuple[TodoItem, ...]], None]) -> None:
        self._listeners.append(callback)

    def current(self) -> TodoItem | None:
        """The item in progress, if any."""
        return next((i for i in self._items if i.status == "in_progress"), None)

    def render(self) -> str:
        return "\n".join(item.line() for item in self._items)


class TodoInput(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    content: str = Field(min_length=1)
    status: Status
    active_form: str | None = Field(default=None, description="As it runs: Running tests.")


class TodoWriteParams(Params):
    todos: list[TodoInput] = Field(max_length=MAX_ITEMS)


class TodoWriteTool(Tool[TodoWriteParams]):
    name = "todo_write"
    description = (
        "Replace your task list with the whole updated list. Use it for work of three or more "
        "steps, with one item in_progress at a time.")
    kind = Kind.OTHER
    params_model = TodoWriteParams
    read_only = True
    search_hint = "todo task list plan steps progress"

    def check(self, params: TodoWriteParams, ctx: ToolContext) -> str | None:
        running = [t.content for t in params.todos if t.status == "in_progress"]
        if len(running) > 1:
            names = "; ".join(running)
            return (f"{len(running)} items are in_progress ({names}); keep exactly one "
                    "in_progress and mark the others pending or completed")
        blank = [i for i, t in enumerate(params.todos) if not t.content.strip()]
        if blank:
            return f"todos[{blank[0]}].content is blank; describe the task"
        return None

    def invocation(self, params: TodoWriteParams,
                   ctx: ToolContext) -> ToolInvocation[TodoWriteParams]:
        return _TodoWriteInvocation(self, params, ctx)


def todo_list(ctx: ToolContext) -> TodoList:
    """The session's list, created on first use."""
    return ctx.service_or_create(TodoList, TodoList)


class _TodoWriteInvocation(ToolInvocation[TodoWriteParams]):
    def description(self) -> str:
        return f"todo_write ({len(self.params.todos)} items)"

    async def execute(self, control: ExecControl) -> ToolResult:
        items = tuple(TodoItem(t.content.strip(), t.status, (t.active_form or "").strip())
                      for t in self.params.todos)
        todos = todo_list(self.ctx)
        todos.replace(items)
        if not items:
            return ToolResult(llm_content="Todo list cleared.", display="Todo list cleared.")
        done = sum(1 for i in items if i.status == "completed")
        text = (f"Todo list updated ({done}/{len(items)} completed):\n{todos.render()}")
        if done < len(items) and todos.current() is None:
            text += "\nMark the item you work on next in_progress."
        return ToolResult(llm_content=text, display=todos.render())

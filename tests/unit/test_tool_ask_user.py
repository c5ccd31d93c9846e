"""ask_user: questions go to the session's Asker; headless sessions get a proceed-on-your-own result."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agent_ext.core import ExecControl, ToolContext, ToolResult
from agent_ext.core.interaction import Answer, Asker, Option, Question
from agent_ext.tools.ask_user import AskUserTool

pytestmark = pytest.mark.timeout(30)


class FakeAsker:
    def __init__(self, answer: Answer | None, delay: float = 0) -> None:
        self.answer = answer
        self.delay = delay
        self.asked: list[Question] = []
        self.cancelled = False

    async def __call__(self, question: Question) -> Answer | None:
        self.asked.append(question)
        try:
            await asyncio.sleep(self.delay)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return self.answer


def context(asker: Any = None) -> ToolContext:
    ctx = ToolContext()
    if asker is not None:
        ctx.services[Asker] = asker
    return ctx


async def ask(ctx: ToolContext, args: dict[str, Any],
              control: ExecControl | None = None) -> ToolResult:
    built = AskUserTool().build(args, ctx)
    if isinstance(built, ToolResult):
        return built
    assert built.tier().name == "READ" and built.default_permission().value == "allow"
    return await built.execute(control or ExecControl())


async def test_question_reaches_the_asker_and_the_answer_the_model() -> None:
    asker = FakeAsker(Answer(("Postgres",), "but keep SQLite for tests"))
    result = await ask(context(asker), {
        "question": "Which database?", "multi_select": "false",
        "options": [{"label": "Postgres", "description": "server"}, {"label": "SQLite"}]})
    assert asker.asked == [Question("Which database?",
                                    (Option("Postgres", "server"), Option("SQLite")),
                                    multi_select=False, allow_text=True)]
    assert not result.is_error
    assert result.text == ('The user chose: "Postgres"\n'
                           "The user wrote: but keep SQLite for tests")


async def test_headless_is_not_an_error() -> None:
    for ctx in (context(), context(FakeAsker(None))):
        result = await ask(ctx, {"question": "Go on?"})
        assert not result.is_error
        assert result.text.startswith("No answer: the user could not be asked in this session "
                                      "(headless)")
        assert "best judgement" in result.text


async def test_dismissed_and_failing_askers() -> None:
    dismissed = await ask(context(FakeAsker(Answer())), {"question": "Go on?"})
    assert "closed the question without answering" in dismissed.text

    async def broken(question: Question) -> Answer | None:
        raise RuntimeError("widget gone")

    failed = await ask(context(broken), {"question": "Go on?"})
    assert not failed.is_error and "widget gone" in failed.text


async def test_cancel_withdraws_the_question() -> None:
    asker = FakeAsker(Answer(("x",)), delay=30)
    control = ExecControl()
    task = asyncio.ensure_future(ask(context(asker), {"question": "Wait?"}, control))
    await asyncio.sleep(0.2)
    control.cancelled.set()
    result = await asyncio.wait_for(task, 3)
    assert "withdrawn" in result.text and asker.cancelled


async def test_parameter_checks() -> None:
    ctx = context(FakeAsker(None))
    too_many = await ask(ctx, {"question": "q?", "options": [{"label": str(i)} for i in range(9)]})
    assert too_many.is_error and "options" in too_many.text
    dup = await ask(ctx, {"question": "q?", "options": [{"label": "a"}, {"label": "a "}]})
    assert dup.is_error and "distinct" in dup.text
    no_way = await ask(ctx, {"question": "q?", "allow_text": False})
    assert no_way.is_error and "allow_text" in no_way.text

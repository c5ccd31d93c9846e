"""Pure pieces of the kernel host: prompt interpolation, audit lines, sliced waits, resolvers."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

import pytest

from agent_ext.agent.approval import ApprovalRequest, Decision
from agent_ext.core import ConfirmationDetails
from agent_ext.jupyter.cell import ask
from agent_ext.jupyter.config import AgentExt
from agent_ext.jupyter.frontend import Frontend, State
from agent_ext.jupyter.headless import audit_line, by, headless_decision
from agent_ext.jupyter.interpolate import interpolate
from agent_ext.jupyter.waiting import SLICE, Ticker, resolver, wait_sliced


class Frame:
    shape = (3, 4)

    @property
    def broken(self) -> int:
        raise RuntimeError("no")


NS = {"x": 5, "df": Frame(), "name": "world"}


@pytest.mark.parametrize(("text", "expected"), [
    ("hello {name}", "hello world"),
    ("{x} and {df.shape}", "5 and (3, 4)"),
    ("{missing} {df.nope} {df.broken}", "{missing} {df.nope} {df.broken}"),
    ("code: {'a': {'b': 1}} f'{x + 1}' {x!r} {x:>3}", "code: {'a': {'b': 1}} f'{x + 1}' {x!r} {x:>3}"),
    ("{{x}} {{ {{name}} }}", "{x} { {name} }}"),
    ("def f():\n    return {}\n", "def f():\n    return {}\n"),
    ("{_private}", "{_private}"),
])
def test_interpolate(text: str, expected: str) -> None:
    assert interpolate(text, NS) == expected


def _request() -> ApprovalRequest:
    return ApprovalRequest("c1", "write_note", ConfirmationDetails(
        kind="info", title="Allow write_note?", summary="write_note(path='a')"), "needs approval")


async def test_headless_decisions_and_audit_lines() -> None:
    denied = await headless_decision(_request(), [])
    assert not denied.approved and denied.extra["by"] == "policy"
    assert audit_line(_request(), denied).startswith(
        "[approval] write_note(path='a'): rejected by the headless policy: it needs approval")
    allowed = await headless_decision(_request(), ["WRITE_*"])
    assert audit_line(_request(), allowed) == (
        "[approval] write_note(path='a'): approved by the headless policy")
    assert audit_line(_request(), by(Decision.always("tool"), "user")) == (
        "[approval] write_note(path='a'): always allowed by the user (scope: tool)")
    assert audit_line(_request(), by(Decision.reject("too big"), "user")).endswith(
        "rejected by the user: too big")
    assert audit_line(_request(), by(Decision.approve("new text"), "user")).endswith(
        "approved by the user (with the user's changes)")


async def test_wait_sliced_and_thread_resolver() -> None:
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str] = loop.create_future()
    start = time.monotonic()
    assert not await wait_sliced(future, 0.3)
    assert 0.25 < time.monotonic() - start < 1.0
    resolve = resolver(loop, future)
    threading.Thread(target=lambda: (time.sleep(0.05), resolve("from a thread"))).start()
    assert await wait_sliced(future, 5)
    assert future.result() == "from a thread"
    resolve("again")  # later answers are ignored
    assert future.result() == "from a thread"


async def test_ticker_follows_its_task() -> None:
    ticker = Ticker()
    task = asyncio.ensure_future(asyncio.sleep(SLICE * 2))
    ticker.watch(task)
    assert ticker.active == 1
    await task
    await asyncio.sleep(SLICE * 1.5)
    assert ticker.active == 0
    long = asyncio.ensure_future(asyncio.sleep(10))
    ticker.watch(long)
    ticker.stop()
    assert ticker.active == 0
    long.cancel()


class _Cell:
    """A running cell as the jupyter helpers see it (``jupyter.cell.Cell``), no kernel needed."""

    def __init__(self, frontend: State = "unknown", **settings: float) -> None:
        self.config = AgentExt(ready_timeout=0.3, **settings)
        self.frontend = Frontend()
        self.frontend.state = frontend
        self.shown: list[object] = []
        self.lines: list[str] = []

    def show(self, obj: object) -> None:
        self.shown.append(obj)

    def record(self, line: str) -> None:
        self.lines.append(line)

    def mode(self) -> str:
        return "default"


class _Question:
    """A question widget whose page renders it and answers from another thread."""

    def __init__(self, renders: bool = True, answer: str | None = None) -> None:
        self.last_seen = time.monotonic()
        self.renders, self.answer = renders, answer
        self.withdrawn: list[str] = []
        self._answer: Callable[[str], None] = lambda _a: None

    def on_ready(self, callback: Callable[[], object]) -> None:
        if self.renders:
            threading.Timer(0.05, callback).start()

    def on_answer(self, callback: Callable[[str], None]) -> None:
        if self.answer is not None:
            threading.Timer(0.1, callback, (self.answer,)).start()

    def withdraw(self, note: str) -> None:
        self.withdrawn.append(note)


async def test_ask_waits_in_the_cell_for_the_answer_from_any_thread() -> None:
    cell, widget = _Cell(), _Question(answer="once")
    assert await ask(cell, widget, widget.on_answer, interrupted="x") == ("answered", "once")
    assert cell.shown == [widget] and cell.frontend.present and widget.withdrawn == []


async def test_ask_without_a_frontend_or_an_answer_says_how_it_ended() -> None:
    cell, silent = _Cell(), _Question(renders=False)
    assert await ask(cell, silent, silent.on_answer, interrupted="x") == ("unseen", None)
    assert cell.frontend.absent
    cell = _Cell("present", approval_timeout=0.3)
    unanswered = _Question()
    assert await ask(cell, unanswered, unanswered.on_answer, interrupted="x") == ("timeout", None)
    cell = _Cell("present", page_gone_timeout=0.3)
    left = _Question()
    assert await ask(cell, left, left.on_answer, interrupted="x") == ("gone", None)
    cell = _Cell("present", page_gone_timeout=0.3, approval_timeout=0.6)
    assert await ask(cell, left, left.on_answer, interrupted="x", page_gone=False) == (
        "timeout", None)


async def test_an_interrupted_ask_withdraws_its_question() -> None:
    cell, widget = _Cell("present"), _Question()
    task = asyncio.ensure_future(ask(cell, widget, widget.on_answer, interrupted="stopped"))
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert widget.withdrawn == ["stopped"]

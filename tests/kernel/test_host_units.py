"""Pure pieces of the kernel host: prompt interpolation, audit lines, sliced waits, resolvers."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from agent_ext.agent.approval import ApprovalRequest, Decision
from agent_ext.core import ConfirmationDetails
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

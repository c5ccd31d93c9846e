"""An approval whose page went away, and the approvals of one step asked together, in a real kernel.

The test acts as the browser: a page renders the widget (``ready``) and, while it stays open,
sends ``alive`` every beat. Closing every page is a page that stops sending: within
``AgentExt.page_gone_timeout`` the kernel withdraws the approval, the cell says so and the
agent is told that the user did not answer. A page that stays keeps the approval waiting past
that bound. With no frontend at all after one had been seen (the tab closed between runs) the
bound frees the kernel too.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.kernel.cells import ANSWERED, scripted_agent
from tests.kernel.harness import KernelSession, widget_model

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]
BOUND = 2.0


class Page:
    """A browser page on the kernel: renders each widget, beats while open, may decide."""

    def __init__(self, kernel: KernelSession, *, close_after: float | None = None,
                 decide_after: float | None = None, decision: dict[str, Any] | None = None,
                 render: bool = True) -> None:
        self.kernel = kernel
        self.close_after = close_after
        self.decide_after = decide_after
        self.decision = decision or {"outcome": "approve"}
        self.render = render
        self.cards: list[tuple[str, dict[str, Any]]] = []
        self.beats = 0
        self._last_beat = 0.0

    def on_message(self, kernel: KernelSession, msg: dict[str, Any]) -> None:
        name = widget_model(msg)
        if not name or not self.render:
            return
        comm_id = msg["content"]["comm_id"]
        kernel.send_custom(comm_id, {"type": "ready"})
        if name in ("ConfirmDiffWidget", "ConfirmGroupWidget", "AskUserWidget"):
            self.cards.append((comm_id, msg["content"]["data"]["state"]))

    def during(self, elapsed: float) -> None:
        open_ = self.close_after is None or elapsed < self.close_after
        if not (open_ and self.cards):
            return
        comm_id, state = self.cards[-1]
        if time.monotonic() - self._last_beat >= float(state.get("beat") or 1):
            self._last_beat = time.monotonic()
            self.beats += 1
            self.kernel.send_custom(comm_id, {"type": "alive"})
        if self.decide_after is not None and elapsed >= self.decide_after:
            self.decide_after = None
            for request in state.get("requests") or [None]:
                extra = {"call_id": request["call_id"]} if request else {}
                self.kernel.send_custom(comm_id, {"type": "decision", **self.decision, **extra})


def test_closing_every_page_withdraws_the_approval_within_the_bound(
        kernel: KernelSession, workdir: Path) -> None:
    kernel.ok(f"%load_ext agent_ext\n%config AgentExt.page_gone_timeout = {BOUND}")
    kernel.ok(scripted_agent("note.txt"))
    page = Page(kernel, close_after=0.5)

    run = kernel.execute("%%agent\nwrite the note", on_message=page.on_message,
                         during=page.during, timeout=30)

    assert run.status == "ok", run.text
    assert page.cards, "the approval was shown"
    assert run.seconds < BOUND + 8
    assert not (workdir / "note.txt").exists()
    assert ("withdrawn: the user did not answer: no page showed the request for 2 s"
            in run.stdout)
    results = kernel.ok(ANSWERED).stdout
    assert "write_note(path='note.txt', text='hello') was not run: the user did not answer" \
        in results
    assert "unanswered 0" in results
    # The kernel is free: the next cell runs at once.
    assert kernel.ok("print(6 * 7)", timeout=5).stdout.strip() == "42"


def test_a_page_that_stays_keeps_the_approval_waiting(kernel: KernelSession,
                                                      workdir: Path) -> None:
    kernel.ok(f"%load_ext agent_ext\n%config AgentExt.page_gone_timeout = {BOUND}")
    kernel.ok(scripted_agent("note.txt", "kept"))
    page = Page(kernel, decide_after=3 * BOUND)

    run = kernel.execute("%%agent\nwrite the note", on_message=page.on_message,
                         during=page.during, timeout=30)

    assert run.status == "ok", run.text
    assert page.beats >= 4
    assert (workdir / "note.txt").read_text() == "kept"
    assert "approved by the user" in run.stdout


def test_no_frontend_left_after_one_was_seen_frees_the_kernel(kernel: KernelSession,
                                                              workdir: Path) -> None:
    kernel.ok(f"%load_ext agent_ext\n%config AgentExt.page_gone_timeout = {BOUND}")
    kernel.ok(scripted_agent("first.txt"))
    first = Page(kernel, decide_after=0.2)
    kernel.ok("%%agent\nwrite it", on_message=first.on_message, during=first.during)
    assert (workdir / "first.txt").exists()
    kernel.ok(scripted_agent("second.txt"))
    gone = Page(kernel, render=False)

    run = kernel.execute("%%agent\nwrite it", on_message=gone.on_message, timeout=30)

    assert run.status == "ok", run.text
    assert run.seconds < BOUND + 8
    assert not (workdir / "second.txt").exists()
    assert "withdrawn: the user did not answer" in run.stdout


STEP = '''
import pathlib
import agent_ext
from agent_ext import FunctionTool
from agent_ext.models import ModelResponse, ScriptedModel, ToolCall

def write_note(path: str, text: str) -> str:
    """Write a text file."""
    pathlib.Path(path).write_text(text)
    return "written"

agent = agent_ext.get_agent(model=ScriptedModel([
    ModelResponse(text="", tool_calls=tuple(
        ToolCall.of(f"w{i}", "write_note", {"path": f"n{i}.txt", "text": str(i)})
        for i in range(3))),
    "Done."]))
_ = agent.registry.register(FunctionTool(write_note, defer=False))
'''


def test_one_steps_approvals_are_one_group(kernel: KernelSession, workdir: Path) -> None:
    kernel.ok("%load_ext agent_ext")
    kernel.ok(STEP)
    page = Page(kernel, decide_after=0.3)

    run = kernel.execute("%%agent\nwrite three notes", on_message=page.on_message,
                         during=page.during, timeout=30)

    assert run.status == "ok", run.text
    groups = [s for _, s in page.cards if "requests" in s]
    assert len(page.cards) == 1 and len(groups) == 1, "one card group, not three cards"
    assert [r["call_id"] for r in groups[0]["requests"]] == ["w0", "w1", "w2"]
    assert sorted(p.name for p in workdir.glob("n*.txt")) == ["n0.txt", "n1.txt", "n2.txt"]
    assert run.stdout.count("approved by the user") == 3


def test_a_group_left_by_its_page_is_withdrawn(kernel: KernelSession, workdir: Path) -> None:
    kernel.ok(f"%load_ext agent_ext\n%config AgentExt.page_gone_timeout = {BOUND}")
    kernel.ok(STEP)
    page = Page(kernel, close_after=0.3)

    run = kernel.execute("%%agent\nwrite three notes", on_message=page.on_message,
                         during=page.during, timeout=30)

    assert run.status == "ok", run.text
    assert run.seconds < BOUND + 8
    assert list(workdir.glob("n*.txt")) == []
    assert run.stdout.count("withdrawn: the user did not answer") == 3
    results = json.dumps(kernel.ok(ANSWERED).stdout)
    assert results.count("was not run: the user did not answer") == 3


def test_a_question_left_by_its_page_is_withdrawn(kernel: KernelSession) -> None:
    kernel.ok(f"%load_ext agent_ext\n%config AgentExt.page_gone_timeout = {BOUND}")
    kernel.ok("import agent_ext\nfrom agent_ext.models import ScriptedModel, call\n"
              "agent = agent_ext.get_agent(model=ScriptedModel([call('ask_user', {"
              "'question': 'Which plot?'}), 'Noted.']))")
    page = Page(kernel, close_after=0.3)

    run = kernel.execute("%%agent\nplot it", on_message=page.on_message, during=page.during,
                         timeout=30)

    assert run.status == "ok", run.text
    assert page.cards, "the question was shown"
    assert run.seconds < BOUND + 8
    assert "[question] Which plot?: withdrawn, no page showed it for 2 s" in run.stdout
    assert "The user closed the question without answering" in kernel.ok(ANSWERED).stdout

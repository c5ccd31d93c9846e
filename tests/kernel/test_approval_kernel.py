"""Approvals in a real kernel, the test acting as JupyterLab: ready, then a click, by comm_msg.

The decision travels as an ipywidgets ``custom`` comm message, once on the main shell and once
tagged with a kernel subshell id, as JupyterLab ≥ 4.4 sends widget messages.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.kernel.cells import ANSWERED, scripted_agent
from tests.kernel.harness import KernelSession, widget_model

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]
OUTPUT_TYPES = ("stream", "display_data", "update_display_data", "execute_result", "error")


class Frontend:
    """Answers widget comm_opens like a browser: ``ready`` for each, then a decision."""

    def __init__(self, decision: dict[str, Any] | None, subshell: str | None = None) -> None:
        self.decision = decision
        self.subshell = subshell
        self.widgets: list[str] = []

    def __call__(self, kernel: KernelSession, msg: dict[str, Any]) -> None:
        name = widget_model(msg)
        if not name:
            return
        self.widgets.append(name)
        comm_id = msg["content"]["comm_id"]
        kernel.send_custom(comm_id, {"type": "ready"}, self.subshell)
        if name == "ConfirmDiffWidget" and self.decision is not None:
            kernel.send_custom(comm_id, {"type": "decision", **self.decision}, self.subshell)


@pytest.mark.parametrize("on_subshell", [False, True], ids=["main-shell", "subshell"])
def test_approved_change_lands(kernel: KernelSession, workdir: Path, on_subshell: bool) -> None:
    kernel.ok("%load_ext agent_ext")
    kernel.ok(scripted_agent("note.txt", "approved text"))
    frontend = Frontend({"outcome": "approve"},
                        kernel.create_subshell() if on_subshell else None)

    run = kernel.execute("%%agent\nwrite the note", on_message=frontend)

    assert run.status == "ok", run.text
    assert (workdir / "note.txt").read_text() == "approved text"
    assert frontend.widgets.count("ConfirmDiffWidget") == 1
    assert "TranscriptWidget" in frontend.widgets
    assert ("[approval] write_note(path='note.txt', text='approved text'): approved by the user"
            in run.stdout)
    assert "[agent_ext · scripted]" not in run.stdout  # a frontend: no plain-text transcript
    assert run.of_type("display_data"), "the widgets are displayed in this cell"
    strays = [m for m in run.foreign if m["msg_type"] in OUTPUT_TYPES]
    assert strays == [], "every output of the run is parented to its cell"
    assert "unanswered 0" in kernel.ok(ANSWERED).stdout


def test_rejection_with_feedback(kernel: KernelSession, workdir: Path) -> None:
    kernel.ok("%load_ext agent_ext")
    kernel.ok(scripted_agent("note.txt"))
    frontend = Frontend({"outcome": "reject", "feedback": "not now"})
    run = kernel.execute("%%agent\nwrite the note", on_message=frontend)
    assert run.status == "ok", run.text
    assert not (workdir / "note.txt").exists()
    assert "rejected by the user: not now" in run.stdout
    last = kernel.ok(ANSWERED).stdout
    assert "The user rejected write_note" in last and "not now" in last


def test_frontend_is_remembered(kernel: KernelSession, workdir: Path) -> None:
    """After one ready, a late-rendering widget is waited for instead of denied."""
    kernel.ok("%load_ext agent_ext\n%config AgentExt.ready_timeout = 0.5")
    kernel.ok(scripted_agent("first.txt"))
    kernel.ok("%%agent\nwrite it", on_message=Frontend({"outcome": "approve"}))
    kernel.ok(scripted_agent("second.txt"))
    silent: list[str] = []

    def late(k: KernelSession, msg: dict[str, Any]) -> None:
        if widget_model(msg) == "ConfirmDiffWidget":
            silent.append(msg["content"]["comm_id"])

    def click_later(elapsed: float) -> None:
        if silent and elapsed > 1.5:
            kernel.send_custom(silent.pop(), {"type": "decision", "outcome": "approve"})

    run = kernel.execute("%%agent\nwrite it", on_message=late, during=click_later)
    assert run.status == "ok", run.text
    assert (workdir / "second.txt").exists()
    assert "approved by the user" in run.stdout


def test_ask_user_is_answered_through_its_widget(kernel: KernelSession) -> None:
    kernel.ok("%load_ext agent_ext")
    kernel.ok("import agent_ext\nfrom agent_ext.models import ScriptedModel, call\n"
              "agent = agent_ext.get_agent(model=ScriptedModel([call('ask_user', {"
              "'question': 'Which plot?', 'options': [{'label': 'bar'}, {'label': 'line'}]}),"
              " 'Noted.']))")

    def frontend(k: KernelSession, msg: dict[str, Any]) -> None:
        name = widget_model(msg)
        if name:
            k.send_custom(msg["content"]["comm_id"], {"type": "ready"})
        if name == "AskUserWidget":
            k.send_custom(msg["content"]["comm_id"],
                          {"type": "answer", "choices": ["line"], "text": ""})

    run = kernel.execute("%%agent\nplot it", on_message=frontend)
    assert run.status == "ok", run.text
    assert 'The user chose: "line"' in kernel.ok(ANSWERED).stdout


def test_unanswered_approval_times_out(kernel: KernelSession, workdir: Path) -> None:
    kernel.ok("%load_ext agent_ext\n%config AgentExt.approval_timeout = 0.5")
    kernel.ok(scripted_agent("note.txt"))
    run = kernel.execute("%%agent\nwrite the note", on_message=Frontend(None))
    assert run.status == "ok", run.text
    assert not (workdir / "note.txt").exists()
    assert "rejected by the timeout: no answer within 0.5 s" in run.stdout

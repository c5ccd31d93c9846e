"""Kernel → Interrupt while an approval waits: the run stops cleanly and the session goes on."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.kernel.cells import ANSWERED, scripted_agent
from tests.kernel.harness import Execution, KernelSession, widget_model

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]


def interrupt_during_approval(kernel: KernelSession, code: str = "%%agent\nwrite the note"
                              ) -> tuple[Execution, float]:
    """Run ``code``, answer only ``ready``, interrupt 0.5 s after the approval widget shows.

    Returns the execution and the seconds from the interrupt to the cell's reply.
    """
    shown: list[float] = []
    sent: list[float] = []

    def frontend(k: KernelSession, msg: dict[str, Any]) -> None:
        name = widget_model(msg)
        if name:
            k.send_custom(msg["content"]["comm_id"], {"type": "ready"})
        if name == "ConfirmDiffWidget":
            shown.append(time.monotonic())

    def interrupt(_elapsed: float) -> None:
        if shown and not sent and time.monotonic() - shown[0] > 0.5:
            kernel.km.interrupt_kernel()
            sent.append(time.monotonic())

    run = kernel.execute(code, on_message=frontend, during=interrupt, timeout=30)
    assert sent, f"the approval widget never showed:\n{run.text}"
    return run, time.monotonic() - sent[0]


def test_interrupt_cancels_the_run_and_keeps_the_transcript_valid(
        kernel: KernelSession, workdir: Path) -> None:
    kernel.ok("%load_ext agent_ext")
    kernel.ok(scripted_agent("note.txt"))

    run, latency = interrupt_during_approval(kernel)

    assert run.status == "error"
    assert run.reply["content"]["ename"] == "RunInterrupted"
    assert "KeyboardInterrupt: the agent run was interrupted" in run.text
    assert "Traceback" not in run.text
    assert latency < 10
    assert not (workdir / "note.txt").exists()
    answered = kernel.ok(ANSWERED).stdout
    assert "unanswered 0" in answered
    assert "calls ['call_write_note'] returns ['call_write_note']" in answered
    assert "the user cancelled the run" in answered

    kernel.ok("agent.model = ScriptedModel(['going on'])")
    assert "going on" in kernel.ok("%%agent\ncontinue").text

"""Headless runs (nbclient, as papermill and ``jupyter execute`` use): no hang, audited, safe."""

from __future__ import annotations

import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from tests.kernel.cells import ANSWERED, scripted_agent

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def _outputs(cell: nbformat.NotebookNode) -> str:
    return "".join(o.get("text", "") or o.get("data", {}).get("text/plain", "")
                   for o in cell.outputs)


def _run(cells: list[str], workdir: Path) -> tuple[list[str], float]:
    nb = new_notebook(cells=[new_code_cell(c) for c in cells])
    client = NotebookClient(nb, timeout=60, kernel_name="python3",
                            resources={"metadata": {"path": str(workdir)}})
    start = time.monotonic()
    client.execute()
    return [_outputs(c) for c in nb.cells], time.monotonic() - start


def test_headless_denies_and_records(workdir: Path) -> None:
    outs, seconds = _run(["%load_ext agent_ext", scripted_agent("note.txt"),
                          "%%agent\nwrite the note", ANSWERED], workdir)
    assert not (workdir / "note.txt").exists()
    run = outs[2]
    assert "[approval] write_note(" in run
    assert "rejected by the headless policy" in run
    assert "no frontend answered" in run
    assert "write_note: error (execution_denied)" in run  # the plain-text transcript
    assert "Done." in run
    assert "unanswered 0" in outs[3]
    assert seconds < 45


def test_headless_allow_list(workdir: Path) -> None:
    outs, _ = _run(["%load_ext agent_ext", "%config AgentExt.headless_allow = ['write_*']",
                    scripted_agent("note.txt", "allowed"), "%%agent\nwrite the note"], workdir)
    assert (workdir / "note.txt").read_text() == "allowed"
    assert "approved by the headless policy" in outs[3]


def test_dont_ask_never_waits(workdir: Path) -> None:
    outs, _ = _run(["%load_ext agent_ext", scripted_agent("note.txt"),
                    "%agent mode dontAsk", "%%agent\nwrite the note"], workdir)
    assert not (workdir / "note.txt").exists()
    assert "[permission] Permission denied for write_note(" in outs[3]
    assert "dontAsk" in outs[3]


def test_the_first_headless_run_is_written_once(workdir: Path) -> None:
    outs, _ = _run(["%load_ext agent_ext", scripted_agent("note.txt"),
                    "%%agent\nwrite the note"], workdir)
    assert outs[2].count("Done.") == 1

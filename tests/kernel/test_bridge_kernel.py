"""The bridge comm in a real kernel: opened by the first run that needs a notebook, not before.

No page answers here (no browser), so the notebook read falls back to the .ipynb file and says
so once in the cell.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from tests.kernel.harness import Execution, KernelSession

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

AGENT = '''
import agent_ext
from agent_ext.models import ScriptedModel, call
agent = agent_ext.get_agent(model=ScriptedModel([call("read_file", {{"file_path": {path!r}}}),
                                                 "Done."]))
'''


def _bridge_opens(run: Execution) -> list[dict[str, object]]:
    return [m for m in run.of_type("comm_open")
            if m["content"].get("target_name") == "agent_ext.bridge"]


def test_the_bridge_opens_with_the_first_notebook_read_only(kernel: KernelSession,
                                                           workdir: Path) -> None:
    notebook = workdir / "work.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell("x = 1", id="only")]), notebook)
    (workdir / "note.txt").write_text("hello\n")
    before = [kernel.ok(f"%load_ext agent_ext\n__vsc_ipynb_file__ = {str(notebook)!r}"),
              kernel.ok(AGENT.format(path="note.txt")),
              kernel.ok("%%agent\nread the note", timeout=60),
              kernel.ok(AGENT.format(path="nb://"))]
    assert [_bridge_opens(run) for run in before] == [[], [], [], []]
    assert "Notebook edits" not in before[2].stdout

    read = kernel.ok("%%agent\nread the notebook", timeout=60)
    assert len(_bridge_opens(read)) == 1
    assert f"[agent_ext] Notebook edits go to {notebook} on disk" in read.stdout
    assert "File > Reload Notebook from Disk" in read.stdout

    kernel.ok(AGENT.format(path="nb://"))  # a new session agent: the same bridge serves it
    again = kernel.ok("%%agent\nread it again", timeout=60)
    assert _bridge_opens(again) == [] and "Notebook edits" not in again.stdout

"""The VS Code / headless path: the browser tests' scripted session against the .ipynb file.

No frontend answers the bridge, so the agent reads and edits the notebook file (found through
``__vsc_ipynb_file__``, as VS Code sets it); the saved file must end up exactly as the live
notebook does in the browser tests.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from tests.browser.agent_cells import INSERT, READ, REPLACE

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

SETUP = '''\
%load_ext agent_ext
%config AgentExt.headless_allow = ['notebook_edit']
__vsc_ipynb_file__ = {path!r}
import agent_ext
from agent_ext.models import ScriptedModel, call
agent = agent_ext.get_agent(model=ScriptedModel([
{steps}
    "Done.",
]))
'''


def test_the_scripted_session_lands_in_the_saved_file(workdir: Path) -> None:
    path = workdir / "edits_file.ipynb"
    cells = [
        new_code_cell(SETUP.format(path=str(path), steps="\n".join((READ, REPLACE, INSERT))),
                      id="setup"),
        new_code_cell("total = 1 + 1", id="target"),
        new_code_cell("%%agent\nMake the total 42 and say so above it.", id="prompt"),
    ]
    nbformat.write(new_notebook(cells=cells), path)
    executed = nbformat.read(path, as_version=4)
    NotebookClient(executed, timeout=60, kernel_name="python3",
                   resources={"metadata": {"path": str(workdir)}}).execute()
    log = "".join(o.get("text", "") for o in executed.cells[2].outputs)
    assert "approved by the headless policy" in log

    saved = nbformat.read(path, as_version=4)
    nbformat.validate(saved)
    assert [c.id for c in saved.cells][:2] == ["setup", "target"]
    assert saved.cells[1].source == "total = 40 + 2\nprint(total)"
    assert saved.cells[1].outputs == [] and saved.cells[1].execution_count is None
    inserted = saved.cells[2]
    assert inserted.cell_type == "markdown" and inserted.source == "## Fixed by the agent"
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", inserted.id)
    assert [c.id for c in saved.cells][3:] == ["prompt"]
    assert saved.cells[3].source == cells[2].source


def test_undo_and_history_in_a_kernel_take_back_the_cell_edits(workdir: Path) -> None:
    path = workdir / "undo_file.ipynb"
    cells = [
        new_code_cell(SETUP.format(path=str(path), steps="\n".join((READ, REPLACE, INSERT))),
                      id="setup"),
        new_code_cell("total = 1 + 1", id="target"),
        new_code_cell("%%agent\nMake the total 42 and say so above it.", id="prompt"),
        new_code_cell("%agent history", id="history"),
        new_code_cell("%agent undo", id="undo1"),
        new_code_cell("%agent undo", id="undo2"),
        new_code_cell("%agent undo", id="undo3"),
    ]
    nbformat.write(new_notebook(cells=cells), path)
    executed = nbformat.read(path, as_version=4)
    NotebookClient(executed, timeout=60, kernel_name="python3",
                   resources={"metadata": {"path": str(workdir)}}).execute()
    said = ["".join(o.get("text", "") for o in c.outputs) for c in executed.cells[3:]]
    history = said[0].splitlines()
    assert history[0].startswith("changes, oldest first")
    assert history[1].endswith("edited cell 2 · [ ] · `total = 40 + 2` in undo_file.ipynb")
    assert re.search(r"inserted cell 3 · markdown · `## Fixed by the agent` in undo_file\.ipynb"
                     r"  ← next to undo$", history[2])
    assert "conversation:" in said[0]
    assert said[1].startswith("Undone: removed cell 3 · markdown · `## Fixed by the agent`")
    assert said[2].startswith("Undone: cell 2 · [ ] · `total = 1 + 1` in undo_file.ipynb")
    assert said[3].startswith("Nothing to undo")
    saved = nbformat.read(path, as_version=4)
    assert [(c.id, c.source) for c in saved.cells] == [(c.id, c.source) for c in cells]

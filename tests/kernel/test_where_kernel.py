"""Where the agent is, in a real kernel: its cell, the cell above, the last error, user edits.

The test is the frontend: it sends each cell with its ``cellId`` (as JupyterLab does) and saves
the notebook file as the user's tab would; no bridge answers, so the agent reads and edits the
file. The scripted model only follows the hints it is given: "fix the error above" must work
from the first request, with one read of the notebook.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from tests.kernel.harness import Execution, KernelSession

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

BUGGY = 'total = sum([1, 2, "3"])\nprint(total)'

SETUP = '''\
%load_ext agent_ext
%config AgentExt.headless_allow = ['notebook_edit']
__vsc_ipynb_file__ = {path!r}
import json, re
import agent_ext
from agent_ext.models import ModelResponse, ScriptedModel, call

firsts = []

def follow(request):
    """A model that does what the prompt's hints say, and nothing it would have to guess."""
    msgs = request.messages
    start = max(i for i, m in enumerate(msgs) if m.role == "user" and not m.tool_returns)
    where = "\\n".join(p.text for p in msgs[start].parts if "where you are" in p.text)
    returns = [r for m in msgs[start:] for r in m.tool_returns]
    if not returns:
        firsts.append(where)
    if "fix the error above" not in msgs[start].parts[-1].text:
        return ModelResponse(text="Noted.")
    if not returns:
        hint = re.search(r"read_file (\\{{.*?\\}})", where)
        if hint is None:
            return ModelResponse(text="No hint to read the notebook.")
        return call("read_file", json.loads(hint.group(1)), id="read")
    if len(returns) == 1:
        above = re.search(r"The cell above, cell \\d+ (?:\\[\\d+\\] )?\\(id (\\S+)\\).*?```\\n(.*?)\\n```",
                          where, re.S)
        error = re.search(r"The last error in this kernel, from .*?the cell above: (\\w+)", where)
        if above is None or error is None or error.group(1) != "TypeError":
            return ModelResponse(text="I cannot tell which error you mean.")
        return call("notebook_edit", {{"cell_id": above.group(1),
                                      "new_source": above.group(2).replace('"3"', "3")}},
                    id="fix")
    return ModelResponse(text="Fixed. " + returns[-1].content[0].text)

agent = agent_ext.get_agent(model=ScriptedModel(fn=follow))
'''

DUMP = '''
print("FIRSTS", json.dumps(firsts))
print("CALLS", json.dumps([c.name for m in agent.messages for c in m.tool_calls]))
print("RESULTS", json.dumps([r.content[0].text for m in agent.messages for r in m.tool_returns]))
'''


def _error_output(run: Execution) -> Any:
    content = run.of_type("error")[0]["content"]
    return new_output("error", ename=content["ename"], evalue=content["evalue"],
                      traceback=content["traceback"])


def _dump(kernel: KernelSession) -> dict[str, Any]:
    out = kernel.ok(DUMP).stdout
    found = {}
    for line in out.splitlines():
        key, _, value = line.partition(" ")
        found[key] = json.loads(value)
    return found


def _save(path: Path, cells: list[Any]) -> None:
    """Save the notebook as the user's tab would."""
    nbformat.write(new_notebook(cells=cells), path)


def test_fix_the_error_above_in_one_read(kernel: KernelSession, workdir: Path) -> None:
    path = workdir / "where.ipynb"
    setup = SETUP.format(path=str(path))
    kernel.ok(setup, cell_id="setup")
    failed = kernel.execute(BUGGY, cell_id="buggy")
    assert failed.status == "error"
    prompt = "%%agent\nfix the error above"
    cells = [new_code_cell(setup, id="setup", execution_count=1),
             new_code_cell(BUGGY, id="buggy", execution_count=2, outputs=[_error_output(failed)]),
             new_code_cell(prompt, id="prompt")]
    _save(path, cells)

    run = kernel.execute(prompt, cell_id="prompt", timeout=60)
    assert run.status == "ok", run.text
    found = _dump(kernel)

    first = found["FIRSTS"][0]
    assert "Your cell, the %%agent cell running this prompt, is cell 3 of 3 (id prompt)" in first
    assert "The cell above, cell 2 [2] (id buggy), a code cell:\n```\n" + BUGGY in first
    assert "Its output:\n```\nTypeError" in first
    assert ("The last error in this kernel, from cell 2 [2] (id buggy), the cell above: "
            "TypeError: unsupported operand type(s) for +: 'int' and 'str'") in first
    assert "\x1b[" not in first  # the traceback without terminal colours
    assert first.count("Traceback (most recent call last)") == 1  # shown once, not twice
    assert "where.ipynb" in first and str(workdir) not in first  # named relative to the cwd

    assert found["CALLS"] == ["read_file", "notebook_edit"]  # one read, then the fix
    assert found["RESULTS"][1].endswith(
        "Read back: cell buggy (position 1, a code cell) now holds:\n```\n"
        "total = sum([1, 2, 3])\nprint(total)\n```")
    saved = nbformat.read(path, as_version=4)
    assert saved.cells[1].source == "total = sum([1, 2, 3])\nprint(total)"


def test_a_user_edit_between_turns_is_in_the_next_request(kernel: KernelSession,
                                                          workdir: Path) -> None:
    path = workdir / "turns.ipynb"
    setup = SETUP.format(path=str(path))
    kernel.ok(setup, cell_id="setup")
    failed = kernel.execute(BUGGY, cell_id="buggy")
    prompt = "%%agent\nfix the error above"
    cells = [new_code_cell(setup, id="setup", execution_count=1),
             new_code_cell(BUGGY, id="buggy", execution_count=2, outputs=[_error_output(failed)]),
             new_code_cell(prompt, id="prompt")]
    _save(path, cells)
    assert kernel.execute(prompt, cell_id="prompt", timeout=60).status == "ok"

    # The user runs the fixed cell (the error is gone), changes it, adds a cell and deletes the
    # first prompt, then asks again.
    fixed = nbformat.read(path, as_version=4).cells[1].source
    kernel.ok(fixed, cell_id="buggy")
    again = "%%agent\nanything else?"
    cells = [new_code_cell(setup, id="setup", execution_count=1),
             new_code_cell(fixed + "\ntotal *= 2", id="buggy", execution_count=4),
             new_code_cell("extra = 1", id="extra"),
             new_code_cell(again, id="again")]
    _save(path, cells)
    assert kernel.execute("%agent bogus", cell_id="again").status == "error"  # a typo
    assert kernel.execute(again, cell_id="again", timeout=60).status == "ok"

    second = _dump(kernel)["FIRSTS"][1]
    assert ("The user changed the notebook since your last read: changed: cell 2 (id buggy); "
            "added: cell 3 (id extra); deleted: id prompt (was cell 3).") in second
    assert "The cell above, cell 3 (id extra)" in second
    # The failing cell ran again without error; a mistyped %agent command is not "the error".
    assert "last error" not in second

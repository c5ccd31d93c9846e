"""In real JupyterLab and Notebook 7, the agent is told where it is: the frontend's ``cellId``
reaches the kernel, the live notebook is read through the bridge, and the first request holds
the agent's cell, the cell above with its error output, and the kernel's last error."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.notebook_page import open_notebook, run_from, wait_file, write_notebook
from tests.browser.server import Server

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

SETUP = '''\
%load_ext agent_ext
import json
import agent_ext
from agent_ext.models import ModelResponse, ScriptedModel

def tell(request):
    first = request.messages[-1]
    json.dump([p.text for p in first.parts], open("where.json", "w"))
    return ModelResponse(text="Seen.")

agent = agent_ext.get_agent(model=ScriptedModel(fn=tell))
'''


def test_the_first_request_says_where_the_agent_is(server: Server, page: Any) -> None:
    name = f"where_{server.app}.ipynb"
    write_notebook(server.root / name, [
        ("setup", "code", SETUP),
        ("buggy", "code", 'total = sum([1, 2, "3"])'),
        ("prompt", "code", "%%agent\nfix the error above"),
    ])
    (server.root / "where.json").unlink(missing_ok=True)
    open_notebook(page, server, name)
    run_from(page, 0, 2)
    # A failing cell cancels the cells queued after it, so the prompt runs once it has failed.
    page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").first \
        .wait_for(timeout=60_000)
    run_from(page, 2, 1)
    *_, where, prompt = wait_file(server.root / "where.json")  # after the session context
    assert prompt == "fix the error above"
    # Shift+Enter on the last cell adds an empty one below it: 3 of 4.
    assert f"is cell 3 of 4 (id prompt) in {name}" in where, where
    assert ("The cell above, cell 2 [2] (id buggy), a code cell:\n```\n"
            'total = sum([1, 2, "3"])\n```\nIts output:\n```\nTypeError') in where
    assert ("The last error in this kernel, from cell 2 [2] (id buggy), the cell above: "
            "TypeError: unsupported operand type(s) for +: 'int' and 'str' (its traceback is "
            "the output above)") in where
    assert "You have not read this notebook in this session" in where

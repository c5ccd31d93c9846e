"""var://, history:// and run_cell in a real kernel, driven headless by nbclient."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernel.test_headless import _run

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

SCRIPT = '''
import agent_ext
from agent_ext.models import ScriptedModel, call
answer = 41
agent = agent_ext.get_agent(model=ScriptedModel([
    call("read_file", {"file_path": "var://answer"}, id="v"),
    call("read_file", {"file_path": "history://"}, id="h"),
    call("run_cell", {"code": "print('side effect'); import sys; print('err', file=sys.stderr)\\nanswer + 1"}, id="r"),
    call("run_cell", {"code": "1/0"}, id="z"),
    "Done."]))
'''

RESULTS = '''
for m in agent_ext.get_agent().messages:
    for r in m.tool_returns:
        print("RESULT", r.call_id, r.is_error, repr(r.content[0].text[:400]))
print("after", answer)
'''


def test_kernel_urls_and_run_cell_in_a_real_kernel(workdir: Path) -> None:
    outs, _ = _run(["%load_ext agent_ext", "%config AgentExt.headless_allow = ['run_cell']",
                    SCRIPT, "%%agent\nlook at the kernel", RESULTS], workdir)
    results = outs[4]
    var_line = next(line for line in results.splitlines() if line.startswith("RESULT v"))
    assert "int" in var_line and "41" in var_line
    hist_line = next(line for line in results.splitlines() if line.startswith("RESULT h"))
    assert "load_ext agent_ext" in hist_line
    run_line = next(line for line in results.splitlines() if line.startswith("RESULT r "))
    assert "side effect" in run_line and "42" in run_line and "err" in run_line
    zero = next(line for line in results.splitlines() if line.startswith("RESULT z"))
    assert "ZeroDivisionError" in zero

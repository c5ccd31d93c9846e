"""Real tasks against a real small model: one-line bug fixes in files and notebook cells, and a
tool found through tool_search.

What is asserted is the mechanics, not the model's skill: tool calls are parsed and run, no run
damages a file or a cell, every run stops for a stated reason within a bound, and the window
the server reports is the one the agent uses. Whether the model's fix is right is measured and
printed (``landed``), with the turns, seconds and tokens of each run.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook, new_output

from agent_ext import Agent, RunResult, tool
from tests.real_model.conftest import CONTEXT, LlamaServer

pytestmark = [pytest.mark.real_model, pytest.mark.slow, pytest.mark.timeout(900)]

RUN_BOUND = 420.0
#: Every way a run may end; each but "end" comes with a notice saying why.
STOPS = {"end", "max_turns", "repeated_call", "length", "error", "cancelled"}


@dataclass(frozen=True)
class FileTask:
    name: str
    path: str
    source: str
    bug_line: int
    prompt: str
    check: Callable[[dict[str, Any]], bool]


FILE_TASKS = (
    FileTask("add", "calc.py",
             'def add(a, b):\n    """Return the sum of a and b."""\n    return a - b\n', 2,
             "The function add in calc.py returns the wrong result: add(2, 3) gives -1 "
             "instead of 5. Fix the bug.",
             lambda ns: ns["add"](2, 3) == 5),
    FileTask("greet", "greet.py",
             'def greet(name):\n    """Greet someone by name."""\n    return "Hello, " + nme + "!"\n',
             2, "Calling greet('Ann') from greet.py raises NameError: name 'nme' is not "
                "defined. Fix the bug.",
             lambda ns: ns["greet"]("Ann") == "Hello, Ann!"),
    FileTask("mean", "stats.py",
             'def mean(values):\n    """The arithmetic mean."""\n'
             "    return sum(values) / (len(values) - 1)\n", 2,
             "mean([2, 4]) in stats.py returns 6.0 instead of 3.0. Fix the bug.",
             lambda ns: ns["mean"]([2, 4]) == 3.0),
)

_RESULTS: list[dict[str, Any]] = []


def _record(name: str, run: RunResult, seconds: float, landed: bool) -> None:
    ran = [c.name for c, r in run.tool_calls]
    _RESULTS.append({"task": name, "landed": landed, "turns": run.turns,
                     "seconds": round(seconds, 1), "tokens_in": run.usage.input_tokens,
                     "tokens_out": run.usage.output_tokens, "stop": run.stop_reason,
                     "tools": ran})


def _agent(server: LlamaServer, cwd: Path, monkeypatch: pytest.MonkeyPatch,
           **kwargs: Any) -> Agent:
    monkeypatch.setenv("LLAMACPP_BASE_URL", server.base_url)
    return Agent(model="llamacpp:qwen2.5-coder", cwd=cwd, mode="acceptEdits", max_turns=8,
                 plugins=False, mcp=False, **kwargs)


async def _run(agent: Agent, prompt: str) -> tuple[RunResult, float]:
    started = time.monotonic()
    try:
        run = await asyncio.wait_for(agent.run(prompt), RUN_BOUND)
    finally:
        await agent.aclose()
    return run, time.monotonic() - started


def _mechanics(agent: Agent, run: RunResult, seconds: float) -> None:
    assert run.tool_calls, f"no tool ran; the model answered: {run.text[:500]!r}"
    assert run.stop_reason in STOPS, run.stop_reason
    assert seconds < RUN_BOUND
    assert agent.limits.window_tokens == CONTEXT


def _kept_lines(before: str, after: str, bug_line: int) -> bool:
    """Every line but the buggy one is still there, in order (nothing else was lost)."""
    wanted = [line for i, line in enumerate(before.splitlines()) if i != bug_line]
    rest = iter(after.splitlines())
    return all(any(line == got for got in rest) for line in wanted)


@pytest.mark.parametrize("task", FILE_TASKS, ids=[t.name for t in FILE_TASKS])
async def test_a_file_fix(task: FileTask, llama_server: LlamaServer, tmp_path: Path,
                          monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / task.path
    target.write_text(task.source)
    agent = _agent(llama_server, tmp_path, monkeypatch)
    run, seconds = await _run(agent, task.prompt)
    after = target.read_text()
    compile(after, task.path, "exec")  # never a damaged file
    assert _kept_lines(task.source, after, task.bug_line), after
    namespace: dict[str, Any] = {}
    exec(after, namespace)  # the task's own small module
    try:
        landed = bool(task.check(namespace))
    except Exception:  # a wrong fix is measured, not an error
        landed = False
    _record(task.name, run, seconds, landed)
    _mechanics(agent, run, seconds)


def _notebook(path: Path) -> None:
    error = new_output("error", ename="NameError", evalue="name 'num' is not defined",
                       traceback=["NameError: name 'num' is not defined"])
    nb = new_notebook(cells=[
        new_code_cell("nums = [3, 5, 7]", id="data", execution_count=1),
        new_code_cell("avg = sum(nums) / len(num)\nprint(avg)", id="average",
                      execution_count=2, outputs=[error]),
    ])
    nbformat.write(nb, path)


async def test_a_notebook_cell_fix(llama_server: LlamaServer, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "analysis.ipynb"
    _notebook(path)
    agent = _agent(llama_server, tmp_path, monkeypatch, notebook=str(path))
    run, seconds = await _run(agent, "In analysis.ipynb the cell with id 'average' fails with "
                                     "NameError: name 'num' is not defined. Fix that cell.")
    saved = nbformat.read(path, as_version=4)
    nbformat.validate(saved)  # never a damaged notebook
    assert [c.id for c in saved.cells] == ["data", "average"]
    assert saved.cells[0].source == "nums = [3, 5, 7]"
    namespace: dict[str, Any] = {}
    try:
        for cell in saved.cells:
            exec(cell.source, namespace)  # the task's own two cells
        landed = namespace.get("avg") == 5.0
    except Exception:  # a wrong fix is measured, not an error
        landed = False
    _record("notebook", run, seconds, landed)
    _mechanics(agent, run, seconds)


KERNEL_SETUP = """\
%load_ext agent_ext
%agent mode acceptEdits
%agent model llamacpp:qwen2.5-coder
__vsc_ipynb_file__ = {path!r}
"""


def test_a_notebook_cell_fix_in_a_live_kernel(llama_server: LlamaServer, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Headless, as nbclient (papermill, jupyter execute) runs a notebook: the agent cell fixes
    the cell above it in the notebook file."""
    monkeypatch.setenv("LLAMACPP_BASE_URL", llama_server.base_url)
    path = tmp_path / "shout.ipynb"
    cells = [
        new_code_cell(KERNEL_SETUP.format(path=str(path)), id="setup"),
        new_code_cell('word = "hello"\nshout = word.uper()\nprint(shout)', id="shout"),
        new_code_cell("%%agent\nThe cell with id 'shout' fails with AttributeError: 'str' object "
                      "has no attribute 'uper'. Fix that cell.", id="ask"),
    ]
    nbformat.write(new_notebook(cells=cells), path)
    executed = nbformat.read(path, as_version=4)
    started = time.monotonic()
    NotebookClient(executed, timeout=int(RUN_BOUND), kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    seconds = time.monotonic() - started
    log = "".join(o.get("text", "") for o in executed.cells[2].outputs)
    saved = nbformat.read(path, as_version=4)
    nbformat.validate(saved)
    assert [c.id for c in saved.cells] == ["setup", "shout", "ask"]
    assert saved.cells[0].source == cells[0].source and saved.cells[2].source == cells[2].source
    source = saved.cells[1].source
    landed = "upper()" in source and "uper(" not in source
    ran = [line for line in log.splitlines() if line.lstrip().startswith(("read_file",
                                                                         "notebook_edit"))]
    _RESULTS.append({"task": "kernel notebook", "landed": landed, "seconds": round(seconds, 1),
                     "tools": ran or [log[-200:]]})
    assert seconds < RUN_BOUND + 60
    assert "Traceback" not in log


async def test_a_tool_found_by_search(llama_server: LlamaServer, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    agent = _agent(llama_server, tmp_path, monkeypatch)
    converted: list[float] = []

    @tool
    def convert_currency(amount: float, source: str, target: str) -> str:
        """Convert an amount of money from one currency to another at today's rate."""
        converted.append(amount)
        return f"{amount} {source} is {amount * 0.5} {target}"

    agent.registry.register(convert_currency)
    assert "convert_currency" in agent.registry.deferred()
    run, seconds = await _run(agent, "Convert 100 USD to EUR. Use tool_search to find a "
                                     "tool that converts currencies, then call it.")
    names = [c.name for c, _ in run.tool_calls]
    _record("tool_search", run, seconds, bool(converted))
    _mechanics(agent, run, seconds)
    assert "tool_search" in names or "convert_currency" in names, names


def test_print_the_figures(capsys: pytest.CaptureFixture[str]) -> None:
    """The tier's figures, after its tasks (file order)."""
    if not _RESULTS:
        pytest.skip("no real-model task ran")
    with capsys.disabled():
        print("\nreal model tasks:")
        for row in _RESULTS:
            print("  " + json.dumps(row))
        fixes = [r for r in _RESULTS if r["task"] != "tool_search"]
        print(f"  correct fixes landed: {sum(r['landed'] for r in fixes)} of {len(fixes)}; "
              f"seconds: {sum(r['seconds'] for r in _RESULTS):.0f}")
    assert all(r["tools"] for r in _RESULTS)

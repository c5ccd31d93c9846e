"""Two agents edit one file at the same moment: no update is ever lost.

Each trial: both agents read a 2,000-line file, then edit line 5 and line 1995 at once. Each
edit either lands or is refused as stale; a refused one reads the file again and lands then.
Afterwards both edits are in the file. The same for two agents in two processes, driven line
by line over their stdin so that their edits really overlap.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from agent_ext import Agent
from agent_ext.models import ScriptedModel

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

TRIALS = 100
LINES = 2_000


def _content() -> str:
    return "".join(f"line {i} of the file\n" for i in range(LINES))


def _edit(line: int, trial: int) -> dict[str, str]:
    return {"file_path": "shared.txt", "old_string": f"line {line} of the file\n",
            "new_string": f"line {line} edited in trial {trial}\n"}


async def _edit_until_landed(agent: Agent, line: int, trial: int) -> int:
    """Edit; on a stale refusal read again and retry. Returns the number of refusals."""
    refusals = 0
    while True:
        result = await agent.call_tool("edit", _edit(line, trial))
        if not result.is_error:
            return refusals
        assert result.error is not None
        assert result.error.code == "file_changed_since_read", result.text
        refusals += 1
        assert refusals < 5
        await agent.call_tool("read_file", {"file_path": "shared.txt", "limit": 1})


async def test_two_agents_in_one_process(tmp_path: Path) -> None:
    target = tmp_path / "shared.txt"
    agents = [Agent(ScriptedModel([]), cwd=tmp_path, mode="acceptEdits", plugins=False,
                    mcp=False) for _ in range(2)]
    refused = 0
    try:
        for trial in range(TRIALS):
            target.write_text(_content())
            for agent in agents:
                read = await agent.call_tool("read_file", {"file_path": "shared.txt",
                                                           "limit": 10})
                assert not read.is_error, read.text
            counts = await asyncio.gather(_edit_until_landed(agents[0], 5, trial),
                                          _edit_until_landed(agents[1], 1995, trial))
            refused += sum(counts)
            text = target.read_text()
            assert f"line 5 edited in trial {trial}\n" in text, trial
            assert f"line 1995 edited in trial {trial}\n" in text, trial
            assert text.count("\n") == LINES
    finally:
        for agent in agents:
            await agent.aclose()
    print(f"\none process: {TRIALS} trials, 0 lost updates, {refused} stale refusals re-read")


WORKER = """
import asyncio, json, sys
from agent_ext import Agent
from agent_ext.models import ScriptedModel

async def main():
    agent = Agent(ScriptedModel([]), cwd=sys.argv[1], mode="acceptEdits", plugins=False,
                  mcp=False)
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            break
        name, args = json.loads(line)
        result = await agent.call_tool(name, args)
        code = result.error.code if result.error else None
        print(json.dumps(code), flush=True)
    await agent.aclose()

asyncio.run(main())
"""


class Worker:
    def __init__(self, cwd: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", WORKER, str(cwd)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def send(self, name: str, args: dict[str, object]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps([name, args]) + "\n")
        self.proc.stdin.flush()

    def answer(self) -> str | None:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, "the worker died"
        code: str | None = json.loads(line)
        return code

    def close(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=30)
        self.proc.stdout.close()


def test_two_agents_in_two_processes(tmp_path: Path) -> None:
    target = tmp_path / "shared.txt"
    workers = [Worker(tmp_path), Worker(tmp_path)]
    refused = 0
    try:
        for trial in range(TRIALS):
            target.write_text(_content())
            for worker in workers:
                worker.send("read_file", {"file_path": "shared.txt", "limit": 10})
            assert [w.answer() for w in workers] == [None, None]
            pending = {0: 5, 1: 1995}
            for _ in range(5):
                for index, line in pending.items():
                    workers[index].send("edit", _edit(line, trial))
                codes = {index: workers[index].answer() for index in pending}
                for index, code in codes.items():
                    if code is None:
                        del pending[index]
                    else:
                        assert code == "file_changed_since_read", code
                        refused += 1
                        workers[index].send("read_file", {"file_path": "shared.txt",
                                                          "limit": 1})
                        assert workers[index].answer() is None
                if not pending:
                    break
            assert not pending, f"trial {trial}: edits never landed"
            text = target.read_text()
            assert f"line 5 edited in trial {trial}\n" in text, trial
            assert f"line 1995 edited in trial {trial}\n" in text, trial
    finally:
        for worker in workers:
            worker.close()
    print(f"\ntwo processes: {TRIALS} trials, 0 lost updates, {refused} stale refusals re-read")


async def test_a_change_that_keeps_size_and_mtime_is_stale(tmp_path: Path) -> None:
    target = tmp_path / "same.txt"
    target.write_text("alpha = 1\nbeta = 2\n")
    agent = Agent(ScriptedModel([]), cwd=tmp_path, mode="acceptEdits", plugins=False, mcp=False)
    try:
        assert not (await agent.call_tool("read_file", {"file_path": "same.txt"})).is_error
        before = target.stat()
        target.write_text("alpha = 9\nbeta = 2\n")  # same size
        os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))  # same mtime
        assert target.stat().st_size == before.st_size
        result = await agent.call_tool("edit", {"file_path": "same.txt",
                                                "old_string": "beta = 2", "new_string": "b = 3"})
        assert result.error is not None and result.error.code == "file_changed_since_read"
        assert target.read_text() == "alpha = 9\nbeta = 2\n"
    finally:
        await agent.aclose()


async def test_two_agents_editing_one_notebook_file(tmp_path: Path) -> None:
    path = tmp_path / "shared.ipynb"
    agents = [Agent(ScriptedModel([]), cwd=tmp_path, mode="acceptEdits", plugins=False,
                    mcp=False, notebook=str(path)) for _ in range(2)]

    async def edit(agent: Agent, cell: str, trial: int) -> int:
        refusals = 0
        while True:
            result = await agent.call_tool("notebook_edit", {
                "notebook_path": "shared.ipynb", "cell_id": cell,
                "new_source": f"{cell} = {trial + 1}"})
            if not result.is_error:
                return refusals
            assert result.error is not None
            assert result.error.code == "file_changed_since_read", result.text
            refusals += 1
            assert refusals < 5
            await agent.call_tool("read_file", {"file_path": "shared.ipynb"})

    try:
        for trial in range(30):
            nbformat.write(new_notebook(cells=[new_code_cell("a = 0", id="a"),
                                               new_code_cell("b = 0", id="b")]), path)
            for agent in agents:
                read = await agent.call_tool("read_file", {"file_path": "shared.ipynb"})
                assert not read.is_error, read.text
            await asyncio.gather(edit(agents[0], "a", trial), edit(agents[1], "b", trial))
            saved = nbformat.read(path, as_version=4)
            assert [c.source for c in saved.cells] == [f"a = {trial + 1}", f"b = {trial + 1}"], trial
    finally:
        for agent in agents:
            await agent.aclose()

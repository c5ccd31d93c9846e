"""What the compact profile's cell fragment rule costs on large cells: the event loop's longest
stall while ``notebook_edit`` checks a replace that makes a cell shorter.

Run as ``python tests/bench/bench_cell_fragment.py``. For each cell size, a notebook with one
cell of that many unlike lines is read and then replaced through ``Agent.call_tool`` under the
compact profile, twice: with the one line a small model sends as a fragment, and with every
line but one slightly changed and in reverse order (the rule's worst case: each changed line is
compared with the old lines until one is alike). Beside each, the same worst case checked with
no bound on the pairs compared, the rule as it was, timed in the same run.
"""

from __future__ import annotations

import asyncio
import json
import random
import string
import sys
import tempfile
import time
from difflib import SequenceMatcher
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loop_meter import measured

from agent_ext import Agent
from agent_ext.fs.matching import ALIKE

SIZES = (100, 300, 1_000, 3_000)


def _lines(n: int) -> list[str]:
    rng = random.Random(n)
    alphabet = string.ascii_letters + " =()+"
    return ["".join(rng.choice(alphabet) for _ in range(60)) for _ in range(n)]


def _notebook(source: str) -> str:
    cell = {"cell_type": "code", "id": "big", "metadata": {}, "execution_count": None,
            "outputs": [], "source": source}
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [cell]})


def unbounded(old: list[str], new: list[str]) -> float:
    """Seconds the check takes with every pair compared."""
    start = time.perf_counter()
    all(any(SequenceMatcher(None, line, was).ratio() >= ALIKE for was in old) for line in new)
    return time.perf_counter() - start


async def replace(folder: Path, old: list[str], new: list[str]) -> tuple[bool, float]:
    """Whether the replace was refused, and the loop's longest stall in seconds."""
    (folder / "n.ipynb").write_text(_notebook("\n".join(old)))
    agent = Agent("demo", cwd=folder, mode="acceptEdits", plugins=False, mcp=False,
                  tool_profile="compact")
    try:
        await agent.call_tool("read_file", {"file_path": "n.ipynb"})
        result = await measured(agent.call_tool("notebook_edit", {
            "notebook_path": "n.ipynb", "cell_id": "big", "new_source": "\n".join(new)}))
    finally:
        await agent.aclose()
    return result.value.is_error, result.max_gap


async def main() -> None:
    print(f"{'lines':>6} {'fragment: refused, stall':>26} {'worst case: refused, stall':>28} "
          f"{'unbounded check':>16} {'ratio':>7}")
    for n in SIZES:
        old = _lines(n)
        worst = [line[:-3] + "xyz" for line in reversed(old)][: n - 1]
        with tempfile.TemporaryDirectory() as tmp:
            fragment = await replace(Path(tmp), old, [old[n // 2][:-1] + "!"])
            bounded = await replace(Path(tmp), old, worst)
        baseline = unbounded(old, worst) if n <= 1_000 else float("nan")
        ratio = baseline / bounded[1] if bounded[1] > 0 else float("nan")
        print(f"{n:>6} {fragment[0]!s:>10} {fragment[1] * 1000:>12.1f} ms "
              f"{bounded[0]!s:>10} {bounded[1] * 1000:>14.1f} ms {baseline:>14.2f} s "
              f"{ratio:>7.0f}")
    print("(the unbounded check is not run past 1,000 lines: it takes minutes there)")


if __name__ == "__main__":
    asyncio.run(main())

"""Timings of the output budget on large inputs: ``python tests/bench/bench_budget.py``."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from agent_ext.core.budget import OutputBudget, SpillStore, truncate_text
from agent_ext.core.result import ToolResult


def timed(label: str, fn: Callable[[], object], repeat: int = 5) -> None:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    print(f"{label:<48} {best * 1000:9.2f} ms")


def main() -> None:
    log = "\n".join(f"2024-01-01 12:00:{i % 60:02d} INFO worker {i} finished" for i in range(200_000))
    one_line = "x" * 10_000_000
    print(f"log: {len(log):,} chars, {log.count(chr(10)) + 1:,} lines")
    timed("truncate_text 200k-line log, both", lambda: truncate_text(
        log, max_chars=25_000, max_lines=1_000, keep="both"))
    timed("truncate_text 10 MB single line, tail", lambda: truncate_text(
        one_line, max_chars=25_000, max_lines=None, keep="tail"))
    with tempfile.TemporaryDirectory() as tmp:
        budget = OutputBudget(SpillStore(Path(tmp) / "session"))
        timed("apply 200k-line log (gate persists)", lambda: budget.apply(
            ToolResult(log), tool_name="shell", call_id="bench"))
        timed("apply 27k chars (truncate + spill)", lambda: budget.apply(
            ToolResult("y" * 27_000), tool_name="shell"))
        batch = [(f"c{i}", "shell", ToolResult("z" * (20_000 + 1_000 * i))) for i in range(20)]
        timed("apply_batch 20 results, 590k chars", lambda: budget.apply_batch(batch))
        print(f"session bytes saved: {budget.store.bytes_used:,}")


if __name__ == "__main__":
    main()

"""What an edit of a large file costs: time, the longest event-loop stall and peak memory.

Run as ``python tests/bench/bench_edit_size.py``. For each file size (lines of code-like text,
and lines of two bytes, the most lines per megabyte), a fresh process reads the file, then makes
two edits through ``Agent.call_tool``: one whose old_string is in the file as written, and one
whose old_string is not there at all, so the approximate search runs over the whole file. The
figures are what ``edit``'s size limit (``agent_ext.tools.edit.MAX_EDIT_BYTES``) is set from.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loop_meter import measured

ROOT = Path(__file__).resolve().parents[1].parent
SIZES = [(20_000, 40), (50_000, 40), (100_000, 40), (100_000, 2), (250_000, 40),
         (10_000_000, 2)]
RUNS = 3


async def _measured(call: Any) -> dict[str, Any]:
    m = await measured(call)
    return {"seconds": m.seconds, "stall": m.max_gap, "peak_mb": m.peak_mb,
            "code": m.value.error.code if m.value.error else "ok"}


async def _one(lines: int, width: int) -> None:
    from agent_ext import Agent
    from agent_ext.models import ScriptedModel

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.py"
        body = ("    value = compute(alpha, beta) + 1".ljust(width - 1)[:width - 1] + "\n")
        with path.open("w") as f:
            for n in range(lines):
                f.write(f"marker_{n}\n" if n == lines // 2 else body)
        agent = Agent(ScriptedModel([]), cwd=Path(tmp), mode="bypassPermissions",
                      plugins=False, mcp=False)
        try:
            await agent.call_tool("read_file", {"file_path": str(path)})
            found = await _measured(agent.call_tool("edit", {
                "file_path": str(path), "old_string": f"marker_{lines // 2}\n",
                "new_string": "changed\n"}))
            await agent.call_tool("read_file", {"file_path": str(path)})
            absent = await _measured(agent.call_tool("edit", {
                "file_path": str(path), "old_string": "  nowhere(in, this)\n  file = 1\n",
                "new_string": "x\n"}))
        finally:
            await agent.aclose()
        print(json.dumps({"bytes": path.stat().st_size, "found": found, "absent": absent}))


def main() -> None:
    print(f"edit of a large file (median of {RUNS} fresh processes; stall = longest event-loop "
          "gap)")
    print(f"  {'lines':>10} {'MB':>6}  {'found: s':>8} {'stall ms':>8} {'peak MB':>8}   "
          f"{'absent: s':>9} {'stall ms':>8} {'peak MB':>8}  codes")
    for lines, width in SIZES:
        rows = []
        for _ in range(RUNS):
            out = subprocess.run([sys.executable, __file__, "--one", str(lines), str(width)],
                                 capture_output=True, text=True, timeout=600, check=False,
                                 cwd=ROOT)
            last = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
            if not last:
                print(f"  {lines:>10,} failed: {out.stderr[-400:]}")
                break
            rows.append(json.loads(last[-1]))
        if not rows:
            continue

        def med(case: str, key: str, rows: list[dict[str, Any]] = rows) -> float:
            return statistics.median(r[case][key] for r in rows)

        codes = f"{rows[0]['found']['code']}, {rows[0]['absent']['code']}"
        print(f"  {lines:>10,} {rows[0]['bytes'] / 2**20:6.1f}  {med('found', 'seconds'):8.2f} "
              f"{med('found', 'stall') * 1000:8.1f} {med('found', 'peak_mb'):8.0f}   "
              f"{med('absent', 'seconds'):9.2f} {med('absent', 'stall') * 1000:8.1f} "
              f"{med('absent', 'peak_mb'):8.0f}  {codes}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        asyncio.run(_one(int(sys.argv[2]), int(sys.argv[3])))
    else:
        main()

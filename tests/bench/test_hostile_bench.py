"""Hostile inputs, each run through call_tool in a fresh process (tests/bench/hostile_worker.py):
every call returns a bounded result or an error, nothing it started is left after aclose(), and
the figures (the longest event-loop stall and the peak memory during each call, targets 100 ms
and 300 MB) are printed with the cases over a target flagged.

The worker uses the pure-Python tool search, so that the embedding table, when numpy is
installed, does not count in every later case's memory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.bench, pytest.mark.slow, pytest.mark.timeout(900)]

HERE = Path(__file__).resolve().parent
MAX_RESULT_CHARS = 100_000
STALL_TARGET = 0.1
MEMORY_TARGET_MB = 300


def _processes_with(marker: str) -> list[str]:
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and marker.encode() in (proc / "cmdline").read_bytes():
                found.append(proc.name)
        except OSError:
            continue
    return found


def test_hostile_inputs_are_bounded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = {**os.environ, "AGENT_EXT_TOOL_SEARCH": "lexical"}
    out = subprocess.run([sys.executable, str(HERE / "hostile_worker.py"), str(tmp_path / "w")],
                         capture_output=True, text=True, timeout=840, env=env, check=False)
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert rows and rows[-1]["case"] == "__closed__", out.stderr[-2000:]
    cases, marker = rows[:-1], rows[-1]["marker"]
    assert len(cases) >= 60
    with capsys.disabled():
        print(f"\nhostile inputs: {len(cases)} cases (stall target {STALL_TARGET * 1000:.0f} ms, "
              f"memory target {MEMORY_TARGET_MB} MB)")
        for row in cases:
            over = ("  STALL" if row["max_gap"] > STALL_TARGET else "") + (
                "  MEMORY" if row["peak_mb"] > MEMORY_TARGET_MB else "")
            print(f"  {row['case'][:48]:48} {row['seconds']:7.2f} s  stall "
                  f"{row['max_gap'] * 1000:6.1f} ms  peak {row['peak_mb']:7.1f} MB  "
                  f"{row['code'] or 'ok'}{over}")
        stalls = sum(r["max_gap"] > STALL_TARGET for r in cases)
        heavy = sum(r["peak_mb"] > MEMORY_TARGET_MB for r in cases)
        print(f"  over the stall target: {stalls}; over the memory target: {heavy}")
    assert not [r["case"] for r in cases if r["code"] == "hung"]
    assert not [r["case"] for r in cases if r["chars"] > MAX_RESULT_CHARS]
    assert not _processes_with(marker), "a process the suite started outlived aclose()"

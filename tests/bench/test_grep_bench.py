"""The grep benchmark as a test: a short run that prints the figures (no timing asserts)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_grep import SEARCHES, format_rows, measure, pick_tree

from agent_ext.tools._rg import find_rg

pytestmark = [pytest.mark.bench, pytest.mark.timeout(300),
              pytest.mark.skipif(find_rg() is None, reason="needs the rg binary")]


async def test_grep_tool_against_raw_rg(capsys: pytest.CaptureFixture[str]) -> None:
    root = pick_tree()
    searches = [SEARCHES[0], SEARCHES[2], SEARCHES[3]]
    rows = await measure(root, repeat=3, searches=searches)
    with capsys.disabled():
        print("\n" + format_rows(root, rows))
    assert all(row.same for row in rows), [row.label for row in rows if not row.same]

"""Runs the call-overhead benchmark in the test suite and prints its figures."""

from __future__ import annotations

import pytest
from bench_call_overhead import measure, report


@pytest.mark.bench
async def test_call_overhead_bench(capsys: pytest.CaptureFixture[str]) -> None:
    figures = await measure(rounds=500)
    with capsys.disabled():
        print("\n" + report(figures))
    assert figures["call_tool_ms"] > figures["direct_ms"] > 0

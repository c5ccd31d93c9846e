"""Runs the kernel-host benchmarks (load time, interrupt latency) and prints their figures."""

from __future__ import annotations

import pytest
from bench_interrupt import measure as measure_interrupt
from bench_interrupt import report as report_interrupt
from bench_load_ext import measure as measure_load
from bench_load_ext import report as report_load


@pytest.mark.bench
@pytest.mark.slow
@pytest.mark.timeout(120)
def test_load_ext_bench(capsys: pytest.CaptureFixture[str]) -> None:
    figures = measure_load(rounds=2)
    with capsys.disabled():
        print("\n" + report_load(figures))
    assert figures["heavy_modules"] == []


@pytest.mark.bench
@pytest.mark.slow
@pytest.mark.timeout(120)
def test_interrupt_bench(capsys: pytest.CaptureFixture[str]) -> None:
    figures = measure_interrupt(rounds=3)
    with capsys.disabled():
        print("\n" + report_interrupt(figures))
    assert figures["max_s"] < 10

"""Runs the live-notebook benchmark (tests/bench/bench_live_notebook.py) and prints its figures."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from tests.browser.server import Server

BENCH = Path(__file__).resolve().parents[1] / "bench" / "bench_live_notebook.py"


@pytest.mark.bench
@pytest.mark.slow
@pytest.mark.timeout(240)
def test_live_notebook_bench(browser: Any, lab: Server, capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("bench_live_notebook", BENCH)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    figures = bench.measure(browser, lab)
    with capsys.disabled():
        print("\n" + bench.report(figures))
    assert figures["cells"] == bench.CELLS
    assert figures["read_ms"] < 1000 and figures["replace_ms"] < 1000

"""The write-lock benchmark as a test: it runs and prints its figures."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_lock import measure, report

pytestmark = pytest.mark.bench


def test_the_lock_costs_are_printed(capsys: pytest.CaptureFixture[str]) -> None:
    figures = measure(rounds=200)
    with capsys.disabled():
        print("\n" + report(figures))
    assert figures["lock_ms"] > 0 and figures["locked_write_ms"] > 0

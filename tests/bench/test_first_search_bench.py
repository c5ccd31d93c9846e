"""The first tool_search in a fresh kernel with either backend: timed (printed) and silent."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_first_search import measure, report

pytestmark = [pytest.mark.bench, pytest.mark.slow]


def test_the_first_search_answers_and_prints_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    figures = measure()
    with capsys.disabled():
        print("\n" + report(figures))
    for name in ("pure", "semantic cold", "semantic after a turn"):
        assert figures[name]["hits"] == 5, name
        assert figures[name]["other_output"] == 0, name

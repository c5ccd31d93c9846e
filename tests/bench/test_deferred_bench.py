"""The deferred summary on the real sample catalogue stays within 40 characters per tool."""

from __future__ import annotations

import pytest
from bench_deferred import catalogue, measure, report


@pytest.mark.bench
def test_deferred_summary_per_tool_on_the_sample_catalogue(capsys: pytest.CaptureFixture[str]) -> None:
    figures = measure(catalogue())
    with capsys.disabled():
        print("\n" + report(figures, "sample catalogue"))
    assert figures["tools"] == 212
    assert figures["per_tool"] <= 40
    assert figures["summary_chars"] * 10 < figures["inline_chars"]

"""The deferred summary stays small per tool, and the first request fits a small window."""

from __future__ import annotations

import pytest
from bench_deferred import catalogue, catalogue_of, first_request, measure, report, report_request


@pytest.mark.bench
def test_deferred_summary_per_tool_on_the_sample_catalogue(capsys: pytest.CaptureFixture[str]) -> None:
    figures = measure(catalogue())
    with capsys.disabled():
        print("\n" + report(figures, "sample catalogue"))
    assert figures["tools"] == 212
    assert figures["per_tool"] <= 40
    assert figures["summary_chars"] * 10 < figures["inline_chars"]


@pytest.mark.bench
@pytest.mark.parametrize(("profile", "builtin_budget", "request_budget"), [
    ("default", 8_000, 12_000), ("compact", 4_000, 8_000)])
def test_first_request_with_300_mcp_tools_fits_a_small_window(
        profile: str, builtin_budget: int, request_budget: int,
        capsys: pytest.CaptureFixture[str]) -> None:
    alone = first_request([], profile)
    connected = first_request(catalogue_of(300), profile)
    with capsys.disabled():
        print("\n" + report_request(alone, f"built-ins only, {profile}"))
        print(report_request(connected, f"300 MCP tools, {profile}"))
    assert alone["declaration_chars"] <= builtin_budget
    assert connected["declaration_chars"] == alone["declaration_chars"]
    assert connected["request_chars"] <= request_budget

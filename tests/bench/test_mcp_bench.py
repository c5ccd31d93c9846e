"""5 MCP servers with 300 tools grow the first request only by the deferred summary."""

from __future__ import annotations

import pytest
from bench_mcp import measure, report


@pytest.mark.bench
@pytest.mark.slow
@pytest.mark.timeout(120)
async def test_mcp_tools_add_only_the_deferred_summary(capsys: pytest.CaptureFixture[str]) -> None:
    figures = await measure()
    with capsys.disabled():
        print("\n" + report(figures))
    mcp = figures["mcp"]
    assert isinstance(mcp, dict)
    assert mcp["mcp_tools"] == 300
    assert figures["declarations_equal"] is True
    assert mcp["declarations_unchanged"] is True
    assert mcp["reveal_adds_exactly_one"] is True
    assert figures["growth"] == figures["summary_growth"]
    assert int(mcp["inline_chars"]) > 10 * int(figures["growth"])

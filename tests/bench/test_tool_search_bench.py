"""The tool_search benchmark as a test: agent_ext's index must beat the seed scorer."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_tool_search import evaluate, format_table, latency, load_queries, load_tools

pytestmark = pytest.mark.bench


def test_catalogues_and_queries_are_consistent() -> None:
    tools = load_tools()
    registered = {str(t["registered"]) for t in tools}
    assert len(registered) == len(tools)
    extra = [t for t in tools if t["set"] == "extra"]
    assert len(extra) >= 120
    assert len({t["server"] for t in extra}) >= 6
    queries = load_queries()
    assert len(queries) >= 300
    categories = {"paraphrase", "synonym", "typo", "server", "name_fragment", "abbreviation",
                  "plural"}
    for q in queries:
        assert q["category"] in categories, q
        assert set(q["expected"]) <= registered, q  # type: ignore[arg-type]


def test_ours_beats_the_seed_scorer(capsys: pytest.CaptureFixture[str]) -> None:
    tools = load_tools()
    queries = load_queries()
    report = evaluate(tools, queries)
    lat = latency(tools, queries)
    with capsys.disabled():
        print("\n" + format_table(report))
        print(f"ours over {lat['docs']:.0f} tools: build {lat['build_ms']:.1f} ms, "
              f"median {lat['median_ms']:.2f} ms, p95 {lat['p95_ms']:.2f} ms")
    for slice_name in ("overall", "set:sample", "set:extra"):
        ours = report.tallies["ours"][slice_name]
        seed = report.tallies["seed"][slice_name]
        assert ours.top1 > seed.top1, slice_name
        assert ours.top5 > seed.top5, slice_name
    assert lat["median_ms"] < 5.0

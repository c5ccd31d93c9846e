"""The tool_search benchmark as a test: agent_ext's index must beat the seed scorer everywhere
and BM25F by MARGIN top-1 points on the held-out sets."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_tool_search import (
    HELD_OUT,
    MARGIN,
    TUNING_SETS,
    TUNING_SPLITS,
    evaluate,
    format_pooled,
    format_table,
    held_out_reports,
    latency,
    load_queries,
    load_split,
    load_tools,
    pooled,
)

pytestmark = pytest.mark.bench

CATEGORIES = {"paraphrase", "synonym", "typo", "server", "name_fragment", "abbreviation",
              "plural"}


def test_catalogues_and_queries_are_consistent() -> None:
    tools = load_tools()
    registered = {str(t["registered"]) for t in tools}
    assert len(registered) == len(tools)
    extra = [t for t in tools if t["set"] == "extra"]
    assert len(extra) >= 120
    assert len({t["server"] for t in extra}) >= 6
    queries = load_queries()
    assert len(queries) >= 300
    for q in queries:
        assert q["category"] in CATEGORIES, q
        assert set(q["expected"]) <= registered, q  # type: ignore[arg-type]


@pytest.mark.parametrize("split", [*TUNING_SPLITS, *HELD_OUT])
def test_split_sets_are_new_servers_with_consistent_queries(split: str) -> None:
    tools, queries = load_split(split)
    registered = {str(t["registered"]) for t in tools}
    assert len(registered) == len(tools)
    own = [t for t in tools if t["set"] == split]
    assert len(own) >= 100
    servers = {t["server"] for t in own}
    assert len(servers) >= 6
    assert not servers & {t["server"] for t in tools if t["set"] in TUNING_SETS}
    assert len(queries) >= 200
    mine = {str(t["registered"]) for t in own}
    for q in queries:
        expected = set(q["expected"])  # type: ignore[call-overload]
        assert q["set"] == split, q
        assert q["category"] in CATEGORIES, q
        assert expected <= registered, q
        assert expected & mine, q
    assert {q["category"] for q in queries} == CATEGORIES


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


@pytest.mark.parametrize("split", [*TUNING_SPLITS, *HELD_OUT])
def test_ours_beats_the_seed_scorer_on_new_servers(
    split: str, capsys: pytest.CaptureFixture[str]
) -> None:
    tools, queries = load_split(split)
    report = evaluate(tools, queries)
    if split == "dev":
        with capsys.disabled():
            print("\ndev\n" + format_table(report))
    ours = report.tallies["ours"]["overall"]
    seed = report.tallies["seed"]["overall"]
    assert ours.top1 > seed.top1
    assert ours.top5 > seed.top5


@pytest.mark.timeout(900)  # five sets, four scorers each
def test_ours_leads_bm25f_on_the_held_out_sets(capsys: pytest.CaptureFixture[str]) -> None:
    tallies = pooled(held_out_reports())
    with capsys.disabled():
        print("\n" + format_pooled(tallies))
    ours, bm25f = tallies["ours"], tallies["bm25f"]
    assert 100 * (ours.top1 - bm25f.top1) / ours.n >= MARGIN
    if "ours+embed" in tallies:
        assert 100 * (tallies["ours+embed"].top1 - bm25f.top1) / ours.n >= MARGIN


def test_latency_of_both_backends_over_a_thousand_tools(
    capsys: pytest.CaptureFixture[str],
) -> None:
    tools, queries = load_tools(), load_queries()
    for semantic in (False, True):
        lat = latency(tools, queries, semantic=semantic)
        with capsys.disabled():
            print(f"\n{'ours+embed' if semantic else 'ours'} over {lat['docs']:.0f} tools: "
                  f"build {lat['build_ms']:.1f} ms, median {lat['median_ms']:.2f} ms, "
                  f"p95 {lat['p95_ms']:.2f} ms")
        assert lat["docs"] == 1000 and lat["median_ms"] > 0

"""The edit-matching benchmark as a test: ours never lands wrongly and beats both baselines."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_edit import evaluate, format_table
from edit_corpus import build_corpus, kind_group

pytestmark = pytest.mark.bench


def test_corpus_is_large_varied_and_reproducible() -> None:
    cases = build_corpus()
    assert len(cases) >= 300
    groups = Counter(kind_group(c.kind) for c in cases)
    for kind in ("curly_quotes", "dashes", "nbsp", "trailing_added", "trailing_removed", "crlf",
                 "indent_shift", "tabs", "final_newline", "escaped", "combo", "adversarial",
                 "too_far"):
        assert groups[kind] >= 20, kind
    suffixes = {Path(c.path).suffix for c in cases}
    assert {".py", ".ts", ".js", ".json", ".yaml", ".md", ".go", ".c", ".cs", ".ini"} <= suffixes
    assert Counter(c.expect for c in cases)["refuse"] >= 50
    assert [c.old for c in build_corpus()[:50]] == [c.old for c in cases[:50]]


def test_ours_never_lands_wrongly_and_beats_both_baselines(
        capsys: pytest.CaptureFixture[str]) -> None:
    cases = build_corpus()
    report = evaluate(cases)
    with capsys.disabled():
        print("\n" + format_table(report, cases))
    ours = report.tallies["ours"]["overall"]
    assert ours.wrong == 0, [c.case_id for c in report.wrong["ours"]]
    assert ours.right_pct >= 98.0
    for baseline in ("literal", "seed"):
        theirs = report.tallies[baseline]["overall"]
        assert ours.landed > theirs.landed, baseline
        assert ours.right > theirs.right, baseline
    for row, tally in report.tallies["ours"].items():
        assert tally.wrong == 0, row

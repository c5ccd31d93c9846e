"""No tool_search benchmark query is written into the product, its docs or its tests.

A query copied into code, a comment, a demo or a test is a query the scorer may have been
shaped around; the benchmark then measures its own examples. Queries of five words or more are
distinctive enough that finding one verbatim anywhere outside ``tests/bench/data`` means it was
copied.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "bench" / "data"
SOURCES = ("agent_ext/**/*.py", "agent_ext/**/*.json", "agent_ext/**/*.txt", "docs/**/*.md",
           "README.md", "notebooks/*.ipynb", "scripts/*.py", "widgets/src/**/*.js",
           "labextension/src/*.ts", "tests/**/*.py")
MIN_WORDS = 5


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower())


def _queries() -> set[str]:
    found = set()
    for path in DATA.glob("*queries*.json"):
        for item in json.loads(path.read_text()):
            query = _normal(item["query"].strip())
            if len(query.split()) >= MIN_WORDS:
                found.add(query)
    return found


def copied(queries: set[str], text: str) -> list[str]:
    """The queries that occur in ``text`` (case and runs of white space ignored)."""
    flat = _normal(text)
    return sorted(q for q in queries if q in flat)


def test_the_scan_finds_a_copied_query() -> None:
    queries = {"which pods are failing in the cluster"}
    assert copied(queries, 'ask("Which pods are  failing\nin the cluster?")') == [*queries]
    assert copied(queries, "pods failing") == []


def test_no_benchmark_query_outside_the_benchmark_data() -> None:
    queries = _queries()
    assert len(queries) > 1000  # the sets are there to scan against
    hits = {}
    for pattern in SOURCES:
        for path in ROOT.glob(pattern):
            if DATA in path.parents or not path.is_file():
                continue
            found = copied(queries, path.read_text(errors="replace"))
            if found:
                hits[str(path.relative_to(ROOT))] = found
    assert hits == {}

"""A re-implementation of the seed keyword scorer, as a baseline for the tool_search benchmark.

It follows the seed's keyword mode: whitespace tokens, a fixed stopword set, ``+`` for required
terms, one action-synonym group, and fixed per-term points for name, hint and description.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

STOPWORDS = frozenset((
    "a", "an", "and", "are", "at", "be", "can", "could", "did", "do", "does", "for", "from",
    "how", "i", "in", "is", "it", "me", "my", "of", "on", "or", "please", "should", "that", "the",
    "these", "this", "those", "to", "was", "were", "what", "which", "with", "would", "you",
))
ACTION_GROUP = ("cancel", "clear", "delete", "remove", "stop")
_KEEP = frozenset("_.+#-")


@dataclass(frozen=True)
class SeedDoc:
    """One tool as the seed scorer sees it."""

    name: str
    description: str
    search_hint: str = ""
    is_mcp: bool = False


def _strip(token: str) -> str:
    start, end = 0, len(token)
    while start < end and not (token[start].isalnum() or token[start] in _KEEP):
        start += 1
    while end > start and not (token[end - 1].isalnum() or token[end - 1] in _KEEP):
        end -= 1
    return token[start:end]


def parse_query(query: str) -> list[tuple[str, bool]]:
    """The query's terms, each with whether it is required (a leading ``+``)."""
    terms: list[tuple[str, bool]] = []
    for raw in query.lower().split():
        token = _strip(raw)
        required = token.startswith("+")
        if required:
            token = token[1:]
        if len(token) < 2 or token in STOPWORDS:
            continue
        terms.append((token, required))
    return terms


def variants(term: str) -> tuple[str, ...]:
    """The term and its action synonyms."""
    return ACTION_GROUP if term in ACTION_GROUP else (term,)


def score_doc(doc: SeedDoc, terms: list[tuple[str, bool]]) -> float:
    """The seed's score of one doc; -1 when a required term is missing from the name."""
    name = doc.name.lower()
    hint_words = set(doc.search_hint.lower().split())
    desc = doc.description.lower()
    exact_pts, sub_pts = (12, 6) if doc.is_mcp else (10, 5)
    total = 0.0
    for term, required in terms:
        forms = variants(term)
        if required and not any(v in name for v in forms):
            return -1.0
        name_pts = 0
        for v in forms:
            if name == v or name.endswith(("_" + v, "." + v)):
                name_pts = max(name_pts, exact_pts)
            elif v in name:
                name_pts = max(name_pts, sub_pts)
        total += name_pts
        if any(v in hint_words for v in forms):
            total += 4
        if any(v in desc for v in forms):
            total += 2
        if term in ACTION_GROUP and any(
            v != term and (v in name or v in hint_words) for v in forms
        ):
            total += 6
    return total


class SeedIndex:
    """The seed scorer over a fixed list of docs."""

    def __init__(self, docs: Iterable[SeedDoc]) -> None:
        self.docs = list(docs)

    def search(self, query: str, max_results: int = 5) -> list[tuple[str, float]]:
        """Best-first (name, score) pairs with score > 0."""
        limit = min(20, max(1, max_results))
        terms = parse_query(query)
        if not terms:
            return []
        scored = [(d.name, s) for d in self.docs if (s := score_doc(d, terms)) > 0]
        scored.sort(key=lambda p: (-p[1], p[0]))
        return scored[:limit]

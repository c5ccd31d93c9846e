"""A plain BM25F baseline for the tool_search benchmark: no stemming, no widening of words.

Each tool has three fields, its name split into words, its server's name and its description,
weighted 2, 1 and 1 with the usual length normalisation (k1=1.2, b=0.75).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable

from seed_scorer import STOPWORDS

_WORD = re.compile(r"[a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
FIELD_WEIGHTS = (2.0, 1.0, 1.0)


def tokens(text: str) -> list[str]:
    """Lowercase alphanumeric runs, camelCase split, stopwords and 1-char tokens dropped."""
    text = _CAMEL.sub(" ", text).lower()
    return [t for t in _WORD.findall(text) if len(t) > 1 and t not in STOPWORDS]


class BM25FIndex:
    """BM25F over (registered name, server, description) triples."""

    def __init__(self, docs: Iterable[tuple[str, str, str]], k1: float = 1.2,
                 b: float = 0.75) -> None:
        self.names: list[str] = []
        fields: list[list[list[str]]] = []
        for name, server, description in docs:
            self.names.append(name)
            fields.append([tokens(name.split("__")[-1]), tokens(server), tokens(description)])
        n = len(fields)
        avg = [sum(len(f[i]) for f in fields) / n if n else 1.0 for i in range(3)]
        self.tfs: list[dict[str, float]] = []
        df: Counter[str] = Counter()
        for doc in fields:
            tf: dict[str, float] = {}
            for i, words in enumerate(doc):
                norm = 1 - b + b * len(words) / avg[i] if avg[i] else 1.0
                for w in words:
                    tf[w] = tf.get(w, 0.0) + FIELD_WEIGHTS[i] / norm
            self.tfs.append(tf)
            df.update(tf.keys())
        self.idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        self.k1 = k1

    def search(self, query: str, limit: int = 5) -> list[tuple[str, float]]:
        """Best-first (name, score) pairs with score > 0."""
        terms = [t for t in tokens(query) if t in self.idf]
        scored: list[tuple[str, float]] = []
        for name, tf in zip(self.names, self.tfs, strict=True):
            score = sum(self.idf[t] * tf[t] / (self.k1 + tf[t]) for t in terms if t in tf)
            if score > 0:
                scored.append((name, score))
        scored.sort(key=lambda p: (-p[1], p[0]))
        return scored[:limit]

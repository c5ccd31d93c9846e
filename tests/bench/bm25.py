"""A plain BM25 baseline over name parts and description, for the tool_search benchmark."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable

from seed_scorer import STOPWORDS

_WORD = re.compile(r"[a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def tokens(text: str) -> list[str]:
    """Lowercase alphanumeric runs, camelCase split, stopwords and 1-char tokens dropped."""
    text = _CAMEL.sub(" ", text).lower()
    return [t for t in _WORD.findall(text) if len(t) > 1 and t not in STOPWORDS]


class BM25Index:
    """Okapi BM25 (k1=1.2, b=0.75) where each doc is its name parts plus its description."""

    def __init__(self, docs: Iterable[tuple[str, str]], k1: float = 1.2, b: float = 0.75) -> None:
        self.names: list[str] = []
        self.tfs: list[Counter[str]] = []
        self.lens: list[int] = []
        df: Counter[str] = Counter()
        for name, description in docs:
            words = tokens(name) + tokens(description)
            tf = Counter(words)
            self.names.append(name)
            self.tfs.append(tf)
            self.lens.append(len(words))
            df.update(tf.keys())
        n = len(self.names)
        self.avg_len = sum(self.lens) / n if n else 0.0
        self.idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        self.k1, self.b = k1, b

    def search(self, query: str, limit: int = 5) -> list[tuple[str, float]]:
        """Best-first (name, score) pairs with score > 0."""
        terms = [t for t in tokens(query) if t in self.idf]
        scored: list[tuple[str, float]] = []
        for name, tf, length in zip(self.names, self.tfs, self.lens, strict=True):
            score = 0.0
            for t in terms:
                f = tf.get(t, 0)
                if f:
                    norm = self.k1 * (1 - self.b + self.b * length / self.avg_len)
                    score += self.idf[t] * f * (self.k1 + 1) / (f + norm)
            if score > 0:
                scored.append((name, score))
        scored.sort(key=lambda p: (-p[1], p[0]))
        return scored[:limit]

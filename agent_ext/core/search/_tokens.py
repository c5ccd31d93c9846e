"""Word splitting and light stemming shared by tool names, descriptions and queries.

Names and queries meet only through these functions, so a rule here needs to be consistent
more than linguistically right: ``create``, ``creates``, ``created`` and ``creating`` must all
land on the same stem.
"""

from __future__ import annotations

import re
from functools import lru_cache

# Connecting words inside tool names that say nothing about what the tool does.
NAME_FILLERS = frozenset((
    "a", "an", "and", "as", "at", "by", "for", "from", "in", "into", "of", "on", "or", "the",
    "to", "via", "with",
))
# Query words dropped before matching (the seed scorer's set).
STOPWORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "can", "could", "did", "do", "does", "for", "from",
    "how", "i", "in", "is", "it", "me", "my", "of", "on", "or", "please", "should", "that", "the",
    "these", "this", "those", "to", "was", "were", "what", "which", "with", "would", "you",
))

_KEEP_EDGE = frozenset("_.+#-")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z]{2})")
_WORD = re.compile(r"[a-z0-9]+")
_VOWELS = frozenset("aeiouy")
_NO_UNDOUBLE = frozenset("lsz")


def strip_token(token: str) -> str:
    """The token without leading/trailing chars other than letters, digits and ``_.+#-``."""
    start, end = 0, len(token)
    while start < end and not (token[start].isalnum() or token[start] in _KEEP_EDGE):
        start += 1
    while end > start and not (token[end - 1].isalnum() or token[end - 1] in _KEEP_EDGE):
        end -= 1
    return token[start:end]


def split_words(text: str) -> list[str]:
    """Lowercase words of an identifier or a sentence: camelCase, snake_case, kebab-case, dots."""
    return _WORD.findall(_CAMEL.sub(" ", text).lower())


def _undouble(word: str) -> str:
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in _NO_UNDOUBLE | _VOWELS:
        return word[:-1]
    return word


def _strip_plural(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "ches", "shes")):
        return word[:-2]
    if word.endswith("es") and word[-3] in "sxz" and not word.endswith("ses"):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _strip_derivation(word: str) -> str:
    if word.endswith("ing") and len(word) >= 6 and set(word[:-3]) & _VOWELS:
        return _undouble(word[:-3])
    if word.endswith("ed") and len(word) >= 5 and set(word[:-2]) & _VOWELS:
        return _undouble(word[:-2])
    if word.endswith("tion") and len(word) >= 7:
        return word[:-3]
    if word.endswith("ment") and len(word) >= 9:
        return word[:-4]
    return word


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A light stem: plural, -ing, -ed, -tion, -ment and a final ``e`` folded away."""
    if len(word) <= 3 or not word.isalpha():
        return word
    word = _strip_derivation(_strip_plural(word))
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def damerau_within(a: str, b: str, limit: int) -> bool:
    """Whether the optimal-string-alignment distance of ``a`` and ``b`` is at most ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return False
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        best = i
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            v = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                v = min(v, prev2[j - 2] + 1)
            cur[j] = v
            best = min(best, v)
        if best > limit:
            return False
        prev2, prev = prev, cur
    return prev[-1] <= limit


def bigrams(word: str) -> set[str]:
    """Padded character bigrams, the candidate filter for typo matching."""
    padded = f"^{word}$"
    return {padded[i : i + 2] for i in range(len(padded) - 1)}

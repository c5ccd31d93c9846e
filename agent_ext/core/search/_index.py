"""The tool_search scorer: BM25F over a tool's fields, with query words widened by mechanical
rules (abbreviations, action verbs, typos, prefixes, consonant skeletons, server initials).
docs/tool-search.md walks through it.

Every query word becomes a set of catalogue terms, each with a weight in (0, 1] that says how
sure the rule is; a tool's score sums, for each query word, its best term's weight times that
term's BM25F score in the tool.
"""

from __future__ import annotations

import heapq
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ._model import SearchDoc, SearchHit, SearchOutcome
from ._text import (
    STOPWORDS,
    abbreviation_table,
    action_table,
    compact,
    deletions,
    edit_distance_within,
    identifier_fragments,
    is_skeleton_of,
    operation_table,
    split_words,
    stem,
)

# BM25's term-frequency saturation: the usual value; a tool's second mention of a word adds
# less than its first.
K1 = 1.2
# Per field: (weight, length normalisation b). The name is what a model saw and names the
# tool's purpose in a few words, so a word there counts most; the server name is shared by
# all of a server's tools and picks the server; the description is long and loose;
# parameter names only hint.
FIELDS: Mapping[str, tuple[float, float]] = {
    "name": (3.0, 0.5),
    "server": (5.0, 0.0),
    "description": (1.0, 0.75),
    "parameters": (0.5, 0.5),
}
# BM25's idf, raised to this power. A catalogue holds hundreds of tools, not millions of
# pages: a word is rare there by chance (once in a long description) as often as by meaning,
# and the plain idf lets such a word outweigh a common name word the query also has (the
# tuning sets' top-1 for powers 0, 0.25, 0.4, 0.5, 0.6, 0.75, 1, 1.5: 75.5, 75.7, 75.5, 75.5,
# 75.4, 75.3, 75.0, 74.2).
IDF_POWER = 0.5
# How sure each widening rule is, relative to the word itself (1.0). A typo almost certainly
# means the catalogue word; a prefix or a skeleton may be one of
# several words.
TYPO = 0.8
PREFIX = 0.7
SKELETON = 0.6
# Typos in short words rarely hit the first letter, and changing it there mostly makes another
# word ("will" and "kill"): below this length a correction keeps the first letter.
FIRST_LETTER_FREE = 6
# A widening rule proposes at most this many terms per query word, the rarest first: a short
# prefix or skeleton can fit dozens of words, and most of them are noise.
MAX_CANDIDATES = 4

# An action verb's fellows mean the same operation in most APIs but not all ("post" a
# message, "post" a comment), so they count a little less than the verb itself.
ACTION = 0.8

# A tool whose name the query accounts for in full is likelier than one it shares a word
# with: the score grows by up to this share with the fraction of the name's terms matched.
NAME_COVERAGE = 0.25
# A query word written exactly as in the name (``tickets`` for ``get_tickets``, not for
# ``get_ticket``) says which of two tools differing in number or form is meant: the score grows
# by up to this share with the fraction of query words found as written.
EXACT_FORM = 0.1
# A query token written as an identifier that a tool's name contains (see
# ``identifier_fragments``) all but names the tool: its score grows by this share.
NAME_FRAGMENT = 1.0
# A tool matching more of the query's words is likelier than one matching a rare word of it
# strongly: the score is multiplied by the fraction of query words matched to this power
# (the square root: 0, 0.5, 1 and 2 gave 72.5, 73.5, 73.4 and 72.8 top-1 on the tuning sets).
COORDINATION = 0.5
# A query naming a server as written (or by a table abbreviation) mostly wants that server's
# tools: they grow by this share (0, 0.15, 0.3 and 0.6 gave top-5 90.4, 90.7, 90.7 and 90.8
# on the tuning sets, top-1 within 0.1).
SERVER_NAMED = 0.3
# Words that ask for several things, as a plural does.
MANY = frozenset(("all", "every", "each", "multiple", "several"))
# Bonuses reorder only the best few hundred by base score.
RESCORED = 200

# A tool whose name's verb names another operation than the query asks for (``delete`` for a
# query that only names a thing, which asks to see it) is likely the wrong one of a server's
# tools about that thing: its score shrinks by this share.
OTHER_OPERATION = 0.1
# A query naming things in the plural without a verb mostly wants them listed: a listing tool
# (``list_*``, or ``get_*`` of a plural thing) grows by this share.
PLURAL_LISTING = 0.1

_ABBREVIATIONS = abbreviation_table()
_ACTIONS = action_table()
_OPERATIONS = operation_table()
_READ = frozenset(_OPERATIONS["get"] | _OPERATIONS["list"] | _OPERATIONS["search"])
_LISTING = _OPERATIONS["list"]


@dataclass(frozen=True)
class QueryTerm:
    """One query word as catalogue terms: term -> how sure (1.0 for the word itself)."""

    raw: str
    variants: dict[str, float]
    required: bool = False


def tool_words(doc: SearchDoc) -> dict[str, list[str]]:
    """A tool's words per field. The name loses an ``mcp__server__`` prefix, the server
    field also holds the server's name glued (``googledrive``) and its initials (``gd``)."""
    tool = doc.name.split("__")[-1]
    server = split_words(doc.server or "")
    if len(server) > 1:
        server += ["".join(server), "".join(w[0] for w in server)]
    params = list(_parameter_names(doc.parameters))
    name = split_words(tool)
    return {"name": name, "server": server,
            "description": split_words(f"{doc.description} {doc.search_hint}"),
            "parameters": [w for p in params for w in split_words(p)]}


def tool_operations(name: list[str]) -> frozenset[int]:
    """The operations of the first action verb in a tool's name; a reading verb of a plural
    thing or of all things (``get_tickets``, ``get_all``) also lists."""
    for i, word in enumerate(name):
        ops = _OPERATIONS.get(stem(word))
        if ops:
            return ops | _LISTING if ops & _READ and is_many(name[i + 1:]) else ops
    return frozenset()


def is_many(words: Iterable[str]) -> bool:
    """Whether the words speak of several things: a plural, or a word of :data:`MANY`."""
    return any(w in MANY or (w.endswith("s") and stem(w) != w) for w in words)


def _parameter_names(schema: Mapping[str, Any] | None) -> Iterable[str]:
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    if isinstance(props, Mapping):
        yield from (str(k) for k in props)


def terms_of(words: Iterable[str]) -> list[str]:
    """The stems of the words that are not stopwords."""
    return [stem(w) for w in words if w not in STOPWORDS]


def damped_idf(tools: int, holding: int) -> float:
    """BM25's idf of a term that ``holding`` of ``tools`` tools have, to the power IDF_POWER."""
    idf = math.log(1 + (tools - holding + 0.5) / (holding + 0.5))
    return float(idf ** IDF_POWER)


def bm25f_weights(fields: Mapping[str, list[str]],
                  avg_len: Mapping[str, float]) -> dict[str, float]:
    """Each term's saturated BM25F frequency in one tool, in [0, 1): the field-weighted,
    length-normalised count ``t`` turned into ``t / (K1 + t)``."""
    counts: dict[str, float] = defaultdict(float)
    for field, terms in fields.items():
        weight, b = FIELDS[field]
        norm = 1.0 - b + b * len(terms) / avg_len[field] if avg_len[field] else 1.0
        for term in terms:
            counts[term] += weight / norm
    return {t: c / (K1 + c) for t, c in counts.items()}


def parse_query(query: str) -> list[tuple[str, bool]]:
    """The query's words, each with whether it must be in the tool's name (a ``+`` before
    it); stopwords dropped."""
    words: list[tuple[str, bool]] = []
    for token in query.split():
        required = token.startswith("+")
        words.extend((w, required) for w in split_words(token) if w not in STOPWORDS)
    return words


def query_operations(terms: list[QueryTerm]) -> frozenset[int]:
    """The operations the query's verbs name; the reading ones when it names none."""
    ops = frozenset().union(*(_OPERATIONS.get(stem(qt.raw), ()) for qt in terms))
    return ops or (_READ if terms else frozenset())


class SearchIndex:
    """Ranks a fixed list of tools for free-text queries (pure Python, no data files)."""

    def __init__(self, docs: Iterable[SearchDoc]) -> None:
        self._docs = list(docs)
        words = [tool_words(d) for d in self._docs]
        fields = [{f: terms_of(ws) for f, ws in w.items()} for w in words]
        n = len(fields)
        avg = {f: sum(len(x[f]) for x in fields) / n if n else 0.0 for f in FIELDS}
        self._postings: dict[str, list[tuple[int, float]]] = defaultdict(list)
        for i, tf in enumerate(fields):
            for term, weight in bm25f_weights(tf, avg).items():
                self._postings[term].append((i, weight))
        self._name_terms = [frozenset(tf["name"]) for tf in fields]
        self._name_words = [frozenset(w["name"]) for w in words]
        self._server_terms = [frozenset(tf["server"]) for tf in fields]
        self._server_words = frozenset(w for ws in words for w in ws["server"])
        self._operations = [tool_operations(w["name"]) for w in words]
        self._compact_names = [compact(d.name.split("__")[-1]) for d in self._docs]
        # Every catalogue word as written, with its term: what typos and prefixes are matched to.
        written = {w for ws in words for field in ws.values() for w in field}
        self._raw = {w: stem(w) for w in written - STOPWORDS}
        self._idf = {t: damped_idf(n, len(p)) for t, p in self._postings.items()}
        self._deletions: dict[str, list[str]] | None = None
        # Prefixes and skeletons shorten what a model saw: name and server words.
        self._by_initial: dict[str, list[str]] = defaultdict(list)
        for w in {w for ws in words for f in ("name", "server") for w in ws[f]} - STOPWORDS:
            self._by_initial[w[0]].append(w)
        self._cache: dict[str, dict[str, float]] = {}

    def __len__(self) -> int:
        return len(self._docs)

    def catalogue_words(self) -> dict[str, str]:
        """Every word of the tools as written (stopwords aside), with its term."""
        return dict(self._raw)

    # -- widening rules, each from one query word to weighted catalogue terms ------------------

    def typo_terms(self, word: str) -> list[str]:
        """Catalogue terms of words one edit from ``word`` (two for words of eight letters or
        more); none for words under four letters, where one edit makes another word."""
        if len(word) < 4:
            return []
        if self._deletions is None:
            self._deletions = defaultdict(list)
            for w in self._raw:
                for key in deletions(w):
                    self._deletions[key].append(w)
        limit = 2 if len(word) >= 8 else 1
        near = {w for key in deletions(word) for w in self._deletions.get(key, ())}
        return [self._raw[w] for w in near if edit_distance_within(word, w, limit)
                and (len(word) >= FIRST_LETTER_FREE or w[0] == word[0])]

    def prefix_terms(self, word: str) -> list[str]:
        """Catalogue terms of words that ``word`` (three letters or more) begins."""
        if len(word) < 3:
            return []
        return [self._raw[w] for w in self._by_initial[word[0]]
                if len(w) > len(word) and w.startswith(word)]

    def skeleton_terms(self, word: str) -> list[str]:
        """Catalogue terms of words ``word`` abbreviates by dropping letters (``mgmt``,
        ``cfg``); only for words with at most one vowel after the first letter, as
        abbreviations are. Two letters fit too many words to say which but a server's one
        (``sk`` for ``stockkeeper``), so they abbreviate only server words."""
        if len(word) < 2 or sum(c in "aeiou" for c in word[1:]) > 1:
            return []
        return [self._raw[w] for w in self._by_initial[word[0]] if is_skeleton_of(word, w)
                and (len(word) > 2 or w in self._server_words)]

    def variants(self, word: str) -> dict[str, float]:
        """The catalogue terms one query word stands for, each with how sure: the word's own
        term and an abbreviation's full word are sure, the fellows of its verb (or of the verb
        it abbreviates) nearly; the other rules apply only to a word the catalogue lacks."""
        if word in self._cache:
            return self._cache[word]
        term = stem(word)
        found: dict[str, float] = {}
        if term in self._postings:
            found[term] = 1.0
        for full in _ABBREVIATIONS.get(term, ()):
            if full in self._postings:
                found[full] = 1.0
        for verb in (term, *_ABBREVIATIONS.get(term, ())):
            for other in _ACTIONS.get(verb, ()):
                if other in self._postings:
                    found.setdefault(other, ACTION)
        if not found and not word.isdigit():
            for rule, sure in ((self.typo_terms, TYPO), (self.prefix_terms, PREFIX),
                               (self.skeleton_terms, SKELETON)):
                rarest = sorted(set(rule(word)), key=lambda t: (-self._idf[t], t))
                for t in rarest[:MAX_CANDIDATES]:
                    found[t] = max(found.get(t, 0.0), sure)
        if len(self._cache) < 4096:
            self._cache[word] = found
        return found

    def query_terms(self, query: str) -> list[QueryTerm]:
        """The query as terms, one per word."""
        return [QueryTerm(w, self.variants(w), req) for w, req in parse_query(query)]

    # -- ranking -------------------------------------------------------------------------------

    def scores(self, query: str) -> dict[int, float]:
        """Every matching tool's score, by position: per query word, its best term's
        ``sureness * idf * saturated frequency``, summed (a widened term's idf capped at the
        word's own, so a rarer synonym never outweighs the word as written); times the
        coordination factor; then the bonuses and the other-operation penalty."""
        terms = self.query_terms(query)
        total: dict[int, float] = defaultdict(float)
        matched: dict[int, int] = defaultdict(int)
        for qt in terms:
            best: dict[int, float] = {}
            own = self._idf.get(stem(qt.raw))
            for term, sure in qt.variants.items():
                idf = sure * (self._idf[term] if own is None else min(self._idf[term], own))
                for doc, sat in self._postings[term]:
                    value = idf * sat
                    if value > best.get(doc, 0.0):
                        best[doc] = value
            for doc, value in best.items():
                total[doc] += value
                matched[doc] += 1
        if COORDINATION:
            for doc in total:
                total[doc] *= (matched[doc] / len(terms)) ** COORDINATION
        required = [qt for qt in terms if qt.required]
        if required:
            total = {d: s for d, s in total.items()
                     if all(self._name_terms[d] & qt.variants.keys() for qt in required)}
        asked = set().union(*(qt.variants for qt in terms))
        written = [qt.raw for qt in terms]
        fragments = identifier_fragments(query)
        named = {t for qt in terms for t, sure in qt.variants.items() if sure == 1.0}
        wanted = query_operations(terms)
        listing = not any(stem(w) in _ACTIONS for w in written) and is_many(written)
        for doc in heapq.nlargest(RESCORED, total, key=total.__getitem__):
            ops = self._operations[doc]
            total[doc] *= (1.0 + NAME_COVERAGE * self.name_coverage(doc, asked)
                           + EXACT_FORM * self.exact_forms(doc, written)
                           + NAME_FRAGMENT * self.has_fragment(doc, fragments)
                           + SERVER_NAMED * bool(self._server_terms[doc] & named)
                           + PLURAL_LISTING * (listing and bool(ops & _LISTING))
                           - OTHER_OPERATION * bool(ops and wanted and not ops & wanted))
        return total

    def has_fragment(self, doc: int, fragments: list[str]) -> bool:
        """Whether the tool's name, compacted, contains one of the query's identifier
        fragments."""
        return any(f in self._compact_names[doc] for f in fragments)

    def exact_forms(self, doc: int, written: list[str]) -> float:
        """The fraction of the query's words that the tool's name has exactly as written."""
        name = self._name_words[doc]
        return sum(w in name for w in written) / len(written) if written else 0.0

    def name_coverage(self, doc: int, asked: set[str]) -> float:
        """The fraction of the tool's name terms among the query's terms."""
        name = self._name_terms[doc]
        return len(name & asked) / len(name) if name else 0.0

    def search(self, query: str, limit: int = 5) -> SearchOutcome:
        """The best ``limit`` tools for ``query``, best first, and how many matched at all."""
        scored = self.scores(query)
        best = heapq.nsmallest(max(0, limit), scored.items(),
                               key=lambda p: (-round(p[1], 9), self._docs[p[0]].name))
        return SearchOutcome([SearchHit(self._docs[d].name, round(s, 4)) for d, s in best],
                             len(scored))

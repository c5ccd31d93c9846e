"""The scorer: weighted fields per tool, an inverted index, and query terms with variants.

A query word matches a tool through its exact stem, an equivalent spelling, a related word, or
(when the word is unknown) a near spelling; each route has a weight below 1, and each field a
weight (name > server/prefix > hint > description > parameters). Rare words count more than
common ones, and a tool whose name the query covers well gets a bonus.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ._lexicon import Item, Lexicon
from ._model import SearchDoc, SearchHit, SearchOutcome
from ._tokens import NAME_FILLERS, STOPWORDS, bigrams, damerau_within, split_words, strip_token

NAME, NAME_SOFT, SERVER, HINT, DESC_HEAD, DESC, PARAM = 1.0, 0.5, 0.55, 0.6, 0.3, 0.15, 0.15
SOFT_TERM = 0.35
RELATED_SCALE = 1.0
TYPO_1, TYPO_2 = 0.7, 0.5
COVERAGE_BONUS = 0.3
SERVER_BOOST = 0.5
SHARED_WORD = 0.5
PLURAL_LIST = 0.2
EXTERNAL_BOOST = 1.05
PREFIX_SHARE, PREFIX_MIN_TOOLS = 0.6, 4
MAX_DESC_WORDS = 60
MAX_TYPO_CANDIDATES = 6

_LEXICON = Lexicon.build()
_LIST = _LEXICON.normalize("list")


_Parsed = tuple[SearchDoc, dict[str, list[Item]]]


@dataclass
class _Term:
    word: str
    raw: str
    variants: dict[str, float]
    weight: float
    required: bool


@dataclass
class _DocInfo:
    name: str
    lower_name: str
    external: bool
    name_words: frozenset[str]
    core_size: int
    server_words: frozenset[str]


def _split_name(doc: SearchDoc) -> tuple[str, str]:
    """(server part, tool part) of a registered name; ``mcp__srv__tool`` is split at ``__``."""
    if doc.name.startswith("mcp__"):
        parts = doc.name.split("__")
        if len(parts) >= 3:
            return parts[1], "__".join(parts[2:])
    return "", doc.name


def _param_text(parameters: Mapping[str, Any] | None) -> str:
    """Property names and string enum values of a JSON schema, as one text."""
    if not parameters:
        return ""
    props = parameters.get("properties")
    if not isinstance(props, Mapping):
        return ""
    words: list[str] = []
    for key, spec in props.items():
        words.append(str(key))
        enum = spec.get("enum") if isinstance(spec, Mapping) else None
        if isinstance(enum, list):
            words.extend(str(v) for v in enum if isinstance(v, str))
    return " ".join(words)


def _head_and_rest(description: str) -> tuple[str, str]:
    """The first sentence of a description, and the rest cut to a bounded number of words."""
    text = description.strip()
    cut = len(text)
    for mark in (". ", ".\n", "\n"):
        at = text.find(mark)
        if 0 <= at < cut:
            cut = at
    rest = text[cut:].split()
    return text[:cut], " ".join(rest[:MAX_DESC_WORDS])


class SearchIndex:
    """Ranks registered tools for a short natural-language or keyword query."""

    def __init__(self, docs: Iterable[SearchDoc]) -> None:
        self._docs: list[_DocInfo] = []
        self._postings: dict[str, list[tuple[int, float, bool]]] = defaultdict(list)
        parsed = [self._parse_doc(doc) for doc in docs]
        prefixes = self._server_prefixes(parsed)
        vocab = {item.word for p in parsed for items in p[1].values() for item in items}
        for i, (doc, fields) in enumerate(parsed):
            self._add_doc(i, doc, fields, prefixes.get(_split_name(doc)[0] or (doc.server or "")),
                          vocab)
        n = len(self._docs)
        self._idf = {w: math.log(1.0 + n / len(p)) for w, p in self._postings.items()}
        self._name_vocab = {
            w for w, p in self._postings.items() if any(core for _, _, core in p)
        }
        self._grams: dict[str, set[str]] | None = None
        self._typo_cache: dict[str, dict[str, float]] = {}

    def __len__(self) -> int:
        return len(self._docs)

    @staticmethod
    def _parse_doc(doc: SearchDoc) -> _Parsed:
        server_part, tool_part = _split_name(doc)
        head, rest = _head_and_rest(doc.description)
        servers = " ".join(s for s in {server_part, doc.server or ""} if s)
        lex = _LEXICON
        return doc, {
            "tool": lex.text_items(tool_part, keep_stopwords=True),
            "server": lex.text_items(servers),
            "hint": lex.text_items(doc.search_hint),
            "head": lex.text_items(head),
            "rest": lex.text_items(rest),
            "param": lex.text_items(_param_text(doc.parameters)),
        }

    @staticmethod
    def _server_prefixes(parsed: list[_Parsed]) -> dict[str, set[str]]:
        """Per server, a leading word most of its tool names share (``browser_``, ``jira_``).

        Such a word says which server a tool is from, not what it does, so it is weighted like
        the server name and left out of name coverage.
        """
        counts: dict[str, Counter[str]] = defaultdict(Counter)
        sizes: Counter[str] = Counter()
        for doc, fields in parsed:
            key = _split_name(doc)[0] or (doc.server or "")
            if not key:
                continue
            sizes[key] += 1
            lead = next((it.word for it in fields["tool"] if not it.soft), None)
            if lead is not None:
                counts[key][lead] += 1
        return {
            key: {w for w, c in counts[key].items() if c >= PREFIX_SHARE * sizes[key]}
            for key in counts
            if sizes[key] >= PREFIX_MIN_TOOLS
        }

    def _add_doc(self, i: int, doc: SearchDoc, fields: dict[str, list[Item]],
                 prefixes: set[str] | None, vocab: set[str]) -> None:
        weights: dict[str, float] = {}
        core: set[str] = set()

        def put(word: str, weight: float) -> None:
            if weights.get(word, 0.0) < weight:
                weights[word] = weight

        for item in fields["tool"]:
            if prefixes and item.word in prefixes:
                put(item.word, SERVER)
            elif item.soft:
                put(item.word, NAME_SOFT)
            else:
                put(item.word, NAME)
                if item.raw not in NAME_FILLERS:
                    core.add(item.word)
                for part in self._compound_parts(item.word, vocab):
                    put(part, NAME_SOFT)
        for field_name, weight in (("server", SERVER), ("hint", HINT), ("head", DESC_HEAD),
                                   ("rest", DESC), ("param", PARAM)):
            for item in fields[field_name]:
                put(item.word, weight)
        for word, weight in weights.items():
            self._postings[word].append((i, weight, word in core))
        servers = {it.word for it in fields["server"]}
        name_words = {w for w, fw in weights.items() if fw >= NAME_SOFT} | servers
        self._docs.append(_DocInfo(doc.name, doc.name.lower(), doc.external,
                                   frozenset(name_words), len(core) or 1, frozenset(servers)))

    @staticmethod
    def _compound_parts(word: str, vocab: set[str]) -> list[str]:
        """Two known words a long unknown name word is made of (``worklog``: work, log)."""
        if len(word) < 6 or not word.isalpha() or _LEXICON.known(word):
            return []
        for cut in range(3, len(word) - 2):
            left, right = word[:cut], word[cut:]
            left_n, right_n = _LEXICON.normalize(left), _LEXICON.normalize(right)
            if (left_n in vocab or _LEXICON.known(left_n)) and (
                right_n in vocab or _LEXICON.known(right_n)
            ):
                return [left_n, right_n]
        return []

    def _typos(self, word: str, raw_len: int) -> dict[str, float]:
        """Index words within one edit (two for long words) of an unknown query word."""
        if raw_len < 4 or not word.isalpha():
            return {}
        cached = self._typo_cache.get(word)
        if cached is not None:
            return cached
        if self._grams is None:
            grams: dict[str, set[str]] = defaultdict(set)
            for w in self._postings:
                if len(w) >= 3 and w.isalpha():
                    for g in bigrams(w):
                        grams[g].add(w)
            self._grams = grams
        limit = 2 if raw_len >= 8 else 1
        mine = bigrams(word)
        shared: Counter[str] = Counter()
        for g in mine:
            shared.update(self._grams.get(g, ()))
        need = len(mine) - 3 * limit
        found: dict[str, float] = {}
        for cand, count in shared.most_common():
            if count < need:
                break
            if cand != word and damerau_within(word, cand, limit):
                found[cand] = TYPO_1 if damerau_within(word, cand, 1) else TYPO_2
        best = dict(sorted(found.items(), key=lambda kv: (-kv[1], -len(self._postings[kv[0]])))
                    [:MAX_TYPO_CANDIDATES])
        if len(self._typo_cache) < 4096:
            self._typo_cache[word] = best
        return best

    def _terms(self, query: str) -> list[_Term]:
        runs: list[tuple[list[str], bool]] = []
        for raw in query.split():
            token = strip_token(raw)
            required = token.startswith("+")
            if required:
                token = token[1:]
            low = token.lower()
            if len(low) < 2 or low in STOPWORDS:
                if runs and not runs[-1][1]:
                    runs[-1][0].append(low)
                continue
            words = split_words(token)
            if required or not runs or runs[-1][1]:
                runs.append((words, required))
            else:
                runs[-1][0].extend(words)
        terms: dict[str, _Term] = {}
        for words, required in runs:
            items = self._split_unknown(self._join_compounds(_LEXICON.items(words)))
            for item in items:
                term = self._term(item, required)
                old = terms.get(item.word)
                if old is None or old.weight < term.weight:
                    terms[item.word] = term
        plural = any(t.raw.endswith("s") and t.word != t.raw and len(t.raw) > 3
                     for t in terms.values())
        if plural and PLURAL_LIST > 0 and _LIST not in terms:
            terms[_LIST] = _Term(_LIST, "", {_LIST: 1.0}, PLURAL_LIST, required=False)
        return list(terms.values())

    def _join_compounds(self, items: list[Item]) -> list[Item]:
        """Adjacent words that together spell one name word (``data base``) become that word."""
        out: list[Item] = []
        i = 0
        while i < len(items):
            if i + 1 < len(items) and not items[i].soft and not items[i + 1].soft:
                joined = _LEXICON.normalize(items[i].raw + items[i + 1].raw)
                if joined in self._name_vocab and joined not in (items[i].word, items[i + 1].word):
                    out.append(Item(joined, raw=items[i].raw + items[i + 1].raw))
                    out.extend(Item(it.word, soft=True, raw=it.raw) for it in items[i : i + 2])
                    i += 2
                    continue
            out.append(items[i])
            i += 1
        return out

    def _unknown(self, word: str) -> bool:
        return word not in self._postings and not _LEXICON.known(word)

    def _split_unknown(self, items: list[Item]) -> list[Item]:
        """An unknown word with no near spelling, read as two known words (``overwrite``).

        A leading ``re`` is read as a repeat of the rest (``rerun``: run).
        """
        out: list[Item] = []
        for item in items:
            word = item.word
            if item.soft or len(word) < 5 or not word.isalpha() or not self._unknown(word) \
                    or self._typos(word, len(item.raw)):
                out.append(item)
                continue
            parts: list[str] = []
            rest = _LEXICON.normalize(word[2:]) if word.startswith("re") else ""
            if rest and not self._unknown(rest):
                parts = [rest]
            else:
                for cut in range(3, len(word) - 2):
                    left, right = _LEXICON.normalize(word[:cut]), _LEXICON.normalize(word[cut:])
                    if not self._unknown(left) and not self._unknown(right):
                        parts = [left, right]
                        break
            out.extend([Item(p, raw=p) for p in parts] or [item])
        return out

    def _term(self, item: Item, required: bool) -> _Term:
        variants: dict[str, float] = {item.word: 1.0}
        sources = [(item.word, 1.0)]
        if self._unknown(item.word):
            typos = self._typos(item.word, len(item.raw))
            variants.update(typos)
            sources.extend(typos.items())
        for source, base in sources:
            for rel, w in _LEXICON.related.get(source, {}).items():
                weight = base * w * RELATED_SCALE
                if variants.get(rel, 0.0) < weight:
                    variants[rel] = weight
        return _Term(item.word, item.raw, variants, SOFT_TERM if item.soft else 1.0, required)

    def search(self, query: str, limit: int = 5) -> SearchOutcome:
        """The best ``limit`` tools for ``query``, best first, and how many matched at all."""
        terms = self._terms(query)
        if not terms:
            return SearchOutcome([], 0)
        n = len(self._docs)
        claims: dict[int, dict[str, list[tuple[float, float]]]] = defaultdict(dict)
        for term in terms:
            best: dict[int, tuple[float, float, str]] = {}
            for variant, vw in term.variants.items():
                for doc, fw, core in self._postings.get(variant, ()):
                    s = fw * vw
                    cur = best.get(doc)
                    if cur is None or s > cur[0]:
                        best[doc] = (s, vw if core else 0.0, variant)
            if not best:
                continue
            idf = math.log(1.0 + n / len(best)) * term.weight
            for doc, (s, covered, variant) in best.items():
                claims[doc].setdefault(variant, []).append((s * idf, covered * term.weight))
        required = [t for t in terms if t.required]
        named = {t.word for t in terms if t.weight == 1.0}
        ranked: list[tuple[float, str]] = []
        for doc, mine in claims.items():
            info = self._docs[doc]
            if required and not all(self._has_in_name(info, t) for t in required):
                continue
            score = covered = 0.0
            for shared in mine.values():
                if len(shared) > 1:
                    shared.sort(reverse=True)
                score += shared[0][0] + SHARED_WORD * sum(v[0] for v in shared[1:])
                covered += shared[0][1]
            coverage = min(1.0, covered / info.core_size)
            final = score * (1.0 + COVERAGE_BONUS * coverage)
            if info.external:
                final *= EXTERNAL_BOOST
            if info.server_words & named:
                final *= 1.0 + SERVER_BOOST
            if final > 0:
                ranked.append((final, info.name))
        ranked.sort(key=lambda p: (-round(p[0], 9), p[1]))
        top = [SearchHit(name, round(score, 4)) for score, name in ranked[: max(0, limit)]]
        return SearchOutcome(top, len(ranked))

    @staticmethod
    def _has_in_name(info: _DocInfo, term: _Term) -> bool:
        if term.raw and term.raw in info.lower_name:
            return True
        return any(v in info.name_words for v in term.variants)

"""The scorer: weighted fields per tool, an inverted index, and query terms with variants.

A query word matches a tool through its exact stem, an equivalent spelling, a related word, a
near spelling or an abbreviation; each route has a weight below 1, and each field a weight (name >
server/prefix > hint > description > parameters). A term counts as much as its best-matching form
is rare, and less when it is a verb that describes (``running containers``) rather than asks. A
tool's score then grows with how much of the query it matches, how much of its name the query
covers and whether the query names its server, and is nudged by what the query's verb asks (a
read, a create, ...; a question asks to look) against the verb of the name, more so when a
tool of the same server about the same thing does what the query asks, and by plural against
singular.
"""

from __future__ import annotations

import heapq
import itertools
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ._lexicon import Item, Lexicon
from ._model import SearchDoc, SearchHit, SearchOutcome
from ._neighbours import shipped_neighbours
from ._tokens import NAME_FILLERS, STOPWORDS, bigrams, damerau_within, split_words, strip_token
from ._vocab import (
    ADJECTIVE_VERBS,
    ARTICLES,
    ASPECT_PLURALS,
    DETERMINERS,
    HOW_TO,
    LISTING_NOUNS,
    LOOK_FAMILIES,
    MANY_FAMILIES,
    NEGATION_FILLERS,
    NEGATIONS,
    NOUN_VERB_CUES,
    NOUN_VERB_FAMILIES,
    PARTICLES,
    POSSESSIVES,
    PREPOSITIONS,
    QUANTIFIERS,
    QUESTION_STARTS,
    READ_FAMILIES,
    SUBJECTS,
    UNDO_CUES,
)

# Field weights: how much a match in each part of a tool counts.
NAME, NAME_SOFT, NAME_PART = 1.0, 0.5, 0.75
SERVER, HINT, DESC_HEAD, DESC, PARAM = 0.55, 0.6, 0.3, 0.15, 0.15
# Term weights: part of a folded phrase, the word a loose thesaurus phrase hints, a verb used as
# an adjective, and near spellings at one and two edits.
SOFT_TERM = 0.35
HINT_TERM = 0.6
QUALIFIER_TERM = 0.5
RELATED_SCALE = 1.0
NEIGHBOUR_SCALE, NEIGHBOUR_MIN = 0.5, 0.55
TYPO_1, TYPO_2 = 0.7, 0.5
REAL_WORD_TYPO = 0.5
TYPO_KNOWN, TYPO_KNOWN_RATIO, TYPO_KNOWN_LEN = 0.7, 3.0, 5
MAX_TYPO_CANDIDATES = 6
SHORT_STEM = 3
ABBREV_PREFIX, ABBREV_SKELETON = 0.7, 0.6
SERVER_SHORT, SERVER_SHORT_TAIL = 0.9, 2
ABBREV_MAX_LEN, MAX_ABBREV_CANDIDATES = 5, 3
# Whole-tool factors.
COVERAGE_BONUS = 0.3
COORD, COORD_FULL = 1.0, 0.3
SHARED_WORD = 0.5
SERVER_BOOST, COMMON_SERVER_BOOST = 1.0, 0.5
EXTERNAL_BOOST = 1.05
IMPLIED_READ, IMPLIED_MANY = 0.2, 0.1
LOOK_MANY = 0.8
ACTION_CONFLICT = 0.1
NUMBER_AGREE, NUMBER_CLASH = 0.06, 0.06
NAME_FRAGMENT, FRAGMENT_MIN = 1.0, 6
HEAD_NOUN, HEAD_VARIANT, HEAD_UNMARKED = 0.2, 0.85, 0.5
# A long query describes what it wants: words matched in a description or parameter count more
# for each full term past this many.
LONG_DESC, LONG_FROM = 0.3, 2
UNDONE_WORD = 0.5
NOMINAL_ENDINGS = ("ment", "tion", "sion", "ing")
VERB_SYNONYM = 0.8
SIBLING_CONFLICT = 0.15
# Index shape.
PREFIX_SHARE, PREFIX_MIN_TOOLS = 0.6, 4
MAX_DESC_WORDS = 60
MAX_PARTICLE_GAP = 3
# How far a tool named for a word the query negates falls (``without deleting it``).
UNWANTED = 0.5
GLUED_MIN = 4
WRITTEN_GAP = 3

_LEXICON = Lexicon.build()
# Words no typo is taken to mean: a misspelt query word is a content word.
_FUNCTION_WORDS = STOPWORDS | NAME_FILLERS
_VOWELS = frozenset("aeiou")
_UPDATE = _LEXICON.normalize("update")
_LIST = _LEXICON.normalize("list")


_Parsed = tuple[SearchDoc, dict[str, list[Item]]]


@dataclass
class _Term:
    """One query word with the index words it may match, each at a weight.

    ``spellings`` are the variants that are the same word written otherwise (a near spelling or
    an abbreviation), which name a server as the word itself would.
    """

    word: str
    raw: str
    variants: dict[str, float]
    weight: float
    required: bool
    spellings: frozenset[str] = frozenset()
    loose: frozenset[str] = frozenset()


@dataclass
class _DocInfo:
    """What ranking needs of a tool beyond its postings.

    ``action`` holds the families of the name's verb: its first verb word, unless that is
    written as a plural and another follows (``wp_posts_search``: search). ``actions`` holds
    those of all its verb words, ``number`` whether each name word is written as a plural, and
    ``head`` the name's head noun: its last word before the first filler that follows one,
    skipping verbs and server words (``add_followers_to_task``: followers). ``siblings``
    numbers the tools of one server with one head noun alike (None without a head).
    """

    name: str
    lower_name: str
    compact: str
    external: bool
    name_words: frozenset[str]
    core_size: int
    server_words: frozenset[str]
    action: frozenset[str]
    actions: frozenset[str]
    number: dict[str, bool]
    head: str | None
    siblings: int | None


def _split_name(doc: SearchDoc) -> tuple[str, str]:
    """(server part, tool part) of a registered name; ``mcp__srv__tool`` is split at ``__``."""
    if doc.name.startswith("mcp__"):
        parts = doc.name.split("__")
        if len(parts) >= 3:
            return parts[1], "__".join(parts[2:])
    return "", doc.name


_HYPHENED = re.compile(r"[a-z]+(?:-[a-z]+)+")


def _hyphened(text: str) -> list[Item]:
    """Hyphened words of a description written as one (``no-shows``: noshows)."""
    return [Item(_LEXICON.normalize(w.replace("-", "")), raw=w)
            for w in _HYPHENED.findall(text.lower())]


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


def _in_phrase(words: list[str], i: int, *, hints: bool = False) -> bool:
    """Whether ``words[i]`` is part of a vocabulary phrase, or with ``hints`` of a loose
    thesaurus phrase (which may hold an article besides its own words)."""
    for start in range(max(0, i - _LEXICON.longest_phrase), i + 1):
        for found in (_LEXICON.phrase_at(words, start, query=True),
                      _LEXICON.hint_at(words, start) if hints else None):
            if found is not None and start + found[1] > i:
                return True
    return False


def _gather_particles(tokens: list[str]) -> list[str]:
    """A phrase's end moved back next to its verb across a short object (``kick someone out``,
    ``take a CMS article offline``, ``keep this message at the top``); an article inside the
    end stays behind.

    Only ends that the vocabulary and thesaurus give their verb move, and a single word only if
    it is seldom a preposition, so ``log errors in prod`` stays as it is.
    """
    out = list(tokens)
    stems = [_LEXICON.stem_of(t.lower()) for t in out]
    for i in range(len(out) - 2):
        ends = _LEXICON.particle_verbs.get(stems[i])
        if not ends or any(tuple(stems[i + 1 : i + 1 + len(end)]) == end for end in ends):
            continue
        found = _phrase_end(out, stems, i, ends)
        for seq in (out, stems):
            moved = [seq[k] for k in found]
            for k in reversed(found):
                del seq[k]
            seq[i + 1 : i + 1] = moved
    return out


def _phrase_end(tokens: list[str], stems: list[str], verb: int,
                ends: list[tuple[str, ...]]) -> list[int]:
    """Where the first of ``ends`` (longest first) begins after an object of one to
    ``MAX_PARTICLE_GAP`` words besides articles, skipping articles inside it: its words'
    positions, or none. An end that closes a phrase of its own stays (``get money back``:
    money back, not get back)."""
    low = [t.lower() for t in tokens]
    gap = 0
    for j in range(verb + 1, len(low)):
        if low[j] in ARTICLES:
            continue
        if gap > MAX_PARTICLE_GAP:
            break
        gap += 1
        if gap == 1:
            continue
        at = [k for k in range(j, len(low)) if low[k] not in ARTICLES]
        for end in ends:
            if tuple(stems[k] for k in at[: len(end)]) == end \
                    and _LEXICON.phrase_at(low, j - 1, query=True) is None:
                return at[: len(end)]
    return []


def _is_question(tokens: list[str]) -> bool:
    """Whether the words ask a question (``which alerts are firing``, ``how many keys``) rather
    than ask for an action (``how do I create a task``)."""
    if not tokens:
        return False
    first = tokens[0].replace("'", "")
    if first == "how":
        return len(tokens) > 1 and tokens[1] not in HOW_TO
    return first in QUESTION_STARTS


def _qualifiers(tokens: list[str]) -> set[str]:
    """Verbs that describe rather than ask: participles that qualify a noun (``running
    containers``, ``tasks completed today``; not the first word, and before a word or after a
    plural), any verb after a subject (``the documents we sent``) and, in a question, any
    participle (``what is building``).
    """
    found: set[str] = set()
    question = _is_question(tokens)
    content = [i for i, t in enumerate(tokens) if len(t) >= 2 and t not in STOPWORDS]
    for k, i in enumerate(content):
        tok = tokens[i]
        if not tok.isalpha() or _LEXICON.normalize(tok) not in _LEXICON.actions:
            continue
        participle = tok.endswith(("ing", "ed")) or tok in _LEXICON.past_forms
        if question:
            if participle or (i > 0 and tokens[i - 1] in SUBJECTS):
                found.add(tok)
            continue
        if k > 0 and tokens[i - 1] in SUBJECTS and tokens[i - 1] != "to":
            # A clause after the request describes its noun (``the document I sent``,
            # ``targets snyk is monitoring``).
            found.add(tok)
            continue
        if not participle or k == 0:
            continue
        before = tokens[content[k - 1]]
        if (i + 1 < len(tokens) and content[-1] > i and tokens[i + 1] not in STOPWORDS) or (
            content[k - 1] == i - 1 and _is_plural(before, _LEXICON.normalize(before))
        ):
            found.add(tok)
    return found


def _describes(raw: str, qualifiers: set[str]) -> bool:
    """Whether a query item is a describing verb: a qualifier, or a phrasal verb whose verb is
    one (``signed up``; not ``waiting list``, a noun)."""
    words = raw.split()
    return raw in qualifiers or (len(words) == 2 and words[0] in qualifiers
                                 and words[1] in PARTICLES)


def _skeleton_of(short: str, word: str) -> bool:
    """Whether every letter of ``short`` occurs in ``word`` in order."""
    rest = iter(word)
    return all(ch in rest for ch in short)


def _query_words(query: str) -> list[str]:
    """The query's lowercase words, identifiers split (``listIssues``: list, issues)."""
    return [w for raw in query.lower().split() for w in split_words(strip_token(raw))]


def _compact(text: str) -> str:
    """An identifier without case or separators: ``auth0_get_Res`` is ``auth0getres``."""
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _fragments(query: str) -> list[str]:
    """Query tokens written as identifiers (``auth0_get_res``, ``listConnectedDest``), compacted.

    A model that half remembers a tool name writes its start, often cut inside a word; such a
    token found inside a tool's name points at that tool.
    """
    found: list[str] = []
    for raw in query.split():
        token = strip_token(raw.lstrip("+"))
        camel = any(a.islower() and b.isupper() for a, b in itertools.pairwise(token))
        # A hyphen joins English words as often (``on-call``, ``sign-up``) as name parts.
        hyphened = "-" in token and not all(
            p in STOPWORDS or p in NAME_FILLERS or p in PARTICLES
            or _LEXICON.known(_LEXICON.normalize(p))
            for p in token.lower().split("-") if p)
        shaped = "_" in token or camel or hyphened
        compact = _compact(token)
        if shaped and len(compact) >= FRAGMENT_MIN:
            found.append(compact)
    return found


def _quantified(query: str) -> tuple[str, frozenset[str]]:
    """The query without its determiners, and the words a quantifier asks many of, as written:
    the nouns after it up to a stop word, preposition, verb or comma (``every order placed``,
    ``each hetzner server in``). A determiner inside a phrase stays (``know your customer``);
    ``all`` stays too, as names spell it (``get_all_entries``)."""
    tokens = query.split()
    lows = [strip_token(t).lower() for t in tokens]
    keep: list[str] = []
    many: set[str] = set()
    counting = counted = False
    for i, (token, low) in enumerate(zip(tokens, lows, strict=True)):
        if low in QUANTIFIERS or low in DETERMINERS:
            counting = counting or low in QUANTIFIERS
            if low not in DETERMINERS or _in_phrase(lows, i, hints=True):
                keep.append(token)
            continue
        verb = counted and (_LEXICON.normalize(low) in _LEXICON.actions or low.endswith("ed"))
        if low in STOPWORDS or low in PREPOSITIONS or verb:
            counting = counted = False
        elif counting:
            many.add(low)
            counted = True
        if token.endswith((",", ";", ":", ".")):
            counting = counted = False
        keep.append(token)
    return " ".join(keep), frozenset(many)


# Two letters joined by ``&`` or ``/`` are initials (``P&L``, ``a/b``).
_INITIALS = re.compile(r"\b([A-Za-z])[&/]([A-Za-z])\b")


def _drop_negated(query: str) -> tuple[str, list[str]]:
    """The query without the words it says it does not want (``archive it without deleting
    it``, ``so they can no longer log in``): a negation word and the content word after it; and
    those content words."""
    tokens = query.split()
    low = [strip_token(t).lower().replace("'", "").replace("\u2019", "") for t in tokens]
    if not NEGATIONS.intersection(low):
        return query, []
    keep: list[str] = []
    dropped: list[str] = []
    dropping = False
    for k, (token, word) in enumerate(zip(tokens, low, strict=True)):
        # A negation inside a phrase is part of what it means (``did not show``: noshow).
        if word in NEGATIONS and not _in_phrase(low, k, hints=True):
            dropping = True
            continue
        if dropping:
            if word in STOPWORDS or word in NEGATION_FILLERS:
                continue
            dropping = False
            dropped.append(word)
            continue
        keep.append(token)
    return " ".join(keep), dropped


def _is_plural(raw: str, word: str) -> bool:
    """Whether a written word is the plural of its stem (``boards``, ``repos``, ``prs``, ``mrs``,
    ``indices``, not ``status`` or ``gas``)."""
    if raw in _LEXICON.plural_forms:
        return True
    return raw.endswith("s") and raw != word and not raw.endswith("ss") and (
        len(raw) > 3 or _LEXICON.normalize(raw[:-1]) == word)


def _is_nominal(raw: str, word: str) -> bool:
    """Whether a written word is a noun made from its stem's verb (``deployment``, ``location``),
    which names a thing, not the action."""
    single = raw[:-1] if raw.endswith("s") else raw
    return single.endswith(NOMINAL_ENDINGS) and len(word) < len(single)


def _plural(term: _Term) -> bool:
    """Whether the query wrote this term as a plural noun."""
    return _is_plural(term.raw, term.word)


class SearchIndex:
    """Ranks registered tools for a short natural-language or keyword query."""

    def __init__(self, docs: Iterable[SearchDoc]) -> None:
        self._docs: list[_DocInfo] = []
        self._sibling_groups: dict[tuple[frozenset[str], str], int] = {}
        self._postings: dict[str, list[tuple[int, float, bool]]] = defaultdict(list)
        parsed = [self._parse_doc(doc) for doc in docs]
        prefixes = self._server_prefixes(parsed)
        vocab = {item.word for p in parsed for items in p[1].values() for item in items}
        self._prose = {item.word for p in parsed for f in ("hint", "head", "rest")
                       for item in p[1][f]}
        # Words as written, for typos of a form its stem is too far from to be reached through
        # the stem (``assignmnet``: assignment, stem assign).
        self._written = {item.raw: item.word for p in parsed for items in p[1].values()
                         for item in items
                         if len(item.raw) - len(item.word) >= WRITTEN_GAP and item.raw.isalpha()
                         and not item.soft}
        for i, (doc, fields) in enumerate(parsed):
            self._add_doc(i, doc, fields, prefixes.get(_split_name(doc)[0] or (doc.server or "")),
                          vocab)
        self._name_vocab = {
            w for w, p in self._postings.items() if any(core for _, _, core in p)
        }
        self._server_vocab = frozenset().union(*(d.server_words for d in self._docs))
        self._common_servers = self._common_server_words(parsed)
        self._abbrev_cache: dict[str, dict[str, float]] = {}
        self._initials: dict[str, list[str]] | None = None
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
            "head": lex.text_items(head) + _hyphened(head),
            "rest": lex.text_items(rest) + _hyphened(rest),
            "param": lex.text_items(_param_text(doc.parameters)),
        }

    @staticmethod
    def _server_prefixes(parsed: list[_Parsed]) -> dict[str, set[str]]:
        """Per server, a leading word most of its tool names share (``browser_``, ``jira_``).

        Such a word says which server a tool is from, not what it does, so it is weighted like
        the server name and left out of name coverage. A verb is never one: a server whose tools
        are mostly ``get_*`` still gets things.
        """
        counts: dict[str, Counter[str]] = defaultdict(Counter)
        sizes: Counter[str] = Counter()
        for doc, fields in parsed:
            key = _split_name(doc)[0] or (doc.server or "")
            if not key:
                continue
            sizes[key] += 1
            lead = next((it.word for it in fields["tool"] if not it.soft), None)
            if lead is not None and lead not in _LEXICON.actions:
                counts[key][lead] += 1
        return {
            key: {w for w, c in counts[key].items() if c >= PREFIX_SHARE * sizes[key]}
            for key in counts
            if sizes[key] >= PREFIX_MIN_TOOLS
        }

    def _add_doc(self, i: int, doc: SearchDoc, fields: dict[str, list[Item]],
                 prefixes: set[str] | None, vocab: set[str]) -> None:
        """Post every word of a tool at the weight of its best field, and note its name's shape.

        A server word or shared prefix inside a name says where the tool is from, so it weighs
        as the server does; parts of glued or compound name words stand in for them.
        """
        weights: dict[str, float] = {}
        core: set[str] = set()
        actions: list[frozenset[str]] = []
        number: dict[str, bool] = {}
        last_plural = plural_first = False
        parts: set[str] = set()
        servers = {it.word for it in fields["server"]}
        servers.update(p for w in list(servers) for p in self._glued_parts(w, vocab))
        server_like = servers | (prefixes or set())

        def put(word: str, weight: float) -> None:
            if weights.get(word, 0.0) < weight:
                weights[word] = weight

        head_words: list[str] = []
        past_filler = False
        for item in fields["tool"]:
            if item.raw in NAME_FILLERS:
                past_filler = past_filler or bool(head_words)
            elif not past_filler and not item.soft and item.word not in server_like \
                    and (item.word not in _LEXICON.actions or _is_nominal(item.raw, item.word)):
                head_words.append(item.word)
            if item.word in server_like:
                put(item.word, SERVER)
            elif item.soft:
                put(item.word, NAME_SOFT)
            else:
                put(item.word, NAME)
                if item.raw not in NAME_FILLERS:
                    core.add(item.word)
                    number.setdefault(item.word, _is_plural(item.raw, item.word))
                    families = _LEXICON.actions.get(item.word)
                    if families and not _is_nominal(item.raw, item.word):
                        actions.append(families)
                        if number[item.word] and len(actions) == 1:
                            plural_first = True
                    elif actions:
                        last_plural = _is_plural(item.raw, item.word)
                for part in self._glued_parts(item.word, vocab) or \
                        self._compound_parts(item.word, vocab):
                    put(part, NAME_PART)
                    parts.add(part)
        for field_name, weight in (("server", SERVER), ("hint", HINT), ("head", DESC_HEAD),
                                   ("rest", DESC), ("param", PARAM)):
            for item in fields[field_name]:
                put(item.word, weight)
        for key, weight in self._initialisms(fields["tool"], servers, vocab,
                                              doc.server or _split_name(doc)[0]).items():
            put(key, weight)
        for word, weight in weights.items():
            self._postings[word].append((i, weight, word in core or word in parts))
        name_words = {w for w, fw in weights.items() if fw >= NAME_SOFT} | servers
        if plural_first and len(actions) > 1:
            # A plural first verb word is the thing the next verb acts on (``wp_posts_search``).
            actions.append(actions.pop(0))
        action = actions[0] if actions else frozenset()
        if last_plural and action & LOOK_FAMILIES:
            # Getting things (``getPullRequests``, ``get_entities``) is listing them.
            action = action | MANY_FAMILIES
            actions[0] = action
        head = head_words[-1] if head_words else None
        siblings = None if head is None else self._sibling_groups.setdefault(
            (frozenset(servers), head), len(self._sibling_groups))
        self._docs.append(_DocInfo(doc.name, doc.name.lower(), _compact(doc.name), doc.external,
                                   frozenset(name_words), len(core) or 1, frozenset(servers),
                                   action, frozenset().union(*actions), number, head, siblings))

    def _initialisms(self, name: list[Item], servers: set[str], vocab: set[str],
                     server_name: str) -> dict[str, float]:
        """Initials of two or three adjacent name words (``feature_flag``: ff, ``profit_and_loss``:
        pl) and of the server's name (``google-analytics``: ga) or a glued one's parts
        (``homeassistant``: ha), as index keys ``#ff``.

        They live apart from words, so a query reaches them only with an unknown short token.
        """
        words = [it.raw for it in name
                 if not it.soft and it.raw not in NAME_FILLERS and it.word not in servers]
        found: dict[str, float] = {}
        for size in (2, 3):
            for start in range(len(words) - size + 1):
                found["#" + "".join(w[0] for w in words[start:start + size])] = NAME_PART
        for server in servers:
            glued = self._compound_parts(server, vocab)
            if len(glued) == 2:
                found.setdefault("#" + glued[0][0] + glued[1][0], SERVER)
        spelled = split_words(server_name)
        if 2 <= len(spelled) <= 3:
            found.setdefault("#" + "".join(w[0] for w in spelled), SERVER)
        return found

    @staticmethod
    def _common_server_words(parsed: list[_Parsed]) -> frozenset[str]:
        """Server words that say less about which server is meant: ordinary words (``time``,
        ``memory``) and words of more than one server (``google``)."""
        owners: dict[str, set[str]] = defaultdict(set)
        for doc, fields in parsed:
            for item in fields["server"]:
                owners[item.word].add(doc.server or _split_name(doc)[0])
        return frozenset(w for w, who in owners.items() if len(who) > 1 or _LEXICON.known(w))

    def _glued_parts(self, word: str, vocab: set[str]) -> list[str]:
        """The words after a one- or two-letter tag glued to a made-up name word.

        ``smembers`` is members, ``gdrive`` drive, ``hgetall`` get and all. A word the catalogue's
        prose uses is a real word and stays whole (``scan``, ``stable``).
        """
        if len(word) < GLUED_MIN or not word.isalpha() or word in self._prose \
                or _LEXICON.known(word):
            return []
        for cut in (1, 2):
            rest = word[cut:]
            if len(rest) < 3:
                break
            norm = _LEXICON.normalize(rest)
            if norm in self._prose or _LEXICON.known(norm):
                return [norm]
            parts = self._compound_parts(rest, vocab)
            if parts:
                return parts
        return []

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

    def _near(self, item: Item) -> dict[str, float]:
        """Near spellings of an unknown query word: as stemmed, as written (``reids``: redis) or
        as a misspelt plural (``gropus``: group)."""
        found = dict(self._typos(item.word, len(item.raw)))  # the caller adds to it
        forms = [item.raw] if item.raw != item.word and item.raw.isalpha() else []
        if item.raw.endswith("s") and item.raw[:-1] != item.word and item.raw.isalpha():
            forms.append(item.raw[:-1])
        for form in forms:
            for cand, w in self._typos(form, len(item.raw)).items():
                if found.get(cand, 0.0) < w:
                    found = {**found, cand: w}
        return found

    def _typos(self, word: str, raw_len: int) -> dict[str, float]:
        """Index words within one edit (two for long words) of an unknown query word.

        A stem of three letters takes only swapped or dropped letters (``lgo``: log, ``isu``:
        issue); a changed letter in so short a word reaches too many words (``living``: ``liv``,
        not lit or line).
        """
        if raw_len < 4 or not word.isalpha():
            return {}
        cached = self._typo_cache.get(word)
        if cached is not None:
            return cached
        if self._grams is None:
            grams: dict[str, set[str]] = defaultdict(set)
            for w in itertools.chain(self._postings, self._written):
                if len(w) >= 3 and w.isalpha() and w not in _FUNCTION_WORDS:
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
            if len(word) <= SHORT_STEM and sorted(cand) != sorted(word) and not (
                len(cand) == len(word) + 1 and _skeleton_of(word, cand)
            ):
                continue
            if cand != word and damerau_within(word, cand, limit):
                stem = cand if cand in self._postings else self._written[cand]
                weight = TYPO_1 if damerau_within(word, cand, 1) else TYPO_2
                if stem != word and found.get(stem, 0.0) < weight:
                    found[stem] = weight
        best = dict(sorted(found.items(), key=lambda kv: (-kv[1], -len(self._postings[kv[0]])))
                    [:MAX_TYPO_CANDIDATES])
        if len(self._typo_cache) < 4096:
            self._typo_cache[word] = best
        return best

    def _common_neighbours(self, word: str, raw_len: int) -> dict[str, float]:
        """Near spellings of an indexed word that are far more common than it (``fille``: file).

        A typo can spell another real word; when that word is rare and its neighbour common, the
        neighbour was more likely meant, so it joins at a low weight.
        """
        mine = len(self._postings.get(word, ()))
        return {cand: w * TYPO_KNOWN for cand, w in self._typos(word, raw_len).items()
                if len(self._postings[cand]) >= TYPO_KNOWN_RATIO * max(1, mine)}

    def _terms(self, query: str) -> list[_Term]:
        """The query's terms: runs of words between required ones, each run folded and read.

        Stop words stay inside a run, where they may be part of a phrase (``drag and drop``) or
        of a name word (``to do``).
        """
        runs: list[tuple[list[str], bool]] = []
        leading: list[str] = []
        tokens = _gather_particles([strip_token(raw) for raw in query.split()])
        qualifiers = _qualifiers([t.lower() for t in tokens])
        for raw in tokens:
            required = raw.startswith("+")
            token = raw[1:] if required else raw
            low = token.lower()
            if len(low) < 2 or low in STOPWORDS:
                if runs and not runs[-1][1]:
                    runs[-1][0].append(low)
                elif not runs:
                    leading.append(low)
                continue
            words = split_words(token)
            if not runs and not required:
                words = leading + words
            if required or not runs or runs[-1][1]:
                runs.append((words, required))
            else:
                runs[-1][0].extend(words)
        terms: dict[str, _Term] = {}
        for words, required in runs:
            joined, parts = self._join_stopwords(self._mend_phrases(words))
            folded = _LEXICON.items(joined, query=True)
            items = self._split_unknown(self._join_compounds(folded)) + parts
            for item in items:
                term = self._term(item, required)
                if not item.soft and _describes(item.raw, qualifiers):
                    # A describing verb is not what the tool does: its verbs of like
                    # meaning (signed up: create) stay out.
                    term.weight = QUALIFIER_TERM
                    term.variants = {v: w for v, w in term.variants.items()
                                     if v == term.word or v not in _LEXICON.actions}
                old = terms.get(item.word)
                if old is None or old.weight < term.weight:
                    terms[item.word] = term
        for word in self._undone_words([t.lower() for t in tokens]):
            undone = terms.get(word)
            if undone is not None:
                undone.variants["un" + word] = 1.0
                undone.variants[word] = UNDONE_WORD
        return list(terms.values())

    def _undone_words(self, tokens: list[str]) -> list[str]:
        """Words a query undoes whose ``un`` form a tool names: the content word right after an
        undo cue (``stop following``, ``take back my like``, ``withdraw my approval``)."""
        found: list[str] = []
        for i, tok in enumerate(tokens):
            cue = tok in UNDO_CUES or (tok == "back" and i > 0 and tokens[i - 1] == "take")
            if not cue:
                continue
            following = next((t for t in tokens[i + 1 :]
                              if t not in STOPWORDS and t not in POSSESSIVES), None)
            if following is None:
                continue
            word = _LEXICON.normalize(following)
            if "un" + word in self._name_vocab:
                found.append(word)
        return found

    def _mend_phrases(self, words: list[str]) -> list[str]:
        """Misspelt words put right where the right spelling completes a phrase (``merge reqest``).

        Phrases fold before typos are looked at, so a typo inside one would split it.
        """
        out = list(words)
        for i, word in enumerate(words):
            if len(word) < 4 or not word.isalpha() or not self._unknown(_LEXICON.normalize(word)):
                continue
            for cand in self._typos(_LEXICON.normalize(word), len(word)):
                trial = [*out[:i], cand, *out[i + 1 :]]
                if _in_phrase(trial, i):
                    out = trial
                    break
        return out

    def _join_stopwords(self, words: list[str]) -> tuple[list[str], list[Item]]:
        """A stop word and its neighbour that together spell a name word (``on call``, ``to do``).

        A neighbour that is no stop word stays as a soft item, for tools that write the two apart.
        """
        out: list[str] = []
        parts: list[Item] = []
        i = 0
        while i < len(words):
            if i + 1 < len(words) and (words[i] in STOPWORDS or words[i + 1] in STOPWORDS):
                joined = words[i] + words[i + 1]
                if _LEXICON.normalize(joined) in self._name_vocab:
                    out.append(joined)
                    parts.extend(Item(_LEXICON.normalize(w), soft=True, raw=w)
                                 for w in words[i : i + 2] if w not in STOPWORDS)
                    i += 2
                    continue
            out.append(words[i])
            i += 1
        return out, parts

    def _join_compounds(self, items: list[Item]) -> list[Item]:
        """Adjacent words that together spell one name word (``data base``) become that word."""
        out: list[Item] = []
        i = 0
        while i < len(items):
            if i + 1 < len(items) and not items[i].soft and not items[i + 1].soft:
                joined = _LEXICON.normalize(items[i].raw + items[i + 1].raw)
                if (joined in self._name_vocab or joined in self._server_vocab) \
                        and joined not in (items[i].word, items[i + 1].word):
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
        """An unknown word read as known ones: ``reschedule`` (schedule, again) or ``overwrite``.

        A leading ``re`` before a known verb is a repeat of it, which is a kind of update; other
        words with no near spelling may be two known words glued together.
        """
        out: list[Item] = []
        for item in items:
            word = item.word
            if item.soft or len(word) < 5 or not word.isalpha() or not self._unknown(word):
                out.append(item)
                continue
            again = self._again(word)
            if again:
                out.extend((Item(again, raw=again), Item(_UPDATE)))
                continue
            parts: list[str] = []
            if not self._typos(word, len(item.raw)) and word not in shipped_neighbours():
                for cut in range(3, len(word) - 2):
                    left, right = _LEXICON.normalize(word[:cut]), _LEXICON.normalize(word[cut:])
                    if not self._unknown(left) and not self._unknown(right):
                        parts = [left, right]
                        break
            out.extend([Item(p, raw=p) for p in parts] or [item])
        return out

    def _again(self, word: str) -> str:
        """The verb an unknown ``re`` word repeats (``redeploy``: deploy), or ``""``."""
        if not word.startswith("re") or len(word) < 6:
            return ""
        rest = _LEXICON.normalize(word[2:])
        return rest if rest in _LEXICON.actions else ""

    def _term(self, item: Item, required: bool) -> _Term:
        """A query item with its variants: near spellings, then words related to any of them."""
        variants: dict[str, float] = {item.word: 1.0}
        sources = [(item.word, 1.0)]
        spellings: set[str] = set()
        if self._unknown(item.word):
            near = self._near(item)
            if item.word in shipped_neighbours():
                # An everyday English word the tools do not use is seldom a typo of one.
                near = {w: vw * REAL_WORD_TYPO for w, vw in near.items()}
            spellings.update(w for w, vw in near.items() if vw >= TYPO_1)
            for cand, w in self._abbreviations(item.word).items():
                spellings.add(cand)
                if near.get(cand, 0.0) < w:
                    near[cand] = w
            initials = "#" + item.raw
            if 2 <= len(item.raw) <= 3 and item.raw.isalpha() and initials in self._postings:
                near[initials] = ABBREV_PREFIX
            variants.update(near)
            sources.extend(near.items())
        elif len(item.raw) >= TYPO_KNOWN_LEN and not item.soft:
            sources.extend(self._common_neighbours(item.word, len(item.raw)).items())
            variants.update(sources[1:])
        if not item.soft and not _LEXICON.known(item.word):
            for server in self._servers_shortened_to(item.raw):
                variants[server] = SERVER_SHORT
                spellings.add(server)
        for source, base in sources:
            for rel, w in _LEXICON.related.get(source, {}).items():
                weight = base * w * RELATED_SCALE
                if variants.get(rel, 0.0) < weight:
                    variants[rel] = weight
        loose = self._add_neighbours(item, variants) if not item.soft else frozenset()
        # A soft item with no raw words is a thesaurus hint (see ``Item``).
        weight = 1.0 if not item.soft else SOFT_TERM if item.raw else HINT_TERM
        return _Term(item.word, item.raw, variants, weight, required,
                     frozenset(spellings), loose)

    @staticmethod
    def _add_neighbours(item: Item, variants: dict[str, float]) -> frozenset[str]:
        """Words near a content word in everyday English (``raining``: weather), at a weight
        below any listed relation; returns the words only they added.

        Verbs are left to the action families: near verbs are as often opposites (``enable``,
        ``disable``) as synonyms.
        """
        if item.word in _LEXICON.actions:
            return frozenset()
        added: set[str] = set()
        for near, sim in shipped_neighbours().of(item.word):
            if sim < NEIGHBOUR_MIN:
                break
            target = _LEXICON.normalize_stem(near)
            weight = NEIGHBOUR_SCALE * sim
            if target not in _LEXICON.actions and variants.get(target, 0.0) < weight:
                if target not in variants:
                    added.add(target)
                variants[target] = weight
        return frozenset(added)

    def _servers_shortened_to(self, raw: str) -> list[str]:
        """Server words ``raw`` is the start of, short of a letter or two (``mongo``: mongodb)."""
        if len(raw) < GLUED_MIN or not raw.isalpha():
            return []
        return [w for w in self._server_vocab
                if w.startswith(raw) and 0 < len(w) - len(raw) <= SERVER_SHORT_TAIL]

    def _abbreviations(self, word: str) -> dict[str, float]:
        """Name or server words an unknown short word may abbreviate (``vid``, ``mgmt``, ``yt``).

        The abbreviation keeps the word's first letter and then some of its letters in order; a
        prefix is likelier than a skeleton, and a short skeleton drops the vowels (``pwd``, not
        ``pop``). Two letters abbreviate only a server name (``qb`` for quickbooks), where they
        are an initial and one more letter further in.
        """
        if not word.isalpha() or not 2 <= len(word) <= ABBREV_MAX_LEN:
            return {}
        cached = self._abbrev_cache.get(word)
        if cached is not None:
            return cached
        if self._initials is None:
            initials: dict[str, list[str]] = defaultdict(list)
            for w in self._name_vocab | self._server_vocab:
                if w.isalpha():
                    initials[w[0]].append(w)
            self._initials = initials
        found: dict[str, float] = {}
        for cand in self._initials.get(word[0], ()):
            if len(cand) < len(word) + 2 or (len(word) == 2 and cand not in self._server_vocab):
                continue
            if len(word) > 2 and cand.startswith(word):
                found[cand] = ABBREV_PREFIX
            elif _skeleton_of(word, cand) and (len(word) > 3 or not set(word[1:]) & _VOWELS) \
                    and (len(word) > 2 or cand[1] != word[1]):
                found[cand] = ABBREV_SKELETON
        best = dict(sorted(found.items(), key=lambda kv: (-kv[1], len(kv[0]), kv[0]))
                    [:MAX_ABBREV_CANDIDATES])
        if len(self._abbrev_cache) < 4096:
            self._abbrev_cache[word] = best
        return best

    def search(self, query: str, limit: int = 5) -> SearchOutcome:
        """The best ``limit`` tools for ``query``, best first, and how many matched at all."""
        query, unwanted = _drop_negated(query)
        query, counted = _quantified(_INITIALS.sub(r"\1\2", query))
        # A tool named for what the query says it does not want (``without deleting it``).
        unwanted_words = {_LEXICON.normalize(w) for w in unwanted}
        terms = self._terms(query)
        if not terms:
            return SearchOutcome([], 0)
        # The words asked for many of: plurals (a server's name is a name, not a plural:
        # ``canvas``, ``jenkins``) and words after a quantifier (``every project``).
        counted_many = {t.word for t in terms if counted.intersection(t.raw.lower().split())
                        or (_plural(t) and t.word not in self._server_vocab)}
        verbs = self._query_actions(query)
        listed = self._listed_noun(terms)
        many = listed is not None or any(
            t.word in counted_many and t.weight == 1.0 for t in terms)
        if verbs is not None and verbs & LOOK_FAMILIES and any(
            t.word in counted_many and t.weight == 1.0 and t.raw not in ASPECT_PLURALS
            for t in terms
        ):
            # Showing or getting things is listing them.
            verbs = verbs | MANY_FAMILIES
            for term in terms:
                if _LEXICON.actions.get(term.word, frozenset()) & LOOK_FAMILIES:
                    term.variants[_LIST] = max(term.variants.get(_LIST, 0.0), LOOK_MANY)
        claims, matched, total = self._claims(terms)
        required = [t for t in terms if t.required]
        named = {w for t in terms if t.weight == 1.0 for w in (t.word, *t.spellings)}
        base: list[tuple[float, int, float]] = []
        for doc, mine in claims.items():
            info = self._docs[doc]
            if required and not all(self._has_in_name(info, t) for t in required):
                continue
            score = covered = 0.0
            for shared in mine.values():
                if len(shared) > 1:
                    shared.sort(reverse=True)
                    score += SHARED_WORD * sum(v[0] for v in shared[1:])
                score += shared[0][0]
                covered += shared[0][1]
            score *= (matched[doc] / total) ** COORD
            if info.external:
                score *= EXTERNAL_BOOST
            hit = info.server_words & named
            if hit:
                score *= 1.0 + (SERVER_BOOST if hit - self._common_servers else COMMON_SERVER_BOOST)
            base.append((score, doc, min(1.0, covered / info.core_size)))
        if not base or limit <= 0:
            return SearchOutcome([], len(base))
        # The remaining factors lie within [low, high]; a tool whose best case is below the
        # limit-th worst case cannot reach the top, so it is counted but not scored further.
        low = (1.0 - NUMBER_CLASH) * (1.0 - ACTION_CONFLICT) * (1.0 - SIBLING_CONFLICT) \
            * (1.0 - UNWANTED if unwanted_words else 1.0)
        high = (1.0 + COVERAGE_BONUS) * (1.0 + NUMBER_AGREE) * (1.0 + IMPLIED_READ + IMPLIED_MANY) \
            * (1.0 + NAME_FRAGMENT) * (1.0 + HEAD_NOUN)
        cut = heapq.nlargest(limit, (b[0] for b in base))[-1] * low / high
        numbered = [(t.word, t.word in counted_many or t.word == listed) for t in terms if t.raw]
        head, head_weight = self._head_words(query, terms)
        fragments = _fragments(query)
        ranked: list[tuple[float, str]] = []
        yielding = self._yielding_siblings(base, verbs)
        for score, doc, coverage in base:
            if score < cut:
                continue
            info = self._docs[doc]
            final = score * (1.0 + COVERAGE_BONUS * coverage)
            if fragments and any(f in info.compact for f in fragments):
                final *= 1.0 + NAME_FRAGMENT
            if unwanted_words & info.name_words:
                final *= 1.0 - UNWANTED
            if head and info.head in head:
                final *= 1.0 + HEAD_NOUN * head_weight
            agree = sum((1 if plural == info.number[word] else -1)
                        for word, plural in numbered if word in info.number)
            if agree:
                final *= 1.0 + (NUMBER_AGREE if agree > 0 else -NUMBER_CLASH)
            if verbs is None:
                if not info.action or info.action & READ_FAMILIES:
                    final *= 1.0 + IMPLIED_READ + (IMPLIED_MANY if many and info.action &
                                                   MANY_FAMILIES else 0.0)
            elif info.actions and not info.actions & verbs:
                final *= 1.0 - ACTION_CONFLICT
            elif many and info.action & MANY_FAMILIES and verbs & MANY_FAMILIES:
                final *= 1.0 + IMPLIED_MANY
            if doc in yielding:
                final *= 1.0 - SIBLING_CONFLICT
            ranked.append((final, info.name))
        best = heapq.nsmallest(limit, ranked, key=lambda p: (-round(p[0], 9), p[1]))
        top = [SearchHit(name, round(score, 4)) for score, name in best]
        return SearchOutcome(top, len(base))

    def _yielding_siblings(self, base: list[tuple[float, int, float]],
                           verbs: frozenset[str] | None) -> set[int]:
        """The matched tools that yield to a sibling: tools of one server about one thing
        differ by what they do to it, and where some do what the query asks, the others are
        further from it. Judged over every matched tool, so that pruning cannot change it."""
        if not verbs:
            return set()
        doing: set[int] = set()
        others: list[tuple[int, int]] = []
        for _, doc, _ in base:
            info = self._docs[doc]
            if info.siblings is None:
                continue
            if info.actions & verbs:
                doing.add(info.siblings)
            else:
                others.append((doc, info.siblings))
        return {doc for doc, group in others if group in doing}

    def _head_words(self, query: str, terms: list[_Term]) -> tuple[frozenset[str], float]:
        """The words that name the query's head noun, and how surely it is the head.

        The head is the last noun before the first preposition, or ``to`` before a noun, as in
        names (``messages in a chat``: messages, not chat; ``add task to project``: task),
        surely so; without one, the last noun, less surely (``asana add a task``: task). A
        folded phrase is one noun (``pull requests in the repo``). Words of the same meaning
        (not loose relatives) name it too.
        """
        tokens = _query_words(query)
        cut = next((i for i, t in enumerate(tokens) if t in PREPOSITIONS or (
            t == "to" and i + 1 < len(tokens)
            and _LEXICON.normalize(tokens[i + 1]) not in _LEXICON.actions)), None)
        sure = 1.0 if cut else HEAD_UNMARKED
        for tok in reversed(tokens[:cut or len(tokens)]):
            if len(tok) < 2 or tok in STOPWORDS:
                continue
            term = next((t for t in terms if t.weight == 1.0 and " " in t.raw
                         and tok in t.raw.lower().split()), None)
            if term is None:
                word = _LEXICON.normalize(tok)
                if (word in _LEXICON.actions and not _is_nominal(tok, word)) \
                        or word in self._server_vocab:
                    continue
                term = next((t for t in terms if t.word == word and t.weight == 1.0), None)
                if term is None:
                    break
            same = {w for w, vw in term.variants.items()
                    if vw >= HEAD_VARIANT and w not in term.loose}
            return frozenset({term.word, *term.spellings, *same}), sure
        return frozenset(), 0.0

    @staticmethod
    def _listed_noun(terms: list[_Term]) -> str | None:
        """The noun before a closing ``list`` or ``history`` (``ticket list``, ``payroll
        history``), which asks for many of that noun, or None."""
        full = [t for t in terms if t.weight == 1.0 and t.raw]
        if len(full) >= 2 and full[-1].raw in LISTING_NOUNS:
            return full[-2].word
        return None

    def _claims(self, terms: list[_Term]) -> tuple[
            dict[int, dict[str, list[tuple[float, float]]]], dict[int, float], float]:
        """Per tool, each index word's claims by query terms as (score, name coverage); per
        tool, how much of the query it matches; and how much of the query matches anything.

        A term is as rare as its best-matching form: a word with many weak relatives is not
        taken for a common one. A term no tool matches says nothing about any tool.
        """
        n = len(self._docs)
        claims: dict[int, dict[str, list[tuple[float, float]]]] = defaultdict(dict)
        matched: dict[int, float] = defaultdict(float)
        total = 0.0
        full = sum(1 for t in terms if t.weight == 1.0)
        boost = 1.0 + LONG_DESC * max(0, full - LONG_FROM)
        for term in terms:
            best: dict[int, tuple[float, float, float, str]] = {}
            for variant, vw in term.variants.items():
                for doc, fw, core in self._postings.get(variant, ()):
                    s = fw * vw * (boost if fw <= DESC_HEAD else 1.0)
                    cur = best.get(doc)
                    if cur is None or s > cur[0]:
                        best[doc] = (s, vw, vw if core else 0.0, variant)
            if not best:
                continue
            total += term.weight
            strongest = max(v[1] for v in best.values())
            df = sum(1 for v in best.values() if v[1] >= strongest)
            idf = math.log(1.0 + n / df) * term.weight
            for doc, (s, _, covered, variant) in best.items():
                claims[doc].setdefault(variant, []).append((s * idf, covered * term.weight))
                matched[doc] += term.weight * min(1.0, s / COORD_FULL)
        return claims, matched, total

    def _query_actions(self, query: str) -> frozenset[str] | None:
        """The action families of the query's verb, or None when it names no verb.

        The verb is the first word with a family, unless written as a plural (``lists on the
        board``), a participle (``cards assigned to me``, ``code scanning alerts``) or an
        adjective before a plural (``open merge requests``). A ``re`` word also updates
        (``reschedule``). A first word of no family followed by a determiner or preposition is a
        noun used as a verb (``comment on an issue``, ``page the on-call``), which makes or sends
        that thing. A question (``what is building now``, ``did the build pass``) asks to look,
        whatever its verb.
        """
        tokens = _gather_particles(_query_words(query))
        if _is_question(tokens):
            return None
        content = 0
        for i, tok in enumerate(tokens):
            if len(tok) < 2 or tok in STOPWORDS:
                continue
            phrase = _LEXICON.phrase_at(tokens, i, query=True)
            word = phrase[0] if phrase is not None and phrase[0] in _LEXICON.actions \
                else _LEXICON.normalize(tok)
            families = _LEXICON.actions.get(word)
            if families is None and word in self._server_vocab:
                continue
            content += 1
            if families is None and self._unknown(word):
                again = self._again(word)
                if again:
                    return _LEXICON.actions[again] | {"update"}
                # A misspelt verb (``apend``, ``aprove``) is still the verb.
                near = self._typos(word, len(tok)) if word not in shipped_neighbours() else {}
                verb = next((w for w in sorted(near, key=lambda w: -near[w])
                             if w in _LEXICON.actions), None)
                if verb is not None and near[verb] >= TYPO_1:
                    families = _LEXICON.actions[verb]
                    word = verb
            if families is None:
                if content == 1 and i + 1 < len(tokens) and tokens[i + 1] in NOUN_VERB_CUES \
                        and not _is_plural(tok, word) and not tok.endswith("ed"):
                    # A word whose synonyms are verbs is one too (``end``: stop, cancel).
                    like = [_LEXICON.actions[w] for w, vw in _LEXICON.related.get(word, {}).items()
                            if vw >= VERB_SYNONYM and w in _LEXICON.actions]
                    return frozenset().union(*like) if like else NOUN_VERB_FAMILIES
                continue
            if _is_plural(tok, word) or tok.endswith(("ed", "ing")) or tok in _LEXICON.past_forms \
                    or _is_nominal(tok, word):
                continue
            if word in ADJECTIVE_VERBS and any(
                _is_plural(t, _LEXICON.normalize(t))
                for t in itertools.takewhile(lambda t: t not in STOPWORDS, tokens[i + 1 :])
            ):
                return None
            return families
        return None

    @staticmethod
    def _has_in_name(info: _DocInfo, term: _Term) -> bool:
        if term.raw and term.raw in info.lower_name:
            return True
        return any(v in info.name_words for v in term.variants if v not in term.loose)

"""The compiled vocabulary: word normalisation, phrase folding and related-word lookup."""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from typing import NamedTuple

from ._tokens import STOPWORDS, split_words, stem
from ._vocab import (
    ACTION_FAMILIES,
    ARTICLES,
    EQUIVALENTS,
    EXPANSIONS,
    IRREGULAR_PLURALS,
    IRREGULAR_VERBS,
    OTHER_ACTIONS,
    POINTERS,
    RELATED,
    SEPARABLE,
    SEPARABLE_LEADS,
)


class Item(NamedTuple):
    """One normalised word of a text and ``raw``, the words it was read from.

    ``soft`` marks a part of a folded phrase or compound, or, with an empty ``raw``, the word a
    loose thesaurus phrase hints (nothing of the text spells it); query terms weigh the two
    apart.
    """

    word: str
    soft: bool = False
    raw: str = ""


_CACHE_LIMIT = 1 << 17
HOP_SCALE, HOP_MIN = 0.8, 0.45
FAMILY_LINK = 0.5
# How strongly a ``~`` alternative of the thesaurus points at its target.
THESAURUS_LINK = 0.6
# How strongly a one-word ``=`` alternative and its target stand for each other.
THESAURUS_SAME = 0.9
_THESAURUS = "thesaurus.txt"
_SEPARABLE_STEMS = frozenset(stem(w) for w in SEPARABLE)
_SEPARABLE_LEAD_STEMS = frozenset(stem(w) for w in SEPARABLE_LEADS)


@dataclass
class Lexicon:
    """Canonical stems, phrases, related words and verb families, built once from ``_vocab``."""

    canon: dict[str, str] = field(default_factory=dict)
    phrases: dict[tuple[str, ...], str] = field(default_factory=dict)
    expansions: dict[str, tuple[str, ...]] = field(default_factory=dict)
    related: dict[str, dict[str, float]] = field(default_factory=dict)
    targets: set[str] = field(default_factory=set)
    phrase_starts: set[str] = field(default_factory=set)
    # The thesaurus's phrases fold in queries only: in a tool name, ``uploaded file`` is two
    # words of the name, not one related word.
    query_phrases: dict[tuple[str, ...], str] = field(default_factory=dict)
    query_phrase_starts: set[str] = field(default_factory=set)
    # Looser thesaurus phrases do not fold: the words stay and the phrase adds a word it hints.
    hint_phrases: dict[tuple[str, ...], str] = field(default_factory=dict)
    hint_starts: set[str] = field(default_factory=set)
    actions: dict[str, frozenset[str]] = field(default_factory=dict)
    # Per verb stem, the stem runs that may finish its phrases after an object, longest first
    # (``take … offline``, ``keep … at top``).
    particle_verbs: dict[str, list[tuple[str, ...]]] = field(default_factory=dict)
    # Irregular forms as written: past forms of verbs, plurals of nouns (``indices``).
    past_forms: set[str] = field(default_factory=set)
    plural_forms: set[str] = field(default_factory=set)
    # Each irregular form's word, for that spelling only: ``leaves`` is leaf, ``leave`` is not.
    written: dict[str, str] = field(default_factory=dict)
    _cache: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    longest_phrase: int = 1
    # Thesaurus alternatives that change nothing: the vocabulary or an earlier line has them.
    unused: list[str] = field(default_factory=list)

    @classmethod
    def build(cls) -> Lexicon:
        """The lexicon of the shipped vocabulary."""
        lex = cls()
        lex._fold_forms(IRREGULAR_VERBS, lex.past_forms)
        lex._fold_forms(IRREGULAR_PLURALS, lex.plural_forms)
        for line in EQUIVALENTS:
            head, *aliases = line.split()
            target = lex._entry(head, None)
            for alias in aliases:
                lex._entry(alias, target)
        related = lex._read_thesaurus(_thesaurus_lines())
        for word, meaning in EXPANSIONS.items():
            lex.expansions[stem(word)] = tuple(lex.normalize(w) for w in meaning.split())
        for weight, line in RELATED:
            words = [lex.normalize_entry(w) for w in line.split()]
            for a in words:
                links = lex.related.setdefault(a, {})
                for b in words:
                    if b != a and links.get(b, 0.0) < weight:
                        links[b] = weight
        lex._add_hops()
        for weight, source, targets in POINTERS:
            links = lex.related.setdefault(lex.normalize_entry(source), {})
            for target in targets.split():
                word = lex.normalize_entry(target)
                links[word] = max(links.get(word, 0.0), weight)
        for source, target, weight in related:
            links = lex.related.setdefault(source, {})
            links[target] = max(links.get(target, 0.0), weight)
        # Verbs of one family relate at least weakly, and each verb knows its families.
        for family, line in ACTION_FAMILIES.items():
            words = [lex.normalize_entry(w) for w in line.split()]
            for a in words:
                lex.actions[a] = lex.actions.get(a, frozenset()) | {family}
                links = lex.related.setdefault(a, {})
                for b in words:
                    if b != a and links.get(b, 0.0) < FAMILY_LINK:
                        links[b] = FAMILY_LINK
        for w in OTHER_ACTIONS.split():
            word = lex.normalize_entry(w)
            lex.actions.setdefault(word, frozenset((word,)))
        return lex

    def _add_hops(self) -> None:
        """Words two links apart relate by the product of the links, when that stays strong.

        ``open`` reaches ``read`` through ``get``; a weak second link adds nothing.
        """
        direct = {a: dict(links) for a, links in self.related.items()}
        for a, links in direct.items():
            mine = self.related[a]
            for b, w1 in links.items():
                for c, w2 in direct.get(b, {}).items():
                    w = w1 * w2 * HOP_SCALE
                    if c != a and w >= HOP_MIN and mine.get(c, 0.0) < w:
                        mine[c] = w

    def _fold_forms(self, lines: tuple[str, ...], forms: set[str]) -> None:
        """Fold each line's irregular forms (its later words) into its first word, and note
        them in ``forms``. Only the form as written folds: its stem may be another word's
        (``leaves`` and ``leave``)."""
        for line in lines:
            head, *written = line.split()
            target = self._entry(head, None)
            for form in written:
                self.written[form] = target
                forms.add(form)

    def _read_thesaurus(self, lines: list[str]) -> list[tuple[str, str, float]]:
        """Register the thesaurus's phrases and return its word links as (from, to, weight).

        An ``=`` phrase folds into its target in queries; an ``=`` word is linked both ways just
        below a match of the word itself, so a tool named with either word still ranks first
        for it (``list_vendors`` for "vendors", ``list_merchants`` for "merchants"). A ``~``
        word points at its target; a ``~`` phrase keeps its words and adds its targets, one per
        line that names it. The shipped vocabulary wins: an alternative it already spells is
        left as it is (and noted in ``unused``). A phrase's end may stand after the verb's
        object (``set the alarm off`` is ``set off``: trigger), see :meth:`_note_particles`.
        """
        links: list[tuple[str, str, float]] = []
        spoken = {stem(w) for line in _vocabulary_lines() for w in line.replace("_", " ").split()}
        for line in lines:
            kind, _, rest = line.partition(" ")
            target_word, _, alts = rest.partition("|")
            if kind not in ("=", "~") or not alts:
                continue
            target = self.normalize_entry(target_word.strip())
            for alt in (a.strip() for a in alts.split(",")):
                entry = "_".join(alt.split())
                parts = tuple(stem(w) for w in alt.split())
                hinted = self.hint_phrases.get(parts, "").split()
                if kind == "~" and hinted and target not in hinted:
                    # A loose phrase may hint several words (``signed up``: invitee, registrant).
                    self.hint_phrases[parts] = " ".join((*hinted, target))
                    continue
                if not parts or (parts in self.phrases or parts in self.query_phrases
                                 or parts in self.hint_phrases if len(parts) > 1 else (
                        parts[0] in self.canon or parts[0] in self.targets
                        or parts[0] in spoken)):
                    if kind == "~" and len(parts) == 1:
                        links.append((self.normalize_entry(entry), target, THESAURUS_LINK))
                    else:
                        self.unused.append(f"{kind} {target_word.strip()} | {alt}")
                    continue
                if len(parts) == 1:
                    word = self._entry(entry, None)
                    if kind == "=":
                        links += [(word, target, THESAURUS_SAME), (target, word, THESAURUS_SAME)]
                    else:
                        links.append((word, target, THESAURUS_LINK))
                elif kind == "=":
                    self._entry(entry, target, query_only=True)
                else:
                    self.hint_phrases.setdefault(parts, target)
                    self.hint_starts.add(parts[0])
                    self._note_particles(parts)
                    self.longest_phrase = max(self.longest_phrase, len(parts))
        return links

    def _note_particles(self, parts: tuple[str, ...]) -> None:
        """Note a phrase whose end may stand after the verb's object: one particle, or two
        words led by a particle or a preposition (``turn back on``, ``stick to top``)."""
        rest = parts[1:]
        if (len(rest) == 1 and rest[0] in _SEPARABLE_STEMS) or (
                len(rest) == 2 and rest[0] in _SEPARABLE_LEAD_STEMS
                and (rest[0] in _SEPARABLE_STEMS or rest[1] not in STOPWORDS)):
            known = self.particle_verbs.setdefault(parts[0], [])
            if rest not in known:
                known.append(rest)
                known.sort(key=len, reverse=True)

    def _entry(self, entry: str, target: str | None, *, query_only: bool = False) -> str:
        parts = tuple(stem(w) for w in entry.split("_"))
        if target is None:
            target = parts[0] if len(parts) == 1 else "".join(parts)
        self.targets.add(target)
        if len(parts) == 1:
            if parts[0] != target:
                self.canon[parts[0]] = target
        else:
            if query_only:
                self.query_phrases[parts] = target
                self.query_phrase_starts.add(parts[0])
            else:
                self.phrases[parts] = target
                self.phrase_starts.add(parts[0])
            self._note_particles(parts)
            self.longest_phrase = max(self.longest_phrase, len(parts))
        return target

    def normalize(self, word: str) -> str:
        """The canonical stem of one lowercase word."""
        return self.written.get(word) or self._canonical(stem(word))

    def _canonical(self, s: str) -> str:
        """A stem's canonical form; a 3-letter plural of a known 2-letter word folds (``prs``)."""
        if len(s) == 3 and s[2] == "s" and s[1] != "s" and s not in self.canon:
            short = self.canon.get(s[:2], s[:2])
            if short in self.related or short in self.targets:
                return short
        return self.canon.get(s, s)

    def normalize_stem(self, stem_: str) -> str:
        """The canonical form of a word already stemmed."""
        return self._canonical(stem_)

    def normalize_entry(self, entry: str) -> str:
        """The canonical stem of a vocabulary entry, which may be a ``_``-joined phrase."""
        parts = tuple(stem(w) for w in entry.split("_"))
        if len(parts) > 1:
            return self.phrases.get(parts, "".join(parts))
        return self.canon.get(parts[0], parts[0])

    def known(self, word: str) -> bool:
        """Whether the vocabulary says anything about this canonical stem."""
        return word in self.related or word in self.expansions

    def _word(self, word: str) -> tuple[str, tuple[str, ...]]:
        """(stem, canonical words) of one lowercase word, memoised."""
        hit = self._cache.get(word)
        if hit is None:
            s = self.written.get(word) or stem(word)
            c = self._canonical(s)
            hit = (s, self.expansions.get(c, (c,)))
            if len(self._cache) > _CACHE_LIMIT:
                self._cache.clear()
            self._cache[word] = hit
        return hit

    def stem_of(self, word: str) -> str:
        """The stem of one lowercase word, memoised."""
        return self._word(word)[0]

    def phrase_at(self, words: list[str], i: int, *, query: bool = False
                  ) -> tuple[str, int] | None:
        """The longest vocabulary phrase starting at ``words[i]``, as (target, length); in a
        ``query``, the thesaurus's phrases too."""
        return self._longest(words, i, self.phrases, self.query_phrases if query else {})

    def hint_at(self, words: list[str], i: int) -> tuple[str, int] | None:
        """The longest loose thesaurus phrase starting at ``words[i]``, as (target, length)."""
        return self._longest(words, i, self.hint_phrases)

    def _longest(self, words: list[str], i: int, *tables: dict[tuple[str, ...], str]
                 ) -> tuple[str, int] | None:
        """The longest run of stems at ``words[i]`` that a table holds, as (its target, length);
        at one length, earlier tables win. A phrase of three words or more also matches with
        an article inside it (``put myself as the owner``: put myself as owner)."""
        run = words[i : i + self.longest_phrase + 1]
        stems = [self._word(w)[0] for w in run]
        for size in range(len(run), 1, -1):
            key = tuple(stems[:size])
            bare = key
            if run[size - 1] not in ARTICLES and not ARTICLES.isdisjoint(run[:size]):
                bare = tuple(s for s, w in zip(stems[:size], run, strict=False)
                             if w not in ARTICLES)
            for table in tables:
                target = table.get(key) if size <= self.longest_phrase else None
                if target is None and 2 < len(bare) < size:
                    target = table.get(bare)
                if target is not None:
                    return target, size
        return None

    def items(self, words: list[str], *, keep_stopwords: bool = False,
              query: bool = False) -> list[Item]:
        """Normalised items of a word sequence: phrases folded, expansions spread, stopwords out.

        A folded phrase keeps its non-stopword parts as soft items so that a query naming only
        part of it still matches a little. Tool names keep their stopwords (``get_me``).
        """
        out: list[Item] = []
        i = 0
        while i < len(words):
            w = words[i]
            s, canon = self._word(w)
            found = (self.phrase_at(words, i, query=query)
                     if s in self.phrase_starts or (query and s in self.query_phrase_starts)
                     else None)
            if found is not None:
                target, size = found
                out.append(Item(target, soft=False, raw=" ".join(words[i : i + size])))
                out.extend(
                    Item(self._word(part)[1][0], soft=True, raw=part)
                    for part in words[i : i + size]
                    if part not in STOPWORDS and len(part) > 1
                )
                i += size
                continue
            i += 1
            if query and s in self.hint_starts:
                out.extend(self._hints(words, i - 1))
            if len(w) < 2 or (w in STOPWORDS and not keep_stopwords):
                continue
            out.extend(Item(c, soft=False, raw=w) for c in canon)
        return out

    def _hints(self, words: list[str], i: int) -> list[Item]:
        """The word a loose thesaurus phrase at ``words[i]`` hints (``on my plate``: task), as a
        soft item; the phrase's own words stay."""
        found = self.hint_at(words, i)
        return [Item(t, soft=True, raw="") for t in found[0].split()] if found is not None else []

    def text_items(self, text: str, *, keep_stopwords: bool = False) -> list[Item]:
        """Normalised items of free text or an identifier."""
        return self.items(split_words(text), keep_stopwords=keep_stopwords)


def _thesaurus_lines() -> list[str]:
    """The shipped thesaurus's entry lines (none if the data file is missing)."""
    try:
        text = resources.files(__package__).joinpath(_THESAURUS).read_text(encoding="utf-8")
    except OSError:
        return []
    return [line for line in text.splitlines() if line[:2] in ("= ", "~ ")]


def _vocabulary_lines() -> list[str]:
    """Every word list of ``_vocab`` that relates or classes words, as lines."""
    return [*(line for _, line in RELATED), *(f"{s} {t}" for _, s, t in POINTERS),
            *ACTION_FAMILIES.values(), OTHER_ACTIONS, *EXPANSIONS, *EXPANSIONS.values()]

"""Text to terms: splitting identifiers and sentences into words, stemming, and the small
table of abbreviations and spelling variants that tool names and queries use.

Names, descriptions and queries meet only through these functions, so what matters is that
``create``, ``creates``, ``created`` and ``creating`` land on one term, not linguistic
exactness.
"""

from __future__ import annotations

import re
from functools import lru_cache

# Words that say nothing about which tool is meant. Kept short: a tool may well be about
# "all" or "new" things.
STOPWORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "could", "did", "do", "does", "for",
    "from", "how", "i", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "our",
    "please", "should", "some", "that", "the", "their", "them", "these", "this", "those", "to",
    "us", "via", "want", "was", "we", "were", "what", "which", "will", "with", "would", "you",
    "your", "shall", "may", "might", "must",
))

# Each entry, up to a comma: the full word first, then the short forms and spelling variants
# that mean it. A short form is only ever replaced by its full word's term, so an entry never
# links two different ideas; words of several parts are joined by ``_``.
_ABBREVIATION_ENTRIES = """
pull_request pr mr merge_request, repository repo, directory dir folder, database db, message msg,
configuration config cfg conf, environment env, variable var, information info, image img,
document doc, documentation docs, application app, authentication auth, credential cred creds,
kubernetes k8s kube, javascript js, typescript ts, postgres postgresql pg, python py, timezone tz,
organization org organisation, number num, string str, parameter param, argument arg,
attribute attr, description desc, administrator admin, statistic stats stat, specification spec,
temporary temp tmp, maximum max, minimum min, reference ref, dependency dep deps, package pkg,
library lib, function func fn, request req, response resp, email e_mail, button btn, navigate nav,
delete del rm, move mv, copy cp, list ls, evaluate eval, execute exec, password passwd pwd,
template tpl tmpl, ticket tkt, filesystem fs, yaml yml, coordinate coord coords, latitude lat,
longitude lng lon, address addr, location loc, quantity qty, amount amt, text txt, account acct,
project proj, service svc, namespace ns, property prop props, object obj, record rec, value val,
column col, table tbl, index idx, calendar cal, dashboard dash, schedule sched,
permission perm perms, notification notif, transaction txn, user usr, certificate cert,
version ver, revision rev, error err, connection conn, session sess, language lang, position pos,
sequence seq, management mgmt, manager mgr, production prod, development dev, generate gen,
calculate calc, synchronize sync synchronise, identifier id, video vid, color colour,
favorite favourite, analyze analyse, summarize summarise, organize organise, authorize authorise,
optimize optimise, customize customise, initialize initialise, normalize normalise,
prioritize prioritise, categorize categorise, visualize visualise, behavior behaviour,
license licence, center centre, catalog catalogue, canceled cancelled, labeled labelled,
direct_message dm, subscription sub subs, destination dest, collection coll, command cmd,
virtual_machine vm, process proc, two_factor 2fa mfa, one_time_password otp
"""
ABBREVIATIONS = tuple(entry.strip() for entry in _ABBREVIATION_ENTRIES.split(","))

# The verbs tool APIs name their operations with, each line one operation: a query's verb
# also reaches its operation's other verbs (a request to "remove" a thing finds "delete").
ACTION_VERBS = (
    "create add new make insert",
    "get fetch read retrieve show view display lookup detail info",
    "list enumerate browse show view display",
    "update edit modify change set rename patch",
    "delete remove drop erase destroy discard",
    "search find query lookup grep",
    "run execute trigger invoke launch",
    "start begin resume",
    "stop end halt cancel abort terminate kill",
    "send post publish",
    "upload push put",
    "download pull",
    "close archive resolve",
    "copy duplicate clone",
    "move transfer",
    "write save store",
    "restart reboot reload",
    "reply respond answer",
    "tag label",
)

# Shorter identifier-shaped tokens are as often ordinary hyphenated words (``e-mail``).
FRAGMENT_MIN = 6

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z]{2})")
_WORD = re.compile(r"[a-z0-9]+")
_VOWELS = frozenset("aeiouy")
_NO_UNDOUBLE = frozenset("lsz")


def split_words(text: str) -> list[str]:
    """Lowercase words of an identifier or a sentence: camelCase, snake_case, kebab-case,
    dots and spaces all separate words."""
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
    """A light stem: a plural, ``-ing``, ``-ed``, ``-tion``, ``-ment`` and a final ``e`` folded
    away, so every form of a word lands on one term. Digits and words of three letters or fewer
    are kept whole, as they are mostly names and abbreviations (``k8s``, ``api``, ``sql``)."""
    if len(word) <= 3 or not word.isalpha():
        return word
    word = _strip_derivation(_strip_plural(word))
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def abbreviation_table() -> dict[str, tuple[str, ...]]:
    """Each short form's or variant's stem mapped to the stems of its full word (several for a
    word of parts: ``pr`` -> ``pull``, ``request``)."""
    table: dict[str, tuple[str, ...]] = {}
    for line in ABBREVIATIONS:
        full, *shorts = line.split()
        parts = tuple(stem(p) for p in full.split("_"))
        for short in shorts:
            # Short forms take a plain plural ``s`` (``prs``, ``txns``), which stemming
            # leaves on words this short.
            for form in (short, short + "s"):
                table.setdefault("".join(stem(p) for p in form.split("_")), parts)
    return table


def action_table() -> dict[str, frozenset[str]]:
    """Each action verb's stem mapped to the stems of the other verbs of its operations."""
    table: dict[str, set[str]] = {}
    for line in ACTION_VERBS:
        group = {stem(w) for w in line.split()}
        for verb in group:
            table.setdefault(verb, set()).update(group - {verb})
    return {verb: frozenset(others) for verb, others in table.items()}


def operation_table() -> dict[str, frozenset[int]]:
    """Each action verb's stem mapped to the operations (lines of :data:`ACTION_VERBS`) it
    names."""
    table: dict[str, set[int]] = {}
    for number, line in enumerate(ACTION_VERBS):
        for verb in line.split():
            table.setdefault(stem(verb), set()).add(number)
    return {verb: frozenset(ops) for verb, ops in table.items()}


def is_skeleton_of(short: str, word: str) -> bool:
    """Whether ``short`` is an abbreviation of ``word`` made by dropping letters: same first
    letter, and its letters appear in ``word`` in order (``mgmt`` in ``management``)."""
    if len(short) >= len(word) or short[:1] != word[:1]:
        return False
    rest = iter(word[1:])
    return all(c in rest for c in short[1:])


def edit_distance_within(a: str, b: str, limit: int) -> bool:
    """Whether the optimal-string-alignment distance of ``a`` and ``b`` (insertions,
    deletions, substitutions and swaps of neighbours) is at most ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return False
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            v = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                v = min(v, prev2[j - 2] + 1)
            cur[j] = v
        if min(cur) > limit:
            return False
        prev2, prev = prev, cur
    return prev[-1] <= limit


def compact(text: str) -> str:
    """An identifier without case or separators: ``Get_User-Info`` is ``getuserinfo``."""
    return "".join(c for c in text.lower() if c.isalnum())


def identifier_fragments(query: str) -> list[str]:
    """The query's tokens written as identifiers (``snake_case``, ``kebab-case``, ``camelCase``),
    compacted, when at least :data:`FRAGMENT_MIN` letters long. A model that half remembers a
    tool's name writes its start this way, often cut inside a word."""
    found = []
    for raw in query.split():
        token = raw.strip("+\"'`.,;:()[]{}")
        shaped = "_" in token or "-" in token or _CAMEL.search(token) is not None
        if shaped and len(compact(token)) >= FRAGMENT_MIN:
            found.append(compact(token))
    return found


def deletions(word: str) -> set[str]:
    """The word and every string one letter shorter: two words within one edit of each other
    share at least one of these (the symmetric-deletion candidate filter)."""
    return {word} | {word[:i] + word[i + 1:] for i in range(len(word))}

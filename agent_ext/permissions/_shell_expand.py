"""Path words as bash would expand them: `~`, `$HOME`, braces and globs, or "unknown".

Rules match where a command lands, so a word like `~/.{ssh,x}/id_rsa` or `secrets/*` has to
become the paths bash would pass. Only what is certain before the command runs is expanded:
`~` and `$HOME` (when the command does not set HOME), brace lists, and globs against the file
system (bounded). Anything else (other variables, `$(...)`, too many matches) is unknown, and
an unknown word says which folder it is confined to, if any: a glob cannot leave its folder,
a variable can hold `../..` and so could name anything.
"""

from __future__ import annotations

import glob
import itertools
import os
import posixpath
import re
from dataclasses import dataclass

from ._shell_words import decode_ansi_c

#: How many paths one glob or brace word may expand to before it counts as unknown.
MAX_MATCHES = 256
_UNKNOWN = "\x00"
_GLOB = frozenset("*?[")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HOME_REFERENCE = re.compile(r"\$(?:HOME\b|\{HOME\})")


@dataclass(frozen=True)
class Unknown:
    """A path word only known when the command runs.

    ``within`` is an absolute folder the word cannot leave (a glob's fixed folder), or None
    when it could name any path. ``word`` is the word as written, for reasons.
    """

    word: str
    within: str | None


@dataclass(frozen=True)
class Expanded:
    """What one word expands to: known paths (as written, not yet resolved) or unknowns."""

    paths: tuple[str, ...] = ()
    unknown: tuple[Unknown, ...] = ()


def home_is_known(command: str) -> bool:
    """Whether `$HOME` and `~` mean the user's home: the command never names HOME otherwise.

    Why: `HOME=/x cat ~/k`, `export HOME=...`, `read HOME` and `for HOME in` all change it;
    any mention besides a plain reference makes it unknown.
    """
    return "HOME" not in _HOME_REFERENCE.sub("", command)


# -- tokens -------------------------------------------------------------------------------------
# A word is turned into a list of (character, active) pairs: active characters keep their
# meaning to bash (an unquoted `{`, `,`, `*`); `_UNKNOWN` stands for a run-time part.

Token = tuple[str, bool]


def tokens(source: str, home: str | None) -> list[Token] | None:
    """The word's characters with quoting resolved; None when the syntax is not understood."""
    out: list[Token] = []
    i, n = 0, len(source)
    while i < n:
        ch = source[i]
        if ch == "\\":
            if i + 1 < n and source[i + 1] != "\n":
                out.append((source[i + 1], False))
            i += 2
        elif ch == "'":
            end = source.find("'", i + 1)
            if end < 0:
                return None
            out.extend((c, False) for c in source[i + 1:end])
            i = end + 1
        elif source.startswith("$'", i):
            end = _ansi_end(source, i + 2)
            if end < 0:
                return None
            out.extend((c, False) for c in decode_ansi_c(source[i + 2:end]))
            i = end + 1
        elif ch == '"' or source.startswith('$"', i):
            i = _double_quoted(source, i + (2 if ch == "$" else 1), home, out)
            if i < 0:
                return None
        elif ch in "$`":
            i = _expansion(source, i, home, out)
        else:
            out.append((ch, True))
            i += 1
    return out


def _ansi_end(source: str, start: int) -> int:
    i = start
    while i < len(source):
        if source[i] == "\\":
            i += 2
            continue
        if source[i] == "'":
            return i
        i += 1
    return -1


def _double_quoted(source: str, start: int, home: str | None, out: list[Token]) -> int:
    i = start
    while i < len(source):
        ch = source[i]
        if ch == '"':
            return i + 1
        if ch == "\\" and i + 1 < len(source) and source[i + 1] in '$`"\\\n':
            if source[i + 1] != "\n":
                out.append((source[i + 1], False))
            i += 2
        elif ch in "$`":
            i = _expansion(source, i, home, out)
        else:
            out.append((ch, False))
            i += 1
    return -1


def _expansion(source: str, start: int, home: str | None, out: list[Token]) -> int:
    """Append `$HOME`'s value or an unknown marker; returns where the expansion ends."""
    name = None
    end = len(source)
    rest = source[start + 1:]
    simple = _NAME.match(rest)
    if source[start] == "$" and simple:
        name, end = simple.group(0), start + 1 + simple.end()
    elif source.startswith("${", start):
        close = source.find("}", start)
        inner = source[start + 2:close] if close > 0 else ""
        if close > 0 and _NAME.fullmatch(inner):
            name, end = inner, close + 1
    if name == "HOME" and home is not None:
        out.extend((c, False) for c in home)
        return end
    out.append((_UNKNOWN, False))
    # Nothing after a run-time part can be trusted to keep its meaning: the rest is unknown.
    return len(source) if name is None else end


# -- braces -------------------------------------------------------------------------------------

def braces(word: list[Token], limit: int = MAX_MATCHES) -> list[list[Token]] | None:
    """Bash's brace expansion (`{a,b}`, `{1..3}`, `{a..c}`); None past ``limit`` words."""
    pending, done = [word], []
    while pending:
        current = pending.pop()
        found = _first_brace(current)
        if found is None:
            done.append(current)
        else:
            open_at, close_at, parts = found
            pending.extend(current[:open_at] + part + current[close_at + 1:]
                           for part in reversed(parts))
        if len(done) + len(pending) > limit:
            return None
    return done


def _first_brace(word: list[Token]) -> tuple[int, int, list[list[Token]]] | None:
    for open_at, (ch, active) in enumerate(word):
        if ch != "{" or not active:
            continue
        depth, commas = 0, list[int]()
        for index in range(open_at + 1, len(word)):
            c, act = word[index]
            if not act:
                continue
            if c == "{":
                depth += 1
            elif c == "}" and depth:
                depth -= 1
            elif c == "}":
                inner = word[open_at + 1:index]
                if commas:
                    cuts = [open_at, *commas, index]
                    return open_at, index, [word[a + 1:b] for a, b in itertools.pairwise(cuts)]
                sequence = _sequence("".join(c for c, _ in inner))
                if sequence is not None and all(a for _, a in inner):
                    return open_at, index, [[(c, False) for c in s] for s in sequence]
                break
            elif c == "," and not depth:
                commas.append(index)
    return None


def _sequence(text: str) -> list[str] | None:
    match = re.fullmatch(r"(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?", text)
    if match is None:
        return None
    first, last, step_text = match.groups()
    step = abs(int(step_text or "1")) or 1
    if first.lstrip("-").isdigit() and last.lstrip("-").isdigit():
        a, b = int(first), int(last)
        values = range(a, b + (1 if b >= a else -1), step if b >= a else -step)
        return [str(v) for v in itertools.islice(values, MAX_MATCHES + 1)]
    if first.isalpha() and last.isalpha():
        a, b = ord(first), ord(last)
        return [chr(v) for v in range(a, b + (1 if b >= a else -1), step if b >= a else -step)]
    return None


# -- the whole word -----------------------------------------------------------------------------

def expand_word(source: str, dirs: tuple[str, ...], home: str | None) -> Expanded:
    """Expand one word written as ``source`` for each folder in ``dirs`` it may run in.

    Relative results are joined to each folder (no folders: the working folder is not known,
    so a relative word is unknown); ``home`` is None when HOME is not known.
    """
    toks = tokens(source, home)
    if toks is None:
        return Expanded(unknown=(Unknown(source, None),))
    words = braces(toks)
    if words is None:
        return Expanded(unknown=(Unknown(source, _fixed_folder(toks, dirs, home)),))
    paths: list[str] = []
    unknown: list[Unknown] = []
    for raw in words:
        word = _tilde(raw, home)
        if word is None or any(c == _UNKNOWN for c, _ in word):
            unknown.append(Unknown(source, None))
            continue
        text = "".join(c for c, _ in word)
        relative = not posixpath.isabs(text)
        if relative and not dirs:
            unknown.append(Unknown(source, None))
            continue
        if not any(a and c in _GLOB for c, a in word):
            paths.extend(_join(text, dirs))
            continue
        pattern = "".join(c if a else glob.escape(c) for c, a in word)
        for folder in dirs if relative else ("/",):
            found = glob_paths(pattern, folder)
            if not found:
                unknown.append(Unknown(source, _glob_folder(pattern, folder)))
            else:
                paths.extend(found)
    if len(paths) > MAX_MATCHES:
        return Expanded(unknown=(Unknown(source, _fixed_folder(toks, dirs, home)),))
    return Expanded(tuple(dict.fromkeys(paths)), tuple(dict.fromkeys(unknown)))


def _tilde(word: list[Token], home: str | None) -> list[Token] | None:
    """A leading unquoted `~` (or `~user`) replaced by that home; None when not known."""
    if not word or word[0] != ("~", True):
        return word
    cut = next((i for i, (c, _) in enumerate(word) if c == "/"), len(word))
    head = "".join(c for c, _ in word[:cut])
    if not all(a for _, a in word[:cut]) or _UNKNOWN in head:
        return None
    expanded = home if head == "~" else os.path.expanduser(head)  # noqa: PTH111
    if expanded is None or expanded == head:
        return None
    return [(c, False) for c in expanded] + word[cut:]


def _join(text: str, dirs: tuple[str, ...]) -> list[str]:
    if posixpath.isabs(text):
        return [text]
    return [posixpath.join(d, text) for d in dirs]


def glob_paths(pattern: str, folder: str) -> list[str] | None:
    """Bash-style matches of ``pattern`` from ``folder`` (absolute); None past the cap.

    Why not fnmatch as is: bash reads `[^x]` as a negation, as `[!x]` is.
    """
    pattern = pattern.replace("[^", "[!")
    base = pattern if posixpath.isabs(pattern) else posixpath.join(glob.escape(folder), pattern)
    found: list[str] = []
    try:
        for match in glob.iglob(base):  # noqa: PTH207  bash semantics on a string pattern
            found.append(match)
            if len(found) > MAX_MATCHES:
                return None
    except (OSError, ValueError, RecursionError):
        return None
    return found


def _glob_folder(pattern: str, folder: str) -> str | None:
    """The fixed folder a glob cannot leave, or None if a `..` after the glob could."""
    parts = pattern.split("/")
    fixed: list[str] = []
    for index, part in enumerate(parts):
        if _GLOB & set(part):
            if ".." in parts[index:]:
                return None
            break
        fixed.append(part)
    text = "/".join(fixed) or ("/" if pattern.startswith("/") else ".")
    return posixpath.normpath(text if posixpath.isabs(text) else posixpath.join(folder, text))


def _fixed_folder(toks: list[Token], dirs: tuple[str, ...], home: str | None) -> str | None:
    """For a word too big to expand: the folder before its first active character."""
    word = _tilde(toks, home)
    if word is None or len(dirs) != 1 or ".." in "".join(c for c, _ in word):
        return None
    head: list[str] = []
    for c, active in word:
        if c == _UNKNOWN:
            return None
        if active and c in "{*?[,":
            break
        head.append(c)
    text = "".join(head)
    folder = text.rsplit("/", 1)[0] + "/" if "/" in text else "."
    return posixpath.normpath(folder if posixpath.isabs(folder) else
                              posixpath.join(dirs[0], folder))

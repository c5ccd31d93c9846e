"""Shell word decoding: quote removal, backslash escapes and ANSI-C strings, done as bash does.

The analyser matches rules against the words bash would actually pass to a program, so every
quoting form has to be undone exactly; a word that is only known at run time is flagged instead.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

_SIMPLE_ESCAPES = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
    "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}
_OCTAL = frozenset("01234567")
_HEX = frozenset("0123456789abcdefABCDEF")
_DQUOTE_ESCAPABLE = frozenset('$`"\\\n')
# Characters that end an unquoted word in bash; finding one inside a parsed word means the
# parser and bash disagree about where the word ends.
_UNQUOTED_METACHARS = frozenset(" \t\n;&|<>()`'\"")
_GLOB_CHARS = frozenset("*?[")
_BRACE_EXPANSION = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")


@dataclass(frozen=True)
class Word:
    """One shell word as bash would pass it, or its source text when only known at run time.

    `shape` is the unquoted skeleton (quoted or escaped characters replaced by `x`) used to
    spot brace expansion and globs; `mismatch` says the parser split the word unlike bash.
    """

    text: str
    source: str
    dynamic: bool = False
    glob: bool = False
    shape: str = ""
    mismatch: bool = False


def quote_closes_early(body: str, quote: str, escapes: bool) -> bool:
    """Whether bash would end a quoted string inside `body` (the text between the quotes).

    Why: the parser occasionally misjudges where `$'...'` or `'...'` ends; when it does, bash
    reads different words than the parse shows.
    """
    i, n = 0, len(body)
    while i < n:
        ch = body[i]
        if escapes and ch == "\\":
            i += 2
            continue
        if ch == quote:
            return True
        i += 1
    return escapes and n > 0 and i > n


def decode_ansi_c(body: str) -> str:
    """Decode the inside of a `$'...'` string; why: `$'\\x67it'` must read as `git`."""
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        ch = body[i]
        if ch != "\\" or i + 1 >= n:
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[nxt])
            i += 2
        elif nxt in _OCTAL:
            j = i + 1
            while j < n and j < i + 4 and body[j] in _OCTAL:
                j += 1
            out.append(chr(int(body[i + 1:j], 8) & 0xFF))
            i = j
        elif nxt in "xuU":
            limit = {"x": 2, "u": 4, "U": 8}[nxt]
            j = i + 2
            while j < n and j < i + 2 + limit and body[j] in _HEX:
                j += 1
            if j == i + 2:
                out.append(body[i:i + 2])
            else:
                code = int(body[i + 2:j], 16)
                out.append(chr(code) if code <= 0x10FFFF else "\ufffd")
            i = j
        elif nxt == "c" and i + 2 < n:
            ctl = body[i + 2]
            if ctl == "\\" and i + 3 < n and body[i + 3] == "\\":
                i += 1
            out.append(chr(ord(ctl.upper()) & 0x1F) if ord(ctl) < 128 else ctl)
            i += 3
        else:
            out.append(body[i:i + 2])
            i += 2
    text = "".join(out)
    # bash builds C strings: a NUL byte ends the word.
    cut = text.find("\0")
    return text if cut < 0 else text[:cut]


def unescape_double_quoted(body: str) -> str:
    """Remove the backslashes bash removes inside double quotes; why: `"gi\\t"` stays `gi\\t`."""
    return _drop_backslashes(body, _DQUOTE_ESCAPABLE)


def _drop_backslashes(body: str, escapable: Collection[str]) -> str:
    """``body`` with each backslash before a character of ``escapable`` removed; a backslash
    before a newline removes the newline too (a line continuation)."""
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        ch = body[i]
        if ch == "\\" and i + 1 < n and body[i + 1] in escapable:
            if body[i + 1] != "\n":
                out.append(body[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def unescape_unquoted(body: str) -> tuple[str, str, bool, bool]:
    """Remove backslashes from an unquoted word; returns (text, shape, has_glob, mismatch).

    Why: `r\\m` runs `rm`. The shape keeps the characters that still mean something to bash
    (globs, braces), and a bare metacharacter means the parser split the word unlike bash.
    """
    out: list[str] = []
    shape: list[str] = []
    glob = mismatch = False
    i, n = 0, len(body)
    while i < n:
        ch = body[i]
        if ch == "\\":
            if i + 1 < n:
                if body[i + 1] != "\n":
                    out.append(body[i + 1])
                    shape.append("x")
                i += 2
            else:
                out.append(ch)
                shape.append("x")
                i += 1
            continue
        if ch in _GLOB_CHARS:
            glob = True
        elif ch in _UNQUOTED_METACHARS:
            mismatch = True
        out.append(ch)
        shape.append(ch)
        i += 1
    return "".join(out), "".join(shape), glob, mismatch


def has_brace_expansion(shape: str) -> bool:
    """Whether an unquoted skeleton has `{a,b}` or `{1..3}`; why: one word becomes several."""
    return bool(_BRACE_EXPANSION.search(shape))


def unescape_heredoc(body: str) -> str:
    """Remove the backslashes bash removes in an unquoted here-document body."""
    return _drop_backslashes(body, "$`\\\n")


def strip_tabs(body: str) -> str:
    """Strip leading tabs from every line, as `<<-` does."""
    return "".join(line.lstrip("\t") for line in body.splitlines(keepends=True))

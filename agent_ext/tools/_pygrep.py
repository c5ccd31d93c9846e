"""The grep search model, and a pure-Python engine that gives the results ``rg`` gives.

Used when the ``rg`` binary is missing (or forced with ``AGENT_EXT_GREP=python``), and for text
that is not a file (internal URLs). Parity with ripgrep covers the walk (see ``_ignore``),
binary files (a NUL byte in the first 64 KiB skips the file), UTF-16/UTF-8 BOMs, lines split on
``\\n`` only, and multi-line mode (``-U --multiline-dotall``), where counts are matches rather
than lines when the pattern can match a newline. Patterns are Python regexes; a few Rust-only
spellings (``(?<name>``, ``\\z``, ``[[:alpha:]]``) are translated.
"""

from __future__ import annotations

import codecs
import importlib
import re
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ._ignore import GlobError, Overrides, Walk, glob_regex

Mode = Literal["files_with_matches", "content", "count"]
#: (line number, is a match (else context), text without its line terminator)
Line = tuple[int, bool, str]
BINARY_SNIFF = 64 * 1024

#: ripgrep's globs for its common file types (``rg --type-list``).
TYPES: dict[str, tuple[str, ...]] = {
    "c": ("*.[chH]", "*.[chH].in", "*.cats"),
    "cpp": ("*.[ChH]", "*.[ChH].in", "*.[ch]pp", "*.[ch]pp.in", "*.[ch]xx", "*.[ch]xx.in",
            "*.cc", "*.cc.in", "*.hh", "*.hh.in", "*.inl"),
    "cs": ("*.cs",),
    "css": ("*.css", "*.scss"),
    "csv": ("*.csv",),
    "go": ("*.go",),
    "html": ("*.ejs", "*.htm", "*.html"),
    "java": ("*.java", "*.jsp", "*.jspx", "*.properties"),
    "js": ("*.cjs", "*.js", "*.jsx", "*.mjs", "*.vue"),
    "json": ("*.json", "*.sarif", "composer.lock"),
    "jsonl": ("*.jsonl",),
    "jupyter": ("*.ipynb", "*.jpynb"),
    "kotlin": ("*.kt", "*.kts"),
    "lua": ("*.lua",),
    "make": ("*.mak", "*.mk", "[Gg][Nn][Uu]makefile", "[Mm]akefile", "[Mm]akefile.am",
             "[Mm]akefile.in"),
    "md": ("*.markdown", "*.md", "*.mdown", "*.mdwn", "*.mdx", "*.mkd", "*.mkdn"),
    "php": ("*.php", "*.php3", "*.php4", "*.php5", "*.php7", "*.php8", "*.pht", "*.phtml"),
    "py": ("*.py", "*.pyi"),
    "r": ("*.R", "*.Rmd", "*.Rnw", "*.r"),
    "rst": ("*.rst",),
    "ruby": ("*.gemspec", "*.rb", "*.rbw", ".irbrc", "Gemfile", "Rakefile", "config.ru"),
    "rust": ("*.rs",),
    "scala": ("*.sbt", "*.scala"),
    "sh": ("*.bash", "*.bashrc", "*.csh", "*.cshrc", "*.ksh", "*.kshrc", "*.sh", "*.tcsh",
           "*.zsh", ".bash_login", ".bash_logout", ".bash_profile", ".bashrc", ".cshrc",
           ".kshrc", ".login", ".logout", ".profile", ".tcshrc", ".zlogin", ".zlogout",
           ".zprofile", ".zshenv", ".zshrc", "bash_login", "bash_logout", "bash_profile",
           "bashrc", "profile", "zlogin", "zlogout", "zprofile", "zshenv", "zshrc"),
    "sql": ("*.psql", "*.sql"),
    "swift": ("*.swift",),
    "tex": ("*.bib", "*.cls", "*.dtx", "*.ins", "*.ltx", "*.sty", "*.tex"),
    "toml": ("*.toml", "Cargo.lock"),
    "ts": ("*.cts", "*.mts", "*.ts", "*.tsx"),
    "txt": ("*.txt",),
    "xml": ("*.dtd", "*.rng", "*.sch", "*.xhtml", "*.xjb", "*.xml", "*.xml.dist", "*.xsd",
            "*.xsl", "*.xslt"),
    "yaml": ("*.yaml", "*.yml"),
}
TYPES["markdown"] = TYPES["md"]
TYPES["csharp"] = TYPES["cs"]
#: Names models use for a type, mapped to ripgrep's name.
TYPE_ALIASES = {
    "python": "py", "javascript": "js", "jsx": "js", "typescript": "ts", "tsx": "ts",
    "yml": "yaml", "rs": "rust", "golang": "go", "c++": "cpp", "bash": "sh", "shell": "sh",
    "ipynb": "jupyter", "notebook": "jupyter", "text": "txt", "htm": "html", "rb": "ruby",
    "kt": "kotlin", "h": "c",
}


def canonical_type(name: str) -> str:
    """ripgrep's name for a file type (``python`` → ``py``, ``ipynb`` → ``jupyter``)."""
    key = name.strip().lower()
    return TYPE_ALIASES.get(key, key)


class PatternError(ValueError):
    """The pattern (or glob, or type) cannot be used; the message says what to change."""


@dataclass(frozen=True)
class GrepQuery:
    """One search, independent of the engine that runs it."""

    pattern: str
    mode: Mode = "files_with_matches"
    ignore_case: bool = False
    multiline: bool = False
    before: int = 0
    after: int = 0
    globs: tuple[str, ...] = ()
    type: str | None = None


@dataclass(slots=True)
class FileHits:
    """One file's results: ``count`` matching lines (matches in multi-line mode), and in
    content mode ``size`` output lines (matches and context).

    The lines are either ``parsed`` already or kept as rg's raw ``N:text`` / ``N-text`` lines
    (``raw[start:stop]``) and parsed on first use: only the files on the page ever are. Plain
    fields rather than a closure keep tens of thousands of results cheap for the GC.
    """

    path: str
    count: int = 0
    size: int = 0
    binary: bool = False
    parsed: list[Line] | None = None
    raw: bytes = b""
    start: int = 0
    stop: int = 0

    def lines(self) -> list[Line]:
        if self.parsed is None:
            self.parsed = numbered_lines(self.raw[self.start:self.stop])
        return self.parsed


def numbered_lines(raw: bytes) -> list[Line]:
    """rg's ``N:text`` (match) and ``N-text`` (context) lines; ``--`` separators skipped."""
    lines: list[Line] = []
    for item in raw.split(b"\n"):
        found = _NUMBERED.match(item)
        if found is not None:
            text = item[found.end():].decode("utf-8", "replace").removesuffix("\r")
            lines.append((int(found[1]), found[2] == b":", text))
    return lines


_NUMBERED = re.compile(rb"(\d+)([:-])")


@dataclass
class ScanResult:
    """What an engine found, and whether the scan was complete."""

    files: list[FileHits] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    #: Why the scan stopped early: "timeout", "cancelled" or "output" (too much output).
    stopped: str | None = None
    #: Modification times (ns) of result files, when the engine collected them on the way.
    mtimes: dict[str, int] = field(default_factory=dict)


def compile_query(query: GrepQuery) -> re.Pattern[str]:
    """The Python regex for ``query``; raises PatternError as ``rg`` would refuse it."""
    flags = re.MULTILINE | (re.IGNORECASE if query.ignore_case else 0)
    flags |= re.DOTALL if query.multiline else 0
    source = _rust_spellings(query.pattern)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            regex = re.compile(source, flags)
    except re.error as err:
        raise PatternError(f"regex parse error: {err}") from None
    if not query.multiline and _walk(regex, _newline_literal):
        raise PatternError('the pattern contains a literal "\\n", which can only match with '
                           "multiline=true; set it, or take the \\n out of the pattern")
    return regex


_POSIX = {"alnum": "0-9A-Za-z", "alpha": "A-Za-z", "digit": "0-9", "lower": "a-z",
          "upper": "A-Z", "space": r"\t\n\v\f\r ", "word": "0-9A-Za-z_", "xdigit": "0-9A-Fa-f",
          "punct": r"!-/:-@\[-`{-~", "blank": r"\t ", "cntrl": r"\x00-\x1f\x7f",
          "print": r" -~", "graph": r"!-~", "ascii": r"\x00-\x7f"}


def _rust_spellings(pattern: str) -> str:
    """Rust-only regex spellings rewritten for Python, so a pattern works with either engine."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("\\z", i):
            out.append("\\Z")
            i += 2
        elif pattern[i] == "\\":
            out.append(pattern[i:i + 2])
            i += 2
        elif pattern.startswith("(?<", i) and pattern[i + 3:i + 4] not in ("=", "!"):
            out.append("(?P<")
            i += 3
        elif (found := re.match(r"\[:(\^?)(\w+):\]", pattern[i:])) and found[2] in _POSIX:
            if found[1]:
                raise PatternError(f"negated POSIX class {found[0]} is not supported here; "
                                   "use a negated class such as [^a-z]")
            out.append(_POSIX[found[2]])
            i += found.end()
        else:
            out.append(pattern[i])
            i += 1
    return "".join(out)


def _parser() -> Any:
    name = "re._parser" if hasattr(re, "_parser") else "sre_parse"
    return importlib.import_module(name)


def _walk(regex: re.Pattern[str], test: Callable[[str, Any], bool | None]) -> bool:
    """Whether ``test`` holds for any node of the parsed pattern (False if it cannot parse)."""
    try:
        tree = _parser().parse(regex.pattern, regex.flags)
    except Exception:  # noqa: BLE001  compiled fine; an unparsable tree just means "no"
        return False
    return _any_node(tree, test)


def _any_node(tree: Any, test: Callable[[str, Any], bool | None]) -> bool:
    for op, arg in tree:
        name = str(op)
        verdict = test(name, arg)
        if verdict is not None:
            if verdict:
                return True
            continue
        for child in _children(name, arg):
            if _any_node(child, test):
                return True
    return False


def _children(name: str, arg: Any) -> list[Any]:
    if name == "SUBPATTERN":
        return [arg[-1]]
    if name == "BRANCH":
        return list(arg[1])
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        return [arg[2]]
    if name == "ATOMIC_GROUP":
        return [arg]
    if name == "GROUPREF_EXISTS":
        return [x for x in arg[1:] if x is not None]
    return []


def _newline_literal(name: str, arg: Any) -> bool | None:
    return (arg == 10) if name == "LITERAL" else None


_NEWLINE_CATEGORIES = {"CATEGORY_SPACE", "CATEGORY_NOT_DIGIT", "CATEGORY_NOT_WORD",
                       "CATEGORY_LINEBREAK"}


def _matches_newline(name: str, arg: Any) -> bool | None:
    if name == "LITERAL":
        return bool(arg == 10)
    if name == "NOT_LITERAL":
        return bool(arg != 10)
    if name == "ANY":
        return True  # multi-line mode always runs with DOTALL
    if name == "IN":
        negate = any(str(op) == "NEGATE" for op, _ in arg)
        hit = any(_in_class(str(op), item) for op, item in arg)
        return hit != negate
    if name in ("ASSERT", "ASSERT_NOT", "AT"):
        return False
    return None


def _in_class(name: str, item: Any) -> bool:
    if name == "LITERAL":
        return bool(item == 10)
    if name == "RANGE":
        return bool(item[0] <= 10 <= item[1])
    return name == "CATEGORY" and str(item) in _NEWLINE_CATEGORIES


def spans_lines(regex: re.Pattern[str], query: GrepQuery) -> bool:
    """Whether ripgrep would search multi-line (the flag is on and a match can hold ``\\n``)."""
    return query.multiline and _walk(regex, _matches_newline)


def search_text(text: str, regex: re.Pattern[str], query: GrepQuery, *,
                spanning: bool, first_only: bool = False) -> tuple[int, list[Line]]:
    """Search one text: (count, lines); ``lines`` filled in content mode only.

    ``count`` is matching lines, except in count mode for a ``spanning`` search, where ripgrep
    counts matches.
    """
    total = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    matched: dict[int, None] = {}
    count = 0
    line, pos = 0, 0
    for found in regex.finditer(text):
        start, end = found.span()
        line += text.count("\n", pos, start)
        pos = start
        if line >= total:
            break
        newline = text.find("\n", start, end)
        if spanning:
            last = line + text.count("\n", start, max(start, end - 1))
            matched.update(dict.fromkeys(range(line, last + 1)))
            count += 1
        elif newline == -1:
            matched[line] = None
        else:
            matched.update(dict.fromkeys(_per_line(text, regex, line, start, end)))
        if first_only and matched:
            break
    if not spanning or query.mode != "count":
        count = len(matched)
    if query.mode != "content" or not matched:
        return count, []
    return count, _with_context(text.split("\n")[:total], sorted(matched), query)


def _per_line(text: str, regex: re.Pattern[str], line: int, start: int, end: int) -> Iterator[int]:
    """The lines covered by a match that crossed a newline, each searched on its own."""
    begin = text.rfind("\n", 0, start) + 1
    stop = text.find("\n", max(start, end - 1))
    for offset, piece in enumerate(text[begin:stop if stop != -1 else len(text)].split("\n")):
        if regex.search(piece):
            yield line + offset


def _with_context(lines: list[str], matched: list[int], query: GrepQuery) -> list[Line]:
    wanted: dict[int, bool] = {}
    for n in matched:
        for k in range(max(0, n - query.before), min(len(lines), n + query.after + 1)):
            wanted.setdefault(k, False)
        wanted[n] = True
    return [(k + 1, wanted[k], lines[k].removesuffix("\r")) for k in sorted(wanted)]


def decode(data: bytes) -> str:
    """File bytes as text the way ripgrep sees them: BOM-sniffed UTF-16, else lossy UTF-8."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace")
    return data.removeprefix(codecs.BOM_UTF8).decode("utf-8", errors="replace")


def type_filter(name: str | None) -> Callable[[str], bool | None] | None:
    """A file-name test for ``--type``; raises PatternError for an unknown type."""
    if name is None:
        return None
    key = canonical_type(name)
    if key not in TYPES:
        raise PatternError(f"unrecognized file type: {name}; common types: "
                           f"{', '.join(sorted(TYPES))} (or filter with glob instead)")
    regex = re.compile("|".join(f"(?:{glob_regex(g, separator=False)})" for g in TYPES[key])
                       + r"\Z", re.DOTALL)
    return lambda base: regex.match(base) is not None


def scan(root: Path, query: GrepQuery, *, timeout: float,
         cancelled: threading.Event | None = None) -> ScanResult:
    """Search the files below ``root`` (or ``root`` itself) like ``rg`` would."""
    regex = compile_query(query)
    spanning = spans_lines(regex, query)
    deadline = time.monotonic() + timeout
    result = ScanResult()

    def stop() -> bool:
        if cancelled is not None and cancelled.is_set():
            result.stopped = "cancelled"
        elif time.monotonic() > deadline:
            result.stopped = "timeout"
        return result.stopped is not None

    explicit = not root.is_dir()
    try:
        overrides = Overrides(query.globs) if query.globs else None
    except GlobError as err:
        raise PatternError(f"error parsing glob: {err}") from None
    walk = Walk(root, overrides=overrides, types=type_filter(query.type), stop=stop)
    paths: Iterator[str] = iter([str(root)]) if explicit else walk.files()
    for i, path in enumerate(paths):
        if i % 64 == 0 and stop():
            break
        hits = _search_file(path, regex, query, spanning=spanning, explicit=explicit,
                            errors=result.errors)
        if hits is not None:
            result.files.append(hits)
    result.errors += walk.errors
    return result


def _search_file(path: str, regex: re.Pattern[str], query: GrepQuery, *, spanning: bool,
                 explicit: bool, errors: list[str]) -> FileHits | None:
    """One file's hits, or None. A walked file with a NUL in its first 64 KiB is binary and
    skipped, as rg does; a file given explicitly is searched and reported as binary."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as err:
        errors.append(f"{path}: {err.strerror or err}")
        return None
    utf16 = data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
    nul = -1 if utf16 else data.find(b"\0")
    binary = nul != -1 and explicit
    if nul != -1 and not explicit:
        if nul < BINARY_SNIFF:
            return None
        data = data[:data.rfind(b"\n", 0, nul) + 1]
    text = decode(data)
    first_only = query.mode == "files_with_matches" or binary
    count, lines = search_text(text, regex, query, spanning=spanning, first_only=first_only)
    if not count:
        return None
    if binary:
        return FileHits(path, count=count, binary=True)
    return FileHits(path, count=count, size=len(lines), parsed=lines)

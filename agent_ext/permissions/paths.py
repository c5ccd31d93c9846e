"""Path rules (gitignore style, four anchors) matched on resolved paths, and the working roots.

Rules match where a call really lands: ``~`` expanded, ``..`` folded and symlinks resolved, so a
link inside the project that points outside is outside. A pattern that matches a directory
matches everything under it, as in gitignore.
"""

from __future__ import annotations

import os
import posixpath
import re
import unicodedata
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_GLOB_CHARS = frozenset("*?")
#: Internal URLs that touch no file, only the kernel's own state.
STATE_SCHEMES = frozenset({"var", "history"})
_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):/")
_ADDRESS = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):")
_SCHEME_HEAD = 512


def scheme(text: str) -> str | None:
    """The lower-case scheme of ``scheme://...`` (or ``scheme:/...``), else None.

    Only the start of ``text`` is looked at: a call's arguments may be megabytes long.
    """
    found = _URL.match(text[:_SCHEME_HEAD].lstrip())
    return found.group(1).lower() if found and len(found.group(1)) > 1 else None


def address_scheme(location: str) -> str | None:
    """The scheme of a location that is an address rather than a path, else None.

    Tools report paths as absolute paths, so any location that does not start with ``/`` and
    begins ``scheme:`` is an address, however ``Path`` spelt it (``Path("nb://x")`` reads
    ``nb:/x``, ``Path("nb://")`` reads ``nb:``, an opaque ``name:value`` stays as it is).
    """
    found = _ADDRESS.match(location.strip())
    return found.group(1).lower() if found else None


def internal_read(text: str) -> bool:
    """Whether ``text`` is an address (``nb://x.ipynb``, ``mcp://s/u``) rather than a path.

    Tools report the files an address reaches through its URL scheme; an address left among a
    call's locations is one the scheme could not resolve, never a path to match rules on.
    """
    return address_scheme(text) is not None


def state_only(text: str) -> bool:
    """Whether ``text`` is an address of kernel state (``var://x``, ``history://3``)."""
    return scheme(text) in STATE_SCHEMES


def url_hosts(url: str) -> set[str]:
    """Every host a URL could reach, under lenient and strict readings of its authority."""
    hosts = set()
    for variant in (url, url.replace("\\", "/")):
        try:
            host = urllib.parse.urlsplit(variant.strip()).hostname
        except ValueError:
            host = None
        hosts.add(unicodedata.normalize("NFKC", host).casefold().rstrip(".") if host else "")
    return hosts


def real(path: str | Path, cwd: str | Path) -> str:
    """The absolute path with ``~`` expanded, ``..`` folded and symlinks resolved.

    ``..`` is taken after the symlink before it, as the kernel does (``link/..`` is the
    link target's parent). The longest existing prefix is resolved; the rest is kept as
    written, so a file that does not exist yet still lands under its real parent.
    """
    return os.path.realpath(_absolute(path, cwd))


def lexical(path: str | Path, cwd: str | Path) -> str:
    """The absolute path with ``~`` expanded and ``..`` folded, symlinks left alone."""
    return posixpath.normpath(_absolute(path, cwd))


def _absolute(path: str | Path, cwd: str | Path) -> str:
    text = os.fspath(Path(path).expanduser()) if str(path).startswith("~") else os.fspath(path)
    return text if posixpath.isabs(text) else posixpath.join(os.fspath(cwd), text)


def ancestors(path: str) -> list[str]:
    """``/a/b`` → ``["/a/b", "/a", ""]`` (the root is the empty string)."""
    out = []
    current = path.rstrip("/")
    while current:
        out.append(current)
        current = current.rsplit("/", 1)[0]
    out.append("")
    return out


def inside(path: str, roots: Iterable[str]) -> bool:
    """Whether ``path`` is one of ``roots`` or under one of them."""
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


@dataclass(frozen=True)
class PathPattern:
    """A compiled path specifier: regexes over absolute paths (lexical and resolved bases).

    ``folded`` patterns (those of deny and ask rules) also match the path with its case and
    Unicode composition changed, as a case-insensitive or normalising file system would open
    it: ``SECRETS/key`` is then ``secrets/key``. Allow rules match the path as written.
    """

    regexes: tuple[re.Pattern[str], ...]
    folded: bool = False

    def matches(self, path: str) -> bool:
        """The path or one of its parent directories matches (gitignore semantics)."""
        spellings = {path, unicodedata.normalize("NFC", path)} if self.folded else {path}
        return any(r.fullmatch(a) for p in spellings for a in ancestors(p)
                   for r in self.regexes)


def anchored_parts(spec: str, *, project: str, cwd: str, home: str) -> tuple[str, list[str]]:
    """The folder a specifier is anchored at and its components below it (see
    ``compile_path``): a name without a slash starts with ``**``, a trailing ``**`` is dropped."""
    if spec.startswith("//"):
        base, rest, anchored = "/", spec[2:], True
    elif spec == "~" or spec.startswith("~/"):
        base, rest, anchored = home, spec[2:], True
    elif spec.startswith("/"):
        base, rest, anchored = project, spec[1:], True
    elif spec.startswith("./"):
        base, rest, anchored = cwd, spec[2:], True
    else:
        base, rest, anchored = cwd, spec, "/" in spec.rstrip("/")
    parts = [p for p in rest.split("/") if p not in ("", ".")]
    if parts and parts[-1] == "**":
        parts.pop()
    if not anchored and parts:
        parts.insert(0, "**")
    return base, parts


def compile_path(spec: str, *, project: str, cwd: str, home: str,
                 folded: bool = False) -> PathPattern:
    """Compile a Read/Edit specifier against the anchors.

    ``//p`` is absolute, ``~/p`` is under home, ``/p`` is under the project root, ``./p`` and
    ``p`` are under cwd; a name without a slash (``*.env``) matches at any depth under cwd.
    ``*`` is one level, ``**`` any number, and a trailing ``/`` or ``/**`` means "everything
    under".
    """
    base, parts = anchored_parts(spec, project=project, cwd=cwd, home=home)
    literal: list[str] = []
    while parts and not (_GLOB_CHARS & set(parts[0]) or "\\" in parts[0]):
        literal.append(parts.pop(0))
    fixed = posixpath.join(base, *literal)
    bases = dict.fromkeys((posixpath.normpath(fixed), os.path.realpath(fixed)))
    tail = "".join(_component(p) for p in parts)
    flags = re.DOTALL | (re.IGNORECASE if folded else 0)
    if folded:
        bases |= dict.fromkeys(unicodedata.normalize("NFC", b) for b in list(bases))
        tail = unicodedata.normalize("NFC", tail)
    regexes = tuple(re.compile(re.escape(b.rstrip("/")) + tail, flags) for b in bases)
    return PathPattern(regexes, folded)


def _component(part: str) -> str:
    """The regex for ``/part``; ``**`` is zero or more whole components."""
    if part == "**":
        return "(?:/[^/]*)*"
    out = ["/"]
    i = 0
    while i < len(part):
        ch = part[i]
        if ch == "\\" and i + 1 < len(part):
            out.append(re.escape(part[i + 1]))
            i += 2
            continue
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


def rule_path(path: str, project: str, *, directory: bool = False) -> str:
    """The specifier naming ``path``: ``/rel`` inside the project, ``//abs`` outside it."""
    escaped = re.sub(r"([*?\[\\()])", r"\\\1", path)
    root = project.rstrip("/")
    if inside(path, [root]) and path != root:
        spec = "/" + escaped[len(re.sub(r"([*?\[\\()])", r"\\\1", root)) + 1:]
    elif path == root:
        spec = "/"
    else:
        spec = "/" + escaped
    if directory:
        spec = spec.rstrip("/") + "/**"
    return spec

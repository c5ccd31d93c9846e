"""The one path parser every tool uses: paths, ``~``, shell escapes, selectors and internal URLs.

Models write ``a.py:10-20``, ``~/x``, ``my\\ file`` and ``cell://abc``; parsing them the same way
everywhere means a path that works for ``read_file`` works for ``grep`` and ``edit`` too.
A literal path that exists always wins, so a real file named ``notes:raw`` stays reachable.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from agent_ext.fs.paths import resolve_path, split_selector, unescape_shell
from agent_ext.fs.selectors import Selector, parse_selector

from .parse import ParsedURL, extract_scheme, normalize_local, parse_url


@dataclass(frozen=True)
class PathArg:
    """A parsed path argument: a filesystem ``path`` or an internal ``url``, plus a selector."""

    text: str
    path: Path | None = None
    url: ParsedURL | None = None
    selector: Selector | None = None

    @property
    def raw(self) -> bool:
        return self.selector is not None and self.selector.raw

    @property
    def conflicts(self) -> bool:
        return self.selector is not None and self.selector.conflicts

    @property
    def image(self) -> bool:
        return self.selector is not None and self.selector.image


def parse_path_arg(text: str, cwd: Path, *, schemes: Collection[str] | None = None,
                   unpeeled: Collection[str] = ()) -> PathArg:
    """Parse a tool's path argument. Raises ValueError with what to write instead.

    With ``schemes`` (the router's registered names), an opaque ``name:value`` is a URL only for
    those schemes; ``scheme://`` text is a URL whatever its scheme, so a typo gets an
    "unknown scheme" answer rather than "file not found". URLs of the ``unpeeled`` schemes keep
    any selector-shaped tail (server-defined URIs may end in ``:12``).
    """
    stripped = text.strip()
    if not stripped:
        raise ValueError("The path is empty; pass a file path such as src/app.py or /abs/path.")
    for candidate in dict.fromkeys((stripped, unescape_shell(stripped))):
        literal = resolve_path(candidate, cwd)
        if os.path.lexists(literal):
            return PathArg(text=text, path=literal)
    url = _as_url(text, schemes, unpeeled)
    if url is not None:
        return url
    base, selector = split_selector(unescape_shell(stripped))
    if not base:
        raise ValueError(f"{text!r} has a selector but no path; write it as path:selector, "
                         "for example src/app.py:10-20.")
    return PathArg(text=text, path=resolve_path(base, cwd), selector=selector)


def _as_url(text: str, schemes: Collection[str] | None,
            unpeeled: Collection[str]) -> PathArg | None:
    """The URL reading of ``text`` (with a trailing selector peeled off), or None."""
    whole = normalize_local(text.strip())
    scheme = extract_scheme(whole)
    base, selector = (whole, None) if scheme in unpeeled else _peel_url_selector(whole)
    scheme = extract_scheme(base)
    if scheme is None:
        return None
    url = parse_url(base)
    if url.opaque is not None and schemes is not None and scheme not in schemes:
        return None
    if scheme == "file" and url.opaque is None:
        return PathArg(text=text, path=Path(os.path.normpath(unquote(url.path))), selector=selector)
    return PathArg(text=text, url=url, selector=selector)


def _peel_url_selector(text: str) -> tuple[str, Selector | None]:
    """Peel the longest ``:selector`` tail after the URL's authority (``cell://a:raw:1-5``)."""
    found = re.match(r"^[a-z][a-z0-9+.-]*://", text, re.IGNORECASE)
    start = found.end() if found else text.find(":") + 1
    i = text.find(":", start)
    while i != -1:
        selector = parse_selector(text[i + 1:])
        if selector is not None:
            return text[:i], selector
        i = text.find(":", i + 1)
    return text, None

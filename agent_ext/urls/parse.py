"""Internal URL parsing: ``scheme://host/path?query#hash`` and opaque ``scheme:rest``.

The standard library treats a colon in the host as a port separator, which breaks namespaced
hosts such as ``skill://plugin:name``; so the parts are taken by regex, never by ``urlsplit``.
Opaque URIs are guarded so that drive letters (``C:/x``), file names with a line number
(``a.py:50``) and read selectors (``Makefile:12``, ``notes:raw:1-20``) are never taken for URLs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qs, unquote

from agent_ext.fs.selectors import is_selector_chain

_HIERARCHICAL = re.compile(
    r"^(?P<scheme>[a-z][a-z0-9+.-]*)://(?P<host>[^/?#]*)(?P<path>[^?#]*)"
    r"(?:\?(?P<query>[^#]*))?(?:#(?P<fragment>.*))?$", re.IGNORECASE | re.DOTALL)
_OPAQUE = re.compile(r"^(?P<scheme>[a-z][a-z0-9+.-]*):(?P<rest>.+)$", re.IGNORECASE | re.DOTALL)
_LOCAL_SINGLE_SLASH = re.compile(r"^(local:)/(?!/)", re.IGNORECASE)


@dataclass(frozen=True)
class ParsedURL:
    """A parsed internal URL. ``host`` is percent-decoded; the ``raw_*`` fields keep the input."""

    scheme: str
    host: str
    raw_host: str
    path: str
    query: str
    fragment: str
    href: str
    #: For ``scheme:rest`` URIs, everything after the first colon; None for ``scheme://`` ones.
    opaque: str | None = None

    @property
    def hierarchical(self) -> bool:
        return self.opaque is None

    @property
    def params(self) -> dict[str, list[str]]:
        """The query string as a mapping of name to values."""
        return parse_qs(self.query, keep_blank_values=True)

    def __str__(self) -> str:
        return self.href


def normalize_local(text: str) -> str:
    """``local:/x`` (one slash, a common slip) as the canonical ``local://x``; else unchanged."""
    return _LOCAL_SINGLE_SLASH.sub(r"\1//", text)


def extract_scheme(text: str) -> str | None:
    """The lowercased scheme if ``text`` is URL-shaped, else None.

    Hierarchical URLs need a scheme of two or more characters (``C://`` is a drive). Opaque ones
    also need no ``.`` in the scheme and a rest that is not a read-selector chain.
    """
    text = normalize_local(text)
    found = _HIERARCHICAL.match(text)
    if found is not None:
        scheme = found["scheme"]
        return scheme.lower() if len(scheme) > 1 else None
    found = _OPAQUE.match(text)
    if found is None:
        return None
    scheme, rest = found["scheme"], found["rest"]
    if len(scheme) == 1 or "." in scheme or is_selector_chain(rest):
        return None
    return scheme.lower()


def is_url(text: str) -> bool:
    """Whether ``text`` is URL-shaped (see ``extract_scheme``)."""
    return extract_scheme(text) is not None


def parse_url(text: str) -> ParsedURL:
    """Parse an internal URL. Raises ValueError naming the input when it is not one."""
    original = text
    text = normalize_local(text.strip())
    if extract_scheme(text) is None:
        raise ValueError(f"Invalid URL {original!r}: expected scheme://host/path or scheme:value.")
    found = _HIERARCHICAL.match(text)
    if found is not None:
        raw_host = found["host"]
        return ParsedURL(scheme=found["scheme"].lower(), host=_decode(raw_host), raw_host=raw_host,
                         path=found["path"], query=found["query"] or "",
                         fragment=found["fragment"] or "", href=original)
    found = _OPAQUE.match(text)
    assert found is not None
    rest = found["rest"]
    body, _, fragment = rest.partition("#")
    body, _, query = body.partition("?")
    return ParsedURL(scheme=found["scheme"].lower(), host="", raw_host="", path=body, query=query,
                     fragment=fragment, href=original, opaque=rest)


def _decode(raw: str) -> str:
    try:
        return unquote(raw, errors="strict")
    except UnicodeDecodeError:
        return raw

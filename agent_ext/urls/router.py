"""The internal-URL router: ``var://``, ``cell://``, ``mcp://`` and friends, one scheme each.

Tools never branch on scheme names: they ask the router, and each scheme says how it reads,
whether it writes, and which approval tier a URL needs. Schemes are registered and unregistered
at runtime (the notebook and MCP layers add theirs when they load).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from agent_ext.core.errors import AgentExtError, ErrorCode
from agent_ext.core.kinds import Tier
from agent_ext.core.result import Part, ToolRefusal

from .parse import ParsedURL, extract_scheme, normalize_local, parse_url

if TYPE_CHECKING:
    from agent_ext.fs.selectors import Selector

_SCHEME_NAME = re.compile(r"^[a-z][a-z0-9+-]+$")


@dataclass(frozen=True)
class Resolved:
    """A resolved resource: ``text``, or ``parts`` (text and images) when it is not plain text.

    ``cacheable``: plain text the read cache may record as editable. ``full``: the whole
    resource, not a slice or a truncated view.
    """

    text: str | None = None
    parts: tuple[Part, ...] = ()
    cacheable: bool = True
    full: bool = True
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.text is None and not self.parts:
            raise ValueError("Resolved needs text or parts")


class URLScheme(Protocol):
    """What a scheme must provide. ``name`` is lowercase, without ``://``."""

    name: str
    read_only: bool

    async def resolve(self, url: ParsedURL, selector: Selector | None) -> Resolved:
        """The resource at ``url``. Raise URLError with a message the model can act on."""
        ...

    def tier_for(self, url: ParsedURL) -> Tier:
        """The approval tier touching ``url`` needs (read for most resources)."""
        ...


@runtime_checkable
class WritableScheme(URLScheme, Protocol):
    """A scheme whose resources can be written (``read_only`` false)."""

    async def write(self, url: ParsedURL, text: str) -> None: ...


@runtime_checkable
class LocatingScheme(URLScheme, Protocol):
    """A scheme that says which files a URL reaches, so path rules apply to it as to a path."""

    def locations(self, url: ParsedURL) -> list[str] | None:
        """The absolute paths reading or writing ``url`` touches ([] for none: kernel state),
        or None when that cannot be known before the URL is read."""
        ...


@runtime_checkable
class CompletingScheme(URLScheme, Protocol):
    """A scheme that offers completions for what follows ``scheme://``."""

    def complete(self, prefix: str) -> list[str]: ...


class URLError(ToolRefusal, AgentExtError):
    """A URL that cannot be served: the ``code`` a tool result carries and what to do next."""


class UnknownSchemeError(URLError):
    """No scheme of that name is registered; the message lists the ones that are."""

    def __init__(self, scheme: str, text: str, registered: list[str]) -> None:
        known = ", ".join(f"{name}://" for name in registered)
        listing = (f"Registered schemes: {known}." if known
                   else "No internal URL schemes are available in this session.")
        super().__init__(ErrorCode.INVALID_TOOL_PARAMS,
                         f"Unknown URL scheme {scheme!r} in {text!r}. {listing} For a file path, "
                         "leave out the scheme prefix.")
        self.scheme = scheme


class SchemeRegistrationError(AgentExtError):
    """A scheme definition is wrong; the message lists every problem at once."""


class URLRouter:
    """Maps scheme names to schemes and routes URLs to them. Thread-safe."""

    def __init__(self, schemes: Iterable[URLScheme] = ()) -> None:
        self._schemes: dict[str, URLScheme] = {}
        self._lock = threading.Lock()
        for scheme in schemes:
            self.register(scheme)

    def register(self, scheme: URLScheme, *, replace: bool = False) -> None:
        """Add ``scheme``. Raises SchemeRegistrationError listing every problem found."""
        name = getattr(scheme, "name", None)
        problems = []
        if not isinstance(name, str) or not _SCHEME_NAME.match(name):
            problems.append(f"name {name!r} must be lowercase letters, digits, '+' or '-', "
                            "two characters or more, starting with a letter")
        problems += [f"it has no {attr}()" for attr in ("resolve", "tier_for")
                     if not callable(getattr(scheme, attr, None))]
        if not isinstance(getattr(scheme, "read_only", None), bool):
            problems.append("read_only must be True or False")
        elif not scheme.read_only and not isinstance(scheme, WritableScheme):
            problems.append("it is not read_only but has no write()")
        with self._lock:
            if isinstance(name, str) and name in self._schemes and not replace:
                problems.append(f"scheme {name!r} is already registered (pass replace=True)")
            if problems:
                raise SchemeRegistrationError(
                    f"cannot register URL scheme {name!r}: " + "; ".join(problems))
            assert isinstance(name, str)
            self._schemes[name] = scheme

    def unregister(self, name: str) -> URLScheme | None:
        """Remove and return the scheme called ``name`` (None if there was none)."""
        with self._lock:
            return self._schemes.pop(name.lower(), None)

    def get(self, name: str) -> URLScheme | None:
        with self._lock:
            return self._schemes.get(name.lower())

    def names(self) -> list[str]:
        with self._lock:
            return sorted(self._schemes)

    def unpeeled(self) -> list[str]:
        """Schemes whose URLs may end in selector-shaped text (``peel_selectors = False``)."""
        with self._lock:
            return sorted(n for n, s in self._schemes.items()
                          if getattr(s, "peel_selectors", True) is False)

    def is_url(self, text: str) -> bool:
        """Whether ``text`` is a URL this router should answer for.

        Any ``scheme://`` text is (an unknown scheme gets a clear error); an opaque
        ``name:value`` only when ``name`` is registered, so ``notes:intro`` stays a path.
        """
        text = normalize_local(text.strip())
        scheme = extract_scheme(text)
        if scheme is None:
            return False
        return parse_url(text).hierarchical or self.get(scheme) is not None

    def lookup(self, text: str | ParsedURL) -> tuple[ParsedURL, URLScheme]:
        """The parsed URL and its scheme. Raises URLError or UnknownSchemeError."""
        try:
            url = text if isinstance(text, ParsedURL) else parse_url(text)
        except ValueError as err:
            raise URLError(ErrorCode.INVALID_TOOL_PARAMS, str(err)) from None
        scheme = self.get(url.scheme)
        if scheme is None:
            raise UnknownSchemeError(url.scheme, url.href, self.names())
        return url, scheme

    async def resolve(self, text: str | ParsedURL, selector: Selector | None = None) -> Resolved:
        """Read the resource at ``text`` through its scheme."""
        url, scheme = self.lookup(text)
        return await scheme.resolve(url, selector)

    async def write(self, text: str | ParsedURL, content: str) -> None:
        """Write ``content`` to the resource at ``text``. Read-only schemes refuse."""
        url, scheme = self.lookup(text)
        if scheme.read_only or not isinstance(scheme, WritableScheme):
            raise URLError(ErrorCode.FILE_WRITE_FAILURE,
                           f"{url.scheme}:// resources are read-only; {url.href!r} cannot be "
                           "written.")
        await scheme.write(url, content)

    def tier_for(self, text: str | ParsedURL) -> Tier:
        url, scheme = self.lookup(text)
        return scheme.tier_for(url)

    async def check_write(self, text: str | ParsedURL) -> None:
        """Raise URLError when a write to ``text`` would be refused, before anything of the
        resource is read for a diff (schemes with a ``check_write`` say; others accept)."""
        url, scheme = self.lookup(text)
        check = getattr(scheme, "check_write", None)
        if callable(check):
            await check(url)

    def locations(self, text: str | ParsedURL) -> list[str]:
        """What a tool reports as the locations of ``text``: the files its scheme says it
        reaches, or the address itself when the scheme cannot say (or is not a LocatingScheme).

        An address left among a call's locations is never taken for a path: the permission
        layer asks about it (``mcp://`` addresses name the server instead). Never raises.
        """
        try:
            url, scheme = self.lookup(text)
        except URLError:
            return [text.href if isinstance(text, ParsedURL) else text]
        found = None
        if isinstance(scheme, LocatingScheme):
            try:
                found = scheme.locations(url)
            except Exception:  # noqa: BLE001  a scheme that cannot tell is treated as unknown
                found = None
        return [url.href] if found is None else list(found)

    def complete(self, prefix: str) -> list[str]:
        """Completions: scheme names for a bare prefix, the scheme's own after ``scheme://``."""
        head, sep, rest = prefix.partition("://")
        if not sep:
            return [f"{n}://" for n in self.names() if n.startswith(prefix.lower())]
        scheme = self.get(head)
        if not isinstance(scheme, CompletingScheme):
            return []
        return [f"{head.lower()}://{value}" for value in scheme.complete(rest)]

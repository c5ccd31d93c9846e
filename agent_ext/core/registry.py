"""The tool registry: lazy loading, aliases, disabled tools, deferral and what the model is sent.

Deferred tools (external and plugin tools by default) are left out of ``declarations()``: the
model sees only their names in ``deferred_summary()`` and loads schemas with ``tool_search``,
which reveals them. Declarations come in a stable order (built-ins sorted, then external sorted)
so that provider prompt caches keep hitting. The profile (see ``profiles``) shapes what is sent:
``compact`` shortens every declaration and defers the tools named for it.
"""

from __future__ import annotations

import difflib
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol

from .errors import ToolLoadError, ToolRegistrationError, UnknownToolError
from .naming import external_name, is_valid_name, split_external
from .plugins import import_attribute
from .profiles import SUMMARY_CHARS, Profile, check_profile, shaped
from .search import SearchDoc, SearchIndex, SearchOutcome
from .tool import Tool, ToolDeclaration

AnyTool = Tool[Any]
Factory = Callable[[], AnyTool]


@dataclass
class _Entry:
    name: str
    factory: Factory | None = None
    tool: AnyTool | None = None
    #: What is known before loading; the loaded tool's own attributes win afterwards.
    defer: bool | None = None
    server: str | None = None
    #: The name the tool had before it was made valid and unique (external tools).
    original: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    loading: Future[AnyTool] | None = None

    @property
    def external(self) -> bool:
        return (self.tool.server if self.tool is not None else self.server) is not None


class Searcher(Protocol):
    """What ranks tools for ``tool_search``: :class:`SearchIndex` or a plug-in backend."""

    def search(self, query: str, limit: int = 5) -> SearchOutcome: ...


#: Builds a searcher over the docs of the tools to search.
SearchBackend = Callable[[list[SearchDoc]], Searcher]


class Registry:
    """The tools of one session, by registered name."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}
        self._aliases: dict[str, str] = {}
        self._disabled: set[str] = set()
        self._revealed: set[str] = set()
        self._profile: Profile = "default"
        self._profile_deferred: dict[Profile, frozenset[str]] = {}
        self._version = 0
        # The search indexes, by whether they cover every tool, with the version they are of.
        self._indexes: dict[bool, tuple[int, Searcher]] = {}
        self._backend: SearchBackend = SearchIndex
        self._search_notice: str | None = None
        self._mutex = threading.RLock()
        #: Tools a permission policy keeps out of the model's view (a bare-name deny rule).
        #: Unlike disabled tools they stay callable, so a call gets the policy's reason.
        self.hidden: Callable[[str], bool] = _never

    # -- registration -------------------------------------------------------------------------

    def register(self, tool: AnyTool, *, aliases: Iterable[str] = ()) -> str:
        """Register a built-in or user tool under its own name; returns that name."""
        problems = tool.problems()
        if tool.name and not is_valid_name(tool.name):
            problems.append(f"name {tool.name!r} must match [A-Za-z0-9_-]{{1,64}}")
        if tool.server is not None:
            problems.append("external tools are registered with register_external()")
        self._raise_if(tool.name or type(tool).__name__, problems)
        self._add(_Entry(tool.name, tool=tool), aliases)
        return tool.name

    def register_lazy(self, name: str, factory: Factory | str, *, defer: bool = False,
                      server: str | None = None, aliases: Iterable[str] = ()) -> str:
        """Register a tool that is imported on first use.

        ``factory`` is a zero-argument callable returning the tool, or ``"module:attr"`` where
        ``attr`` is a tool class, a tool instance or such a callable.
        """
        if not is_valid_name(name):
            self._raise_if(name, [f"name {name!r} must match [A-Za-z0-9_-]{{1,64}}"])
        load = _import_factory(factory) if isinstance(factory, str) else factory
        self._add(_Entry(name, factory=load, defer=defer, server=server), aliases)
        return name

    def register_external(self, server: str, tool: AnyTool) -> str:
        """Register a tool from an MCP server or plugin as ``mcp__<server>__<tool>``, deferred.

        The name is made valid (charset, length with middle elision) and unique; the tool's
        ``name`` attribute is set to the registered name.
        """
        self._raise_if(tool.name or server, [p for p in tool.problems() if "name" not in p])
        with self._mutex:
            original = f"{server}__{tool.name}"
            name = external_name(server, tool.name, self._entries.keys() | self._aliases.keys())
            tool.name = name
            tool.server = server
            self._add(_Entry(name, tool=tool, server=server, original=original), ())
        return name

    def unregister(self, name: str) -> None:
        with self._mutex:
            canonical = self.resolve(name)
            if canonical is None:
                raise UnknownToolError(name)
            del self._entries[canonical]
            self._revealed.discard(canonical)
            for alias in [a for a, target in self._aliases.items() if target == canonical]:
                del self._aliases[alias]
            self._changed()

    def unregister_server(self, server: str) -> list[str]:
        """Remove every tool of ``server`` (and its reveal marks); returns the removed names."""
        with self._mutex:
            names = [e.name for e in self._entries.values()
                     if (e.tool.server if e.tool else e.server) == server]
            for name in names:
                self.unregister(name)
            return names

    def add_alias(self, alias: str, target: str) -> None:
        """Let ``alias`` (any case) stand for ``target``: other agents' names for our tools."""
        with self._mutex:
            key = alias.lower()
            if key in {n.lower() for n in self._entries}:
                raise ToolRegistrationError(f"alias {alias!r} is already a tool name")
            self._aliases[key] = target
            self._changed()

    def _add(self, entry: _Entry, aliases: Iterable[str]) -> None:
        with self._mutex:
            if entry.name.lower() in {n.lower() for n in self._entries} | self._aliases.keys():
                raise ToolRegistrationError(f"a tool named {entry.name!r} is already registered")
            self._entries[entry.name] = entry
            for alias in aliases:
                self._aliases[alias.lower()] = entry.name
            self._changed()

    @staticmethod
    def _raise_if(name: str, problems: list[str]) -> None:
        if problems:
            raise ToolRegistrationError(f"cannot register tool {name!r}: " + "; ".join(problems))

    def _changed(self) -> None:
        with self._mutex:
            self._version += 1

    def refresh(self) -> None:
        """Note an outside change (e.g. to ``hidden``) that alters what the model may see."""
        with self._mutex:
            self._changed()

    # -- profile --------------------------------------------------------------------------------

    @property
    def profile(self) -> Profile:
        """What the model is shown: ``"default"``, or ``"compact"`` for small windows."""
        return self._profile

    def set_profile(self, profile: str) -> None:
        """Switch profile; declarations and the deferred summary follow, reveals are kept."""
        checked = check_profile(profile)
        with self._mutex:
            if checked != self._profile:
                self._profile = checked
                self._changed()

    def defer_in_profile(self, profile: str, names: Iterable[str]) -> None:
        """Defer these tools (by registered name) while ``profile`` is the profile."""
        checked = check_profile(profile)
        with self._mutex:
            self._profile_deferred[checked] = (self._profile_deferred.get(checked, frozenset())
                                               | frozenset(names))
            self._changed()

    @property
    def version(self) -> int:
        """Bumped on every change that can alter declarations or search results."""
        return self._version

    # -- lookup ---------------------------------------------------------------------------------

    def resolve(self, name: str) -> str | None:
        """The registered name for ``name`` or an alias of it (aliases are case-insensitive)."""
        if name in self._entries:
            return name
        target = self._aliases.get(name.lower())
        if target is not None and target in self._entries:
            return target
        lowered = {n.lower(): n for n in self._entries}
        return lowered.get(name.lower())

    def get(self, name: str) -> AnyTool:
        """The tool, loading it if needed. Disabled tools are unknown."""
        canonical = self.resolve(name)
        if canonical is None or self.is_disabled(canonical):
            raise UnknownToolError(name, self.suggest(name))
        return self._load(self._entries[canonical])

    def suggest(self, name: str, n: int = 3) -> list[str]:
        """Close names, for "did you mean" messages."""
        names = [e for e in self._entries if not self.is_disabled(e)]
        pool = {x.lower(): x for x in names} | {a: self._aliases[a] for a in self._aliases}
        close = difflib.get_close_matches(name.lower(), list(pool), n=n * 2, cutoff=0.6)
        out: list[str] = []
        for key in close:
            target = pool[key]
            if target in self._entries and target not in out and not self.is_disabled(target):
                out.append(target)
        return out[:n]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.resolve(name) is not None

    def names(self) -> list[str]:
        """Every enabled tool's registered name, in declaration order."""
        return [e.name for e in self._ordered() if not self.is_disabled(e.name)]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def _load(self, entry: _Entry) -> AnyTool:
        """Load once; concurrent first uses wait for the same load; failures raise every time."""
        with entry.lock:
            if entry.tool is not None:
                return entry.tool
            pending = entry.loading
            owner = pending is None
            if pending is None:
                pending = entry.loading = Future()
        if not owner:
            return pending.result()
        try:
            assert entry.factory is not None
            made: object = entry.factory()
            if not isinstance(made, Tool):
                raise TypeError(f"factory returned {type(made).__name__}, not a Tool")
            tool = made
            problems = tool.problems()
            if problems:
                raise ToolRegistrationError("; ".join(problems))
            tool.name = entry.name
            if entry.server is not None and tool.server is None:
                tool.server = entry.server
            if entry.defer is not None and not tool.defer:
                tool.defer = entry.defer
        except BaseException as exc:
            error = ToolLoadError(entry.name, exc)
            with entry.lock:
                entry.loading = None
            pending.set_exception(error)
            raise error from exc
        with entry.lock:
            entry.tool = tool
            entry.loading = None
        pending.set_result(tool)
        self._changed()
        return tool

    def warm_all(self) -> list[ToolLoadError]:
        """Load every lazy tool now; returns the failures (each also keeps raising on use)."""
        failures = []
        for entry in list(self._entries.values()):
            try:
                self._load(entry)
            except ToolLoadError as exc:
                failures.append(exc)
        return failures

    # -- disabled and deferred ------------------------------------------------------------------

    def disable(self, name: str) -> None:
        """Hide a tool from the model and refuse calls to it (by name, alias or original name)."""
        with self._mutex:
            self._disabled.add(name.lower())
            self._changed()

    def enable(self, name: str) -> None:
        with self._mutex:
            self._disabled.discard(name.lower())
            canonical = self.resolve(name)
            if canonical is not None:
                self._disabled -= {n.lower() for n in self._names_of(canonical)}
            self._changed()

    def _names_of(self, canonical: str) -> set[str]:
        entry = self._entries[canonical]
        names = {canonical}
        names |= {a for a, t in self._aliases.items() if t == canonical}
        if entry.original:
            server, _, tool = entry.original.partition("__")
            names |= {entry.original, tool, f"mcp__{server}__{tool}"}
        return names

    def is_disabled(self, name: str) -> bool:
        """Checked against every name the tool goes by, so a rename cannot slip past it."""
        if not self._disabled:
            return False
        canonical = self.resolve(name)
        names = self._names_of(canonical) if canonical is not None else {name}
        return any(n.lower() in self._disabled for n in names)

    def is_deferred(self, name: str) -> bool:
        """Deferred and not always-loaded (revealed or not)."""
        canonical = self.resolve(name)
        if canonical is None:
            raise UnknownToolError(name)
        entry = self._entries[canonical]
        by_profile = canonical in self._profile_deferred.get(self._profile, ())
        if entry.tool is not None:
            return (entry.tool.defer or by_profile) and not entry.tool.always_load
        return bool(entry.defer) or by_profile

    def is_external(self, name: str) -> bool:
        canonical = self.resolve(name)
        return canonical is not None and self._entries[canonical].external

    @property
    def revealed(self) -> frozenset[str]:
        return frozenset(self._revealed)

    def reveal(self, names: Iterable[str]) -> list[str]:
        """Mark deferred tools as revealed so their declarations are sent; returns those added."""
        added = []
        with self._mutex:
            for name in names:
                canonical = self.resolve(name)
                if canonical is None:
                    raise UnknownToolError(name, self.suggest(name))
                if self.is_deferred(canonical) and canonical not in self._revealed:
                    self._revealed.add(canonical)
                    added.append(canonical)
            if added:
                self._changed()
        return added

    def unreveal(self, names: Iterable[str] | None = None) -> None:
        """Hide revealed tools again (all of them when ``names`` is None, as on a reset)."""
        with self._mutex:
            if names is None:
                self._revealed.clear()
            else:
                self._revealed -= {c for n in names if (c := self.resolve(n)) is not None}
            self._changed()

    def listed(self, name: str) -> bool:
        """Whether the model may learn of this tool at all (not disabled, not hidden)."""
        return not self.is_disabled(name) and not self.hidden(name)

    def visible(self, name: str) -> bool:
        """Whether the model currently has this tool's declaration."""
        canonical = self.resolve(name)
        if canonical is None or not self.listed(canonical):
            return False
        return not self.is_deferred(canonical) or canonical in self._revealed

    # -- what the model sees ----------------------------------------------------------------------

    def _ordered(self) -> list[_Entry]:
        entries = list(self._entries.values())
        return sorted(entries, key=lambda e: (e.external, e.name))

    def declarations(self) -> list[ToolDeclaration]:
        """Exactly what the model is sent: built-ins sorted, then external sorted."""
        profile = self._profile
        return [shaped(self._load(e).declaration(), profile)
                for e in self._ordered() if self.visible(e.name)]

    def deferred(self) -> list[str]:
        """Names of deferred, enabled tools (revealed ones included), in declaration order."""
        return [e.name for e in self._ordered()
                if self.listed(e.name) and self.is_deferred(e.name)]

    def deferred_summary(self) -> str:
        """The names of tools not yet revealed, for the system prompt; empty when there are none.

        External tools are grouped by server as ``mcp__srv__{a,b}`` where that is shorter. When
        the listing would pass the profile's budget (``profiles.SUMMARY_CHARS``), servers are
        cut to as many names each as fit, with a count of the rest; tool_search finds them all.
        Other tools are always listed in full.
        """
        hidden = [n for n in self.deferred() if n not in self._revealed]
        if not hidden:
            return ""
        groups: dict[str, list[str]] = {}
        plain: list[str] = []
        for name in hidden:
            parts = split_external(name)
            if parts is None:
                plain.append(name)
            else:
                groups.setdefault(f"mcp__{parts[0]}__", []).append(parts[1])
        head = [", ".join(plain)] if plain else []
        budget = SUMMARY_CHARS[self._profile]
        lines = _server_lines(groups, None)
        cut = len("\n".join(head + lines)) > budget
        if cut:
            # The most names per server that fit: servers with fewer are listed in full.
            most = max((len(t) for t in groups.values()), default=0)
            shown = 0
            for per_server in range(1, most + 1):
                if len("\n".join(head + _server_lines(groups, per_server))) > budget:
                    break
                shown = per_server
            lines = _server_lines(groups, shown)
        note = (" Lists ending \"+N more\" are cut short: find the rest with tool_search "
                "keywords." if cut else "")
        return (
            "Deferred tools: call tool_search to load a schema before use "
            f"(`mcp__srv__{{a,b}}` means mcp__srv__a and mcp__srv__b).{note}\n"
            + "\n".join(head + lines)
        )

    # -- search ---------------------------------------------------------------------------------

    def _searchable(self, everything: bool) -> list[tuple[str, _Entry]]:
        """(name, entry) of the tools a search covers: deferred ones, or all not hidden."""
        with self._mutex:
            names = ([n for n in self.names() if not self.hidden(n)] if everything
                     else self.deferred())
            return [(name, self._entries[name]) for name in names]

    @property
    def search_backend(self) -> SearchBackend:
        """What builds the searcher: :class:`SearchIndex` unless a backend was set."""
        return self._backend

    @search_backend.setter
    def search_backend(self, backend: SearchBackend) -> None:
        with self._mutex:
            self._backend = backend
            self._indexes.pop(False, None)

    @property
    def search_is_local(self) -> bool:
        """Whether searching is the pure-Python index, quick enough to run on the event loop."""
        return self._backend is SearchIndex

    def search(self, query: str, limit: int = 5, *, everything: bool = False) -> SearchOutcome:
        """Rank tools for ``query``: deferred ones (revealed too), or all with ``everything``.

        ``everything`` (the catalogue a user browses as they type) always uses the pure-Python
        index, kept until the tools change, so each keystroke is answered in about a
        millisecond; the backend serves ``tool_search``.
        """
        try:
            return self._search_index(everything).search(query, limit)
        except ToolLoadError:
            raise
        except Exception as exc:
            if everything or self.search_is_local:
                raise
            self._fall_back(exc)
            return self._search_index(everything).search(query, limit)

    def _fall_back(self, exc: Exception) -> None:
        """A plugged backend failed (a broken install, no memory): the pure-Python index serves
        from now on, and ``pop_search_notice`` says so once."""
        with self._mutex:
            self._backend = SearchIndex
            self._indexes.pop(False, None)
            self._search_notice = (f"The tool search backend failed ({type(exc).__name__}: "
                                   f"{exc}); the pure-Python search answers from now on.")

    def pop_search_notice(self) -> str | None:
        """The notice of a backend that failed and was replaced, once; then None."""
        with self._mutex:
            notice, self._search_notice = self._search_notice, None
            return notice

    def _search_index(self, everything: bool) -> Searcher:
        with self._mutex:
            cached = self._indexes.get(everything)
            if cached is not None and cached[0] == self._version:
                return cached[1]
        settled = False
        for _ in range(3):
            entries = self._searchable(everything)
            tools = [(name, self._load(entry)) for name, entry in entries]
            with self._mutex:
                # Loading a lazy tool bumps the version, so the version is read after the loads;
                # the names are read again to see whether a tool came or went meanwhile.
                version = self._version
                backend: SearchBackend = SearchIndex if everything else self._backend
                if [name for name, _ in self._searchable(everything)] == [n for n, _ in entries]:
                    settled = True
                    break
        index = backend([SearchDoc(name=name, description=tool.description,
                                   search_hint=tool.search_hint, server=tool.server,
                                   parameters=tool.parameters_schema())
                         for name, tool in tools])
        if settled:
            with self._mutex:
                if self._version == version and (everything or self._backend is backend):
                    self._indexes[everything] = (version, index)
        return index


def _import_factory(spec: str) -> Factory:
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ToolRegistrationError(f"lazy tool {spec!r} must be written 'module:attribute'")

    def load() -> AnyTool:
        obj = import_attribute(module_name, attr)
        if isinstance(obj, Tool):
            return obj
        made = obj()
        if not isinstance(made, Tool):
            raise TypeError(f"{spec} produced {type(made).__name__}, not a Tool")
        return made

    return load


def _server_lines(groups: dict[str, list[str]], per_server: int | None) -> list[str]:
    """One line per server, each cut to ``per_server`` names (None: all) plus a count."""
    lines = []
    for prefix, tools in groups.items():
        kept = tools if per_server is None else tools[:per_server]
        more = len(tools) - len(kept)
        if not kept:
            lines.append(f"{prefix}* +{more} more")
            continue
        grouped = prefix + "{" + ",".join(kept) + "}"
        flat = ", ".join(prefix + t for t in kept)
        line = grouped if len(grouped) < len(flat) else flat
        lines.append(f"{line} +{more} more" if more else line)
    return lines


def _never(_name: str) -> bool:
    return False

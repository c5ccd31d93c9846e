"""``var://``: the kernel's user variables, like ``%whos``; ``var://df`` one of them in detail.

The model sees what the user has loaded (a DataFrame's shape, dtypes and head; an array's shape)
without running code for it. Any object may run code when inspected, so every call into user code
is time-boxed in a worker thread and its text cut (``_guard``): a ``__repr__`` that sleeps or
raises costs at most half a second, and a listing at most two.
"""

from __future__ import annotations

import asyncio
import difflib
import threading
import time
import types
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING
from urllib.parse import unquote

from agent_ext.core.errors import ErrorCode
from agent_ext.urls.parse import ParsedURL
from agent_ext.urls.router import Resolved, URLError

from ._guard import guarded, guarded_text
from ._values import details, summary, type_name
from .base import SchemeBase, cap, select_lines, target_of

if TYPE_CHECKING:
    from agent_ext.fs.selectors import Selector

HIDDEN = frozenset({"In", "Out", "exit", "quit", "get_ipython"})
LIST_BUDGET = 2.0
CALL_TIMEOUT = 0.5
MAX_ROWS = 500
MAX_CHARS = 30_000
_Row = tuple[str, str, str]


class VariableScheme(SchemeBase):
    """The user namespace, listed or one name (dotted attributes allowed) in detail."""

    name = "var"

    def locations(self, url: ParsedURL) -> list[str] | None:
        return []  # the user namespace: no file

    async def resolve(self, url: ParsedURL, selector: Selector | None) -> Resolved:
        ns = self.kernel().user_namespace()
        target = unquote(target_of(url)).strip("/")
        text = await asyncio.to_thread(describe if target else listing, ns, target)
        label = f"var://{target}"
        body, whole = select_lines(text, selector, label=label)
        body, cut = cap(body, MAX_CHARS, more=label)
        return Resolved(text=body, cacheable=False, full=whole and not cut)

    def complete(self, prefix: str) -> list[str]:
        try:
            names = [n for n, _ in _items(self.kernel().user_namespace())]
        except URLError:
            return []
        return sorted(n for n in names if n.startswith(prefix) and _shown(n, None))


def listing(ns: Mapping[str, object], _: str = "") -> str:
    """The visible variables as an aligned table: name, type, summary."""
    items = [(n, v) for n, v in _items(ns) if _shown(n, v)]
    items.sort(key=lambda item: item[0].lower())
    more = len(items) - MAX_ROWS
    rows = _rows(items[:MAX_ROWS])
    head = (f"Kernel variables: {len(items)} (names starting with _, modules and IPython's own "
            "are hidden). See one in detail with read_file var://<name>.")
    if not rows:
        return "No user variables are defined in the kernel yet."
    wide_name = min(24, max(len(r[0]) for r in rows))
    wide_type = min(24, max(len(r[1]) for r in rows))
    lines = [head, f"{'name':<{wide_name}}  {'type':<{wide_type}}  summary"]
    lines += [f"{n:<{wide_name}}  {t:<{wide_type}}  {s}".rstrip() for n, t, s in rows]
    if more > 0:
        lines.append(f"[{more} more not listed; name one with var://<name>]")
    return "\n".join(lines)


def describe(ns: Mapping[str, object], target: str) -> str:
    """One variable (``df`` or ``model.config``) in detail."""
    name, *attrs = target.split(".")
    found = dict(_items(ns))
    if name not in found:
        close = difflib.get_close_matches(name, [n for n in found if _shown(n, None)], n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise URLError(ErrorCode.FILE_NOT_FOUND,
                       f"No variable {name!r} in the kernel.{hint} List them with read_file "
                       "var://.")
    value = found[name]
    path = name
    for attr in attrs:
        got = guarded(_getter(value, attr), CALL_TIMEOUT)
        if not got.ok:
            raise URLError(ErrorCode.READ_CONTENT_FAILURE,
                           f"Could not read {path}.{attr}: {got.problem}.")
        value = got.value
        path = f"{path}.{attr}"

    def call(fn: Callable[[], object], limit: int) -> str:
        return guarded_text(fn, CALL_TIMEOUT, limit)

    lines = guarded(lambda: details(value, call), CALL_TIMEOUT * 12)
    if not lines.ok or lines.value is None:
        return f"{path}\n<could not be described: {lines.problem}>"
    return "\n".join([path, *lines.value])


def _getter(value: object, attr: str) -> Callable[[], object]:
    return lambda: getattr(value, attr)


def _items(ns: Mapping[str, object]) -> list[tuple[str, object]]:
    """A copy of the namespace's items (the kernel may change it while we read)."""
    for _ in range(5):
        try:
            return [(k, v) for k, v in list(ns.items()) if isinstance(k, str)]
        except RuntimeError:
            continue
    return []


def _shown(name: str, value: object) -> bool:
    if name.startswith("_") or name in HIDDEN:
        return False
    return not issubclass(type(value), types.ModuleType)


def _rows(items: list[tuple[str, object]]) -> list[_Row]:
    """Summaries made in workers within LIST_BUDGET; a value that hangs is skipped."""
    rows: list[_Row | None] = [None] * len(items)
    deadline = time.monotonic() + LIST_BUDGET
    generation = [0]
    start = 0
    while start < len(items):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        reached = [start]
        generation[0] += 1
        mine = generation[0]
        lock = threading.Lock()

        def work(first: int = start, me: int = mine, at: list[int] = reached,
                 guard: threading.Lock = lock) -> None:
            for k in range(first, len(items)):
                with guard:
                    if generation[0] != me:
                        return
                    at[0] = k
                rows[k] = _row(*items[k])
            at[0] = len(items)

        outcome = guarded(work, remaining)
        if outcome.ok:
            break
        with lock:
            stuck = reached[0]
            generation[0] += 1
        if stuck >= len(items):
            break
        rows[stuck] = (items[stuck][0], "?", f"<{outcome.problem}>")
        start = stuck + 1
    return [row if row is not None else (items[i][0], "?", "<not examined: time budget used up>")
            for i, row in enumerate(rows)]


def _row(name: str, value: object) -> _Row:
    try:
        return name, type_name(value), summary(value)
    except Exception as err:  # noqa: BLE001  user code may raise anything
        return name, "?", f"<summary raised {type(err).__name__}>"

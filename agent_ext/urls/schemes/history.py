"""``history://``: the kernel's input history, by execution count.

``history://`` shows the last inputs; ``history://12`` input 12; ``history://:10-20`` inputs
10 to 20; ``history://:-5`` the last five. The user says "what I ran in [12]", the model reads it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import unquote

from agent_ext.core.errors import ErrorCode
from agent_ext.urls.parse import ParsedURL
from agent_ext.urls.router import Resolved, URLError

from .base import SchemeBase, target_of

if TYPE_CHECKING:
    from agent_ext.fs.selectors import Selector

DEFAULT_LAST = 50
MAX_CHARS = 30_000
_HOST = re.compile(r"^\[?(\d+)(?:-(\d+))?\]?$")


class HistoryScheme(SchemeBase):
    """The input history, selected by execution count."""

    name = "history"

    def locations(self, url: ParsedURL) -> list[str] | None:
        return []  # the kernel's input history: no file

    async def resolve(self, url: ParsedURL, selector: Selector | None) -> Resolved:
        kernel = self.kernel()
        target = unquote(target_of(url))
        spans: list[tuple[int, int | None]] = []
        last: int | None = None
        if target:
            found = _HOST.match(target)
            if found is None:
                raise URLError(ErrorCode.INVALID_TOOL_PARAMS,
                               f"history://{target} is not an input number; write history://12, "
                               "history://:10-20 or history://:-5.")
            first = int(found[1])
            spans.append((first, int(found[2]) if found[2] else first))
        if selector is not None and selector.tail is not None:
            last = selector.tail
        elif selector is not None:
            spans.extend((r.start, r.end) for r in selector.ranges)
        chosen = not spans and last is None
        entries = kernel.input_history(last if last is not None else (
            DEFAULT_LAST if chosen else None))
        if spans:
            entries = [(n, s) for n, s in entries
                       if any(a <= n and (b is None or n <= b) for a, b in spans)]
        if not entries:
            return Resolved(text="No inputs match." if spans or last else
                            "The input history is empty.", cacheable=False)
        blocks = [f"In [{n}]:\n{source.rstrip()}" for n, source in entries]
        kept = _fit(blocks)
        dropped = len(blocks) - len(kept)
        notes = []
        if dropped:
            notes.append(f"[{dropped} older input(s) left out to fit {MAX_CHARS:,} characters; "
                         f"ask for fewer, e.g. history://:{entries[dropped][0]}-"
                         f"{entries[-1][0]}]")
        if chosen:
            notes.append(f"[The last {len(entries)} inputs. Others: history://:-200 (the last "
                         "200), history://:10-20 (inputs 10 to 20).]")
        return Resolved(text="\n\n".join([*kept, *notes]), cacheable=False,
                        full=not dropped and not chosen)


def _fit(blocks: list[str]) -> list[str]:
    """The newest blocks that fit in MAX_CHARS (at least one, cut if it must be)."""
    kept: list[str] = []
    used = 0
    for block in reversed(blocks):
        if used + len(block) + 2 > MAX_CHARS:
            if not kept:
                kept.append(block[:MAX_CHARS] + "\n[input cut]")
            break
        kept.append(block)
        used += len(block) + 2
    return kept[::-1]

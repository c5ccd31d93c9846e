"""What the session-bound schemes share: the base class, line selectors and caps.

``var://`` and ``history://`` here and the notebook's ``nb://``, ``cell://`` and ``out://``
(``agent_ext.notebook.schemes``) build on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_ext.core.errors import ErrorCode
from agent_ext.core.kernel import KernelProvider, kernel_of
from agent_ext.core.kinds import Tier
from agent_ext.urls.parse import ParsedURL
from agent_ext.urls.router import URLError

if TYPE_CHECKING:
    from agent_ext.core.tool import ToolContext
    from agent_ext.fs.selectors import Selector


class SchemeBase:
    """A scheme bound to the session's services (looked up at each use, so the host may add
    its kernel after the schemes are registered)."""

    name = ""
    read_only = True

    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx

    def tier_for(self, url: ParsedURL) -> Tier:
        return Tier.READ

    def locations(self, url: ParsedURL) -> list[str] | None:
        """The files ``url`` reaches; a scheme that does not say is treated as unknown."""
        return None

    def kernel(self) -> KernelProvider:
        """The session's kernel; raises URLError outside a kernel."""
        found = kernel_of(self.ctx.services)
        if found is None:
            raise URLError(ErrorCode.READ_CONTENT_FAILURE,
                           f"{self.name}:// needs a running kernel, and this session has none. "
                           "It works when the agent runs inside a notebook (%load_ext agent_ext).")
        return found


def target_of(url: ParsedURL) -> str:
    """Everything after ``scheme://``, without query or fragment."""
    return (url.host + url.path).strip()


def select_lines(text: str, selector: Selector | None, *, label: str) -> tuple[str, bool]:
    """The lines of ``text`` a selector picks (``:10-20``, ``:-5``), and whether that is all of it.

    Raises URLError when the selector lies past the end.
    """
    if selector is None or not selector.has_lines:
        return text, True
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    ranges = selector.resolve(len(lines))
    if not ranges:
        raise URLError(ErrorCode.INVALID_TOOL_PARAMS,
                       f"{label} has {len(lines)} line(s); :{selector.text} starts past the end.")
    picked = ["\n".join(lines[a - 1:b]) for a, b in ranges]
    whole = ranges == [(1, len(lines))]
    return "\n...\n".join(picked), whole


def cap(text: str, limit: int, *, more: str) -> tuple[str, bool]:
    """``text`` cut to ``limit`` characters at a line end, with ``more`` saying how to read on."""
    if len(text) <= limit:
        return text, False
    cut = text.rfind("\n", 0, limit)
    cut = cut if cut > limit // 2 else limit
    shown = text[:cut]
    line = shown.count("\n") + 2
    return (f"{shown}\n[cut at {cut:,} of {len(text):,} characters. Read on with "
            f"{more}:{line}-{line + 400}]"), True

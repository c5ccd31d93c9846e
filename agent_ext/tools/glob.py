"""glob: find files by name pattern, recently modified first.

Matching is case-insensitive and includes dotfiles; only regular files are returned, symlinks
are not followed, ``.git`` and paths ignored by ignore files (as grep sees them) prune the walk.
Files changed in the last 24 hours come first, newest first, so the model finds what is being
worked on; the rest follow alphabetically. Paths are relative to the working directory
(absolute outside it), like grep's.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
import time
from pathlib import Path

from pydantic import Field

from agent_ext.core import (
    ErrorCode,
    ExecControl,
    Kind,
    Params,
    Tool,
    ToolContext,
    ToolInvocation,
    ToolResult,
)
from agent_ext.urls import parse_path_arg

from ._ignore import GlobError, ReadDenied, Walk, glob_regex
from ._render import under_cwd

#: Files shown at most; collection stops at COLLECT_LIMIT matches.
SHOW_LIMIT = 100
COLLECT_LIMIT = 1_000
RECENT_SECONDS = 24 * 3600
DEFAULT_TIMEOUT = 30.0
_MAGIC = re.compile(r"[*?\[\]{}]")
_NULLISH = {"null", "none", "undefined"}


class GlobParams(Params):
    pattern: str = Field(min_length=1)
    path: str | None = Field(default=None, description="Directory to search in.")


class GlobTool(Tool[GlobParams]):
    name = "glob"
    description = (
        "Find files by path pattern, such as **/*.py or src/*.ts. Skips .gitignored files; "
        f"returns up to {SHOW_LIMIT} paths, newest first.")
    kind = Kind.SEARCH
    params_model = GlobParams
    read_only = True
    search_hint = "find files names paths pattern wildcard list"

    def __init__(self, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.timeout = timeout

    def check(self, params: GlobParams, ctx: ToolContext) -> str | None:
        try:
            root = _root(params, ctx)
            _split(params.pattern, root)
        except GlobError as err:
            return f"`pattern`: {err}"
        except ValueError as err:
            return f"`path`: {err}"
        if not root.exists():
            return (f"`path` {params.path!r} does not exist ({root}). Check it with ls, or leave "
                    "path out to search the working directory.")
        if not root.is_dir():
            return (f"`path` {params.path!r} is a file, not a directory; give its directory, "
                    "or read the file with read_file.")
        return None

    def invocation(self, params: GlobParams, ctx: ToolContext) -> ToolInvocation[GlobParams]:
        root = _root(params, ctx)
        return GlobInvocation(self, params, ctx, root, _split(params.pattern, root)[0])


def _root(params: GlobParams, ctx: ToolContext) -> Path:
    text = params.path
    if text is None or (text.strip().lower() in _NULLISH and not (ctx.cwd / text).exists()):
        return Path(os.path.normpath(ctx.cwd))
    arg = parse_path_arg(text, ctx.cwd)
    if arg.path is None:
        raise ValueError(f"{text!r} is an internal URL; glob searches directories only.")
    return arg.path


def _split(pattern: str, root: Path) -> tuple[Path, str, re.Pattern[str] | None]:
    """(walk base, pattern relative to it, regex); no regex for an existing literal file path.

    The walk starts below the pattern's literal leading directories; matching is
    case-insensitive.
    """
    text = pattern.strip().removeprefix("./")
    literal = Path(text) if Path(text).is_absolute() else root / text
    if literal.is_file():
        return literal.parent, literal.name, None
    parts = Path(text).parts
    fixed = 0
    while fixed < len(parts) - 1 and not _MAGIC.search(parts[fixed]):
        fixed += 1
    base = Path(*parts[:fixed]) if fixed else Path()
    rest = "/".join(parts[fixed:])
    regex = re.compile(f"(?s:{glob_regex(rest)})\\Z", re.IGNORECASE)
    return Path(os.path.normpath(root / base)), rest, regex


class GlobInvocation(ToolInvocation[GlobParams]):
    """One glob call: its directory, the walk, and the listing."""

    def __init__(self, tool: GlobTool, params: GlobParams, ctx: ToolContext, root: Path,
                 base: Path) -> None:
        super().__init__(tool, params, ctx)
        self.glob = tool
        self.root = root
        #: Where the walk starts: ``root``, or the pattern's own leading directories.
        self.base = base

    def description(self) -> str:
        return f"glob {self.params.pattern!r} in {self.params.path or '.'}"

    def locations(self) -> list[Path]:
        return [self.base]

    async def execute(self, control: ExecControl) -> ToolResult:
        try:
            return await asyncio.to_thread(self._run, control.cancelled)
        except (OSError, GlobError, ValueError) as err:
            return ToolResult.fail(ErrorCode.GLOB_EXECUTION_ERROR,
                                   f"glob failed: {err}. Check the pattern and path, then retry.")

    def _run(self, cancelled: threading.Event) -> ToolResult:
        base, rest, regex = _split(self.params.pattern, self.root)
        found, walk = self._collect(base, rest, regex, cancelled)
        denied = self.ctx.services.get(ReadDenied)
        hidden = 0
        if callable(denied):
            kept = [p for p in found if not denied(Path(p))]
            hidden, found = len(found) - len(kept), kept
        return ToolResult(llm_content=self._render(found, hidden, walk))

    def _collect(self, base: Path, rest: str, regex: re.Pattern[str] | None,
                 cancelled: threading.Event) -> tuple[list[str], Walk | None]:
        if regex is None:
            target = base / rest
            return ([str(target)] if target.is_file() and not target.is_symlink() else []), None
        if not base.is_dir():
            return [], None
        deadline = time.monotonic() + self.glob.timeout
        depth = None if "**" in rest else rest.count("/") + 1
        walk = Walk(base, hidden=True, skip_git_dir=True, max_depth=depth,
                    stop=lambda: cancelled.is_set() or time.monotonic() > deadline)
        prefix = len(str(base).rstrip(os.sep)) + 1
        found: list[str] = []
        for path in walk.files():
            if regex.match(path[prefix:].replace(os.sep, "/")):
                found.append(path)
                if len(found) >= COLLECT_LIMIT:
                    break
        return found, walk

    def _render(self, found: list[str], hidden: int, walk: Walk | None) -> str:
        where = self._where()
        pattern = self.params.pattern
        notes = [f"{hidden} result(s) hidden by permission rules."] if hidden else []
        if walk is not None and walk.stopped:
            notes.append("The walk did not finish (timed out or cancelled): the list may be "
                         "incomplete. Narrow the pattern or path.")
        if walk is not None and walk.errors:
            notes.append(f"{len(walk.errors)} director(ies) could not be read, e.g. "
                         f"{walk.errors[0]}.")
        if not found:
            hint = ""
            if "/" not in pattern and "**" not in pattern:
                hint = f' To match at any depth, use "**/{pattern}".'
            parts = [f'No files found matching pattern "{pattern}" {where}.{hint}', *notes]
            if not notes:
                parts.append("(.git and paths ignored by .gitignore are skipped.)")
            return " ".join(parts)
        ordered = self._sorted(found)
        capped = len(found) >= COLLECT_LIMIT
        count = f"at least {len(found)}" if capped else str(len(found))
        header = (f'Found {count} file(s) matching "{pattern}" {where} (paths relative to the '
                  "working directory; files modified in the last 24 hours first, newest first, "
                  "then A-Z):")
        shown = ordered[:SHOW_LIMIT]
        if capped:
            notes.append(f"Stopped collecting at {COLLECT_LIMIT} matches; narrow the pattern or "
                         "path to see the rest.")
        elif len(ordered) > len(shown):
            notes.append(f"[{len(ordered) - len(shown)} file(s) truncated] Narrow the pattern "
                         "or path to see them.")
        return "\n".join([header, "---", *map(self._show, shown),
                          *(["---", *notes] if notes else [])])

    def _sorted(self, found: list[str]) -> list[str]:
        now = time.time()
        recent: list[tuple[float, str]] = []
        older: list[str] = []
        for path in found:
            try:
                mtime = Path(path).stat().st_mtime
            except OSError:
                mtime = 0.0
            if now - mtime <= RECENT_SECONDS:
                recent.append((mtime, path))
            else:
                older.append(path)
        recent.sort(key=lambda item: (-item[0], item[1]))
        return [p for _, p in recent] + sorted(older)

    def _where(self) -> str:
        cwd = os.path.normpath(self.ctx.cwd)
        return ("in the working directory" if str(self.root) == cwd
                else f'in "{self._show(str(self.root))}"')

    def _show(self, path: str) -> str:
        return under_cwd(path, self.ctx.cwd)

"""ls: the entries of one directory, directories first, with file sizes.

Hidden (dot) entries and entries ignored by ignore files (the rules grep and glob apply) are
left out and counted unless ``all`` is set; then ignored ones are shown marked ``[ignored]``.
Listings are capped so that a huge directory cannot flood the conversation.
"""

from __future__ import annotations

import asyncio
import os
import re
import stat
from dataclasses import dataclass
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

from ._ignore import GlobError, IgnoreChecker, ReadDenied, glob_regex
from ._render import under_cwd

MAX_ENTRIES = 500


class LsParams(Params):
    path: str | None = Field(default=None)
    ignore: list[str] | None = Field(default=None, description="Name globs to leave out.")
    all: bool = Field(default=False, description="Include hidden and .gitignored entries.")


class LsTool(Tool[LsParams]):
    name = "ls"
    description = (
        "List one directory: subdirectories (ending in /), then files with their sizes.")
    kind = Kind.READ
    params_model = LsParams
    read_only = True
    search_hint = "list directory folder contents files dir"

    def check(self, params: LsParams, ctx: ToolContext) -> str | None:
        try:
            _directory(params, ctx)
            _ignore_regex(params.ignore)
        except GlobError as err:
            return f"`ignore`: {err}"
        except ValueError as err:
            return f"`path`: {err}"
        return None

    def invocation(self, params: LsParams, ctx: ToolContext) -> ToolInvocation[LsParams]:
        return LsInvocation(self, params, ctx, _directory(params, ctx))


def _directory(params: LsParams, ctx: ToolContext) -> Path:
    if params.path is None or not params.path.strip():
        return Path(os.path.normpath(ctx.cwd))
    arg = parse_path_arg(params.path, ctx.cwd)
    if arg.path is None:
        raise ValueError(f"{params.path!r} is an internal URL; ls lists directories only "
                         "(open the URL with read_file).")
    return arg.path


def _ignore_regex(globs: list[str] | None) -> re.Pattern[str] | None:
    if not globs:
        return None
    return re.compile("|".join(f"(?s:{glob_regex(g.rstrip('/') or g)})\\Z" for g in globs))


@dataclass(frozen=True)
class _Entry:
    name: str
    is_dir: bool
    size: int | None
    link: str | None
    ignored: bool

    def line(self) -> str:
        name = self.name + ("/" if self.is_dir else "")
        if self.link is not None:
            name += f" -> {self.link}"
        if self.size is not None:
            name += f"  ({_size(self.size)})"
        return name + ("  [ignored]" if self.ignored else "")


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


class LsInvocation(ToolInvocation[LsParams]):
    """One listing: the directory, and reading it."""

    def __init__(self, tool: LsTool, params: LsParams, ctx: ToolContext, directory: Path) -> None:
        super().__init__(tool, params, ctx)
        self.directory = directory

    def description(self) -> str:
        return f"ls {self.params.path or '.'}"

    def locations(self) -> list[Path]:
        return [self.directory]

    async def execute(self, control: ExecControl) -> ToolResult:
        return await asyncio.to_thread(self._run)

    def _run(self) -> ToolResult:
        path = self.directory
        shown = self.params.path or "."
        if not path.exists():
            return ToolResult.fail(ErrorCode.FILE_NOT_FOUND,
                                   f"{shown} does not exist ({path}). Check the spelling, or "
                                   "list its parent directory.")
        if not path.is_dir():
            return ToolResult.fail(ErrorCode.PATH_IS_NOT_A_DIRECTORY,
                                   f"{shown} is a file, not a directory; use read_file to read "
                                   "it.")
        try:
            with os.scandir(path) as it:
                raw = list(it)
        except OSError as err:
            return ToolResult.fail(ErrorCode.LS_EXECUTION_ERROR,
                                   f"Could not list {shown}: {err.strerror or err}. Check the "
                                   "path and its permissions.")
        return ToolResult(llm_content=self._render(raw))

    def _render(self, raw: list[os.DirEntry[str]]) -> str:
        regex = _ignore_regex(self.params.ignore)
        checker = IgnoreChecker(self.directory)
        denied = self.ctx.services.get(ReadDenied)
        entries: list[_Entry] = []
        dot = ignored = blocked = excluded = 0
        for item in raw:
            if regex is not None and regex.match(item.name):
                excluded += 1
                continue
            if callable(denied) and denied(Path(item.path)):
                blocked += 1
                continue
            entry = _describe(item, checker)
            if not self.params.all and item.name.startswith("."):
                dot += 1
            elif not self.params.all and entry.ignored:
                ignored += 1
            else:
                entries.append(entry)
        entries.sort(key=lambda e: (not e.is_dir, e.name.casefold(), e.name))
        dirs = sum(e.is_dir for e in entries)
        header = (f"{self._where()}: {dirs} director{'y' if dirs == 1 else 'ies'}, "
                  f"{len(entries) - dirs} file(s)")
        lines = [e.line() for e in entries[:MAX_ENTRIES]]
        notes = []
        if len(entries) > MAX_ENTRIES:
            notes.append(f"[{len(entries) - MAX_ENTRIES} more entries not shown] Use glob with a "
                         "pattern, or ls a subdirectory, to see them.")
        if dot or ignored:
            notes.append(f"Not shown: {dot} hidden (dot) and {ignored} .gitignored entries; pass "
                         "all=true to include them.")
        if excluded:
            notes.append(f"{excluded} entries matched `ignore` and were left out.")
        if blocked:
            notes.append(f"{blocked} result(s) hidden by permission rules.")
        if not entries:
            empty = "has no entries to show" if notes else "is empty"
            return " ".join([f"{self._where()} {empty}.", *notes])
        return "\n".join([header + ":", "---", *lines, *(["---", *notes] if notes else [])])

    def _where(self) -> str:
        cwd = os.path.normpath(self.ctx.cwd)
        path = str(self.directory)
        if path == cwd:
            return f"{path} (the working directory)"
        return under_cwd(path, cwd) + "/"


def _describe(item: os.DirEntry[str], checker: IgnoreChecker) -> _Entry:
    link = None
    try:
        st = item.stat(follow_symlinks=True)
        is_dir = stat.S_ISDIR(st.st_mode)
        size = None if is_dir else st.st_size
    except OSError:
        is_dir, size = False, None
    if item.is_symlink():
        try:
            link = str(Path(item.path).readlink())
        except OSError:
            link = "?"
        if size is None and not is_dir:
            link += " (broken link)"
    own_dir = item.is_dir(follow_symlinks=False)
    return _Entry(item.name, is_dir, size, link, checker.ignored(item.name, own_dir))

"""grep: search file contents with ripgrep, or a pure-Python engine that gives the same results.

Files are listed most recently modified first (then by path), with paths relative to the
working directory (absolute outside it), so the model sees fresh work first and can pass paths
straight to read_file. Output is paged with head_limit/offset and stays under the tool's
20,000-character budget by ending the page early, never by cutting the middle out. Files shown
count as partial reads, so an edit of a file found with grep passes the prior-read gate; files
the session's read rules deny are dropped and counted.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

from pydantic import ConfigDict, Field

from agent_ext.core import (
    ErrorCode,
    ExecControl,
    Kind,
    Params,
    ParamsError,
    Tool,
    ToolContext,
    ToolInvocation,
    ToolResult,
)
from agent_ext.fs import ReadCache
from agent_ext.urls import PathArg, URLError, URLRouter, parse_path_arg

from ._grep_hits import Found
from ._ignore import ReadDenied
from ._pygrep import (
    FileHits,
    GrepQuery,
    Line,
    PatternError,
    ScanResult,
    compile_query,
    scan,
    search_text,
    spans_lines,
)
from ._render import under_cwd
from ._rg import RgError, find_rg, search
from ._targets import ReadAsked, refuse_control_characters, target_locations

DEFAULT_TIMEOUT = 60.0
#: Longer lines are cut to this many characters and marked with "...".
MAX_LINE_CHARS = 500
#: A page ends before its body passes this many characters (the tool's budget is 20,000).
BODY_CHARS = 18_000
#: The pattern is echoed in the result up to this many characters.
MAX_PATTERN_SHOWN = 200
Engine = Literal["auto", "rg", "python"]


class GrepParams(Params):
    model_config = ConfigDict(populate_by_name=True)

    pattern: str = Field(min_length=1, description=r"Escape literal ( ) { } as \( \) \{ \}")
    path: str | None = Field(default=None, description="File or directory to search in.")
    glob: str | None = Field(default=None, description="Only files matching it, such as *.py.")
    type: str | None = Field(default=None, description="A file type, such as py, js or md.")
    output_mode: Literal["files_with_matches", "content", "count"] = Field(
        default="files_with_matches")
    case_insensitive: bool | None = Field(default=None, alias="-i")
    line_numbers: bool | None = Field(default=None, alias="-n")
    after: int | None = Field(default=None, alias="-A", ge=0)
    before: int | None = Field(default=None, alias="-B", ge=0)
    context: int | None = Field(default=None, alias="-C", ge=0)
    multiline: bool = Field(default=False)
    head_limit: int = Field(default=250, ge=0, description="At most this many entries; 0: all.")
    offset: int = Field(default=0, ge=0, description="Entries to skip, for the next page.")


class GrepTool(Tool[GrepParams]):
    name = "grep"
    description = (
        "Search file contents with a regular expression (ripgrep syntax). Returns matching "
        "files, or with output_mode \"content\" the matching lines (-i, -n, -A, -B, -C as in "
        "grep). Skips hidden, binary and .gitignored files. Use it instead of grep or rg in the "
        "shell.")
    kind = Kind.SEARCH
    params_model = GrepParams
    read_only = True
    search_hint = "search find regex ripgrep rg text code content pattern occurrences"
    max_output_chars = 20_000
    truncate_keep = "head"

    def __init__(self, *, engine: Engine = "auto", timeout: float = DEFAULT_TIMEOUT) -> None:
        self.engine = engine
        self.timeout = timeout

    def rg_path(self) -> str | None:
        """The rg binary to use, or None for the pure-Python engine."""
        choice = self.engine
        if choice == "auto":
            choice = "python" if os.environ.get("AGENT_EXT_GREP", "").lower() == "python" else "rg"
        return None if choice == "python" else find_rg()

    def check(self, params: GrepParams, ctx: ToolContext) -> str | None:
        try:
            refuse_control_characters(params.path or "", "`path`")
            target = _target(params, ctx)
        except ParamsError as err:
            return str(err)
        except ValueError as err:
            return f"`path`: {err}"
        denied = ctx.services.get(ReadDenied)
        if callable(denied) and target.path is not None and denied(target.path):
            return None  # the permission layer refuses it, without saying whether it exists
        if target.path is not None and not target.path.exists():
            if any(c in (params.path or "") for c in "*?[{"):
                return (f"`path` {params.path!r} looks like a glob; give the directory as "
                        "path and the file pattern as glob (e.g. glob=\"*.py\").")
            return (f"`path` {params.path!r} does not exist ({target.path}). Check it with ls "
                    "or glob, or leave path out to search the working directory.")
        if (target.path is not None and not target.path.is_dir()
                and not target.path.is_file()):
            return (f"`path` {params.path!r} is not a file or a directory (a device, pipe or "
                    "socket, which may never end); grep searches files. Use the shell for it.")
        return None

    def invocation(self, params: GrepParams, ctx: ToolContext) -> ToolInvocation[GrepParams]:
        return GrepInvocation(self, params, ctx, _target(params, ctx))


def _router(ctx: ToolContext) -> URLRouter | None:
    found = ctx.services.get(URLRouter)
    return found if isinstance(found, URLRouter) else None


def _target(params: GrepParams, ctx: ToolContext) -> PathArg:
    router = _router(ctx)
    return parse_path_arg(params.path or ".", ctx.cwd,
                          schemes=router.names() if router is not None else None)


def _split_globs(text: str | None) -> tuple[str, ...]:
    out: list[str] = []
    for piece in (text or "").split():
        out += [piece] if "{" in piece else [g for g in piece.split(",") if g]
    return tuple(out)


class GrepInvocation(ToolInvocation[GrepParams]):
    """One grep call: its search root, the query, and running it."""

    def __init__(self, tool: GrepTool, params: GrepParams, ctx: ToolContext,
                 target: PathArg) -> None:
        super().__init__(tool, params, ctx)
        self.grep = tool
        self.target = target

    def query(self) -> GrepQuery:
        p = self.params
        context = p.context or 0
        return GrepQuery(
            pattern=p.pattern, mode=p.output_mode, ignore_case=bool(p.case_insensitive),
            multiline=p.multiline, before=p.before if p.before is not None else context,
            after=p.after if p.after is not None else context, globs=_split_globs(p.glob),
            type=p.type or None)

    def description(self) -> str:
        return f"grep {self.params.pattern!r} in {self.params.path or '.'}"

    def locations(self) -> list[Path]:
        if self.target.url is not None and _router(self.ctx) is not None:
            return target_locations(self.ctx, self.target)
        return [self.target.path] if self.target.path is not None else []

    async def execute(self, control: ExecControl) -> ToolResult:
        query = self.query()
        try:
            if self.target.url is not None:
                found = await self._search_url(query)
                if isinstance(found, ToolResult):
                    return found
            else:
                assert self.target.path is not None
                found = await self._search(query, self.target.path, control)
        except PatternError as err:
            reason = str(err).rstrip(".")
            return ToolResult.fail(ErrorCode.INVALID_TOOL_PARAMS,
                                   f"invalid parameters for grep: {reason}. Fix it and retry.")
        except OSError as err:
            return ToolResult.fail(ErrorCode.GREP_EXECUTION_ERROR,
                                   f"grep could not run: {err}. Check the path, then retry.")
        if isinstance(found, ToolResult):
            return found
        return await asyncio.to_thread(self._report, query, found)

    async def _search(self, query: GrepQuery, root: Path,
                      control: ExecControl) -> Found | ToolResult:
        exe = self.grep.rg_path()
        if exe is None:
            scanned = await asyncio.to_thread(scan, root, query, timeout=self.grep.timeout,
                                              cancelled=control.cancelled)
            return await asyncio.to_thread(Found.from_scan, scanned)
        try:
            return await search(exe, query, root, timeout=self.grep.timeout,
                                cancelled=control.cancelled)
        except RgError as err:
            return ToolResult.fail(ErrorCode.GREP_EXECUTION_ERROR,
                                   f"ripgrep failed: {err}. Check the path and pattern, or "
                                   "narrow the search and retry.")

    async def _search_url(self, query: GrepQuery) -> Found | ToolResult:
        url = self.target.url
        assert url is not None
        router = _router(self.ctx)
        if router is None or router.get(url.scheme) is None:
            return ToolResult.fail(
                ErrorCode.INVALID_TOOL_PARAMS,
                f"grep cannot search {url.scheme}:// addresses in this session. Search files "
                "by path instead, or open the address with read_file.")
        try:
            resolved = await router.resolve(url)
        except URLError as err:
            return ToolResult.fail(err.code, str(err))
        if resolved.text is None:
            return ToolResult.fail(ErrorCode.GREP_EXECUTION_ERROR,
                                   f"{url.href} is not text, so it cannot be searched; open it "
                                   "with read_file.")
        return await self._search_text(query, resolved.text, url.href)

    async def _search_text(self, query: GrepQuery, text: str, label: str) -> Found | ToolResult:
        """Search text held in memory the way files are searched: by rg (no pattern can make
        its matching blow up, and its timeout is a process's), from a private temporary file.
        Without rg, Python's matcher runs in a thread under the same timeout."""
        exe = self.grep.rg_path()
        if exe is None:
            regex = compile_query(query)
            count, lines = await asyncio.to_thread(
                search_text, text, regex, query, spanning=spans_lines(regex, query),
                first_only=query.mode == "files_with_matches")
            hits = [FileHits(label, count=count, size=len(lines), parsed=lines)] if count else []
            return Found.from_scan(ScanResult(files=hits))
        with tempfile.TemporaryDirectory(prefix="agent_ext_grep_") as folder:
            body = Path(folder) / "text"
            await asyncio.to_thread(body.write_text, text, encoding="utf-8", errors="replace")
            try:
                found = await search(exe, query, body, timeout=self.grep.timeout)
            except RgError as err:
                return ToolResult.fail(ErrorCode.GREP_EXECUTION_ERROR,
                                       f"ripgrep failed: {err}. Narrow the pattern and retry.")
        found.paths = [label for _ in found.paths]
        found.mtimes = [0 for _ in found.mtimes]
        return found

    def _report(self, query: GrepQuery, found: Found) -> ToolResult:
        report = Report(query, found, cwd=self.ctx.cwd, root=self.target,
                        denied=_hidden_by_rules(self.ctx, self.target.path),
                        timeout=self.grep.timeout, numbers=self.params.line_numbers is not False)
        text, shown = report.render(self.params.head_limit, self.params.offset)
        cache = _read_cache(self.ctx)
        for path in shown:
            if not path.endswith(".ipynb"):
                with contextlib.suppress(OSError):
                    cache.record_read(path, full=False, cacheable=True)
        return ToolResult(llm_content=text, display=text, file_paths=shown)


def _hidden_by_rules(ctx: ToolContext, root: Path | None) -> Callable[[Path], bool] | None:
    """What the results leave out: files deny rules cover, and files ask rules cover when the
    searched root is not covered by the same rule (else the search itself was asked about)."""
    denied = ctx.services.get(ReadDenied)
    asked = ctx.services.get(ReadAsked)
    deny: ReadDenied | None = denied if callable(denied) else None
    ask: ReadAsked | None = asked if callable(asked) else None
    if ask is None or root is None:
        return deny

    def hidden(path: Path) -> bool:
        return bool(deny is not None and deny(path)) or ask(path, root)

    return hidden


def _read_cache(ctx: ToolContext) -> ReadCache:
    return ctx.service_or_create(ReadCache, ReadCache)


class Report:
    """One search's results as the model sees them: permission-filtered, sorted, paged.

    Files are indices into the ``Found`` columns, so sorting and counting tens of thousands of
    them allocates no object per file.
    """

    def __init__(self, query: GrepQuery, found: Found, *, cwd: Path, root: PathArg,
                 denied: Callable[[Path], bool] | None, timeout: float, numbers: bool) -> None:
        self.q, self.found, self.timeout, self.numbers = query, found, timeout, numbers
        self.cwd = os.path.normpath(str(cwd))
        self.root = root
        paths = found.paths
        keep = list(range(len(paths)))
        if denied is not None:
            keep = [i for i in keep if "://" in paths[i] or not denied(Path(paths[i]))]
        self.hidden = len(paths) - len(keep)
        self.order = _newest_first(keep, paths, found.mtimes)

    def show(self, path: str) -> str:
        return under_cwd(path, self.cwd)

    def render(self, limit: int, offset: int) -> tuple[str, list[str]]:
        """The result text, and the files on the page (to record as partial reads)."""
        content = self.q.mode == "content"
        total = self._sum(self.found.sizes) if content else len(self.order)
        if not self.order:
            return self._empty(), []
        if offset and offset >= total:
            unit = "line(s)" if content else "file(s)"
            return f"No results at offset={offset}: the search found {total} {unit}.", []
        body, files, cut = self._lines(limit, offset) if content else self._entries(limit, offset)
        shown = sum(1 for x in body if x != "--") if content else len(files)
        notes = self._notes(offset, shown, total, cut)
        text = "\n".join([self._header(), "---", *body, *(["---", *notes] if notes else [])])
        paths = self.found.paths
        return text, [paths[i] for i in files
                      if i not in self.found.binary and "://" not in paths[i]]

    def _sum(self, column: list[int]) -> int:
        """The total of ``column`` over the files shown (all of them, unless some are hidden)."""
        return sum(column) if not self.hidden else sum(map(column.__getitem__, self.order))

    def _entries(self, limit: int, offset: int) -> tuple[list[str], list[int], int]:
        body: list[str] = []
        files: list[int] = []
        used = 0
        paths, counts = self.found.paths, self.found.counts
        for i in self.order[offset:offset + limit if limit else None]:
            line = self.show(paths[i])
            line += f":{counts[i]}" if self.q.mode == "count" else ""
            if body and used + len(line) + 1 > BODY_CHARS:
                break
            body.append(line)
            files.append(i)
            used += len(line) + 1
        return body, files, 0

    def _lines(self, limit: int, offset: int) -> tuple[list[str], list[int], int]:
        body: list[str] = []
        files: list[int] = []
        used = cut = 0
        grouped = bool(self.q.before or self.q.after)
        last: tuple[int, int] | None = None
        for i, (no, is_match, raw) in self._window(offset, offset + limit if limit else None):
            text = raw if len(raw) <= MAX_LINE_CHARS else raw[:MAX_LINE_CHARS] + "..."
            cut += text is not raw
            mark = ":" if is_match else "-"
            name = self.show(self.found.paths[i])
            line = f"{name}{mark}{no}{mark}{text}" if self.numbers else f"{name}{mark}{text}"
            gap = grouped and last is not None and (last[0] != i or no != last[1] + 1)
            if body and used + len(line) + 1 + 3 * gap > BODY_CHARS:
                break
            body += ["--", line] if gap else [line]
            used += len(line) + 1 + 3 * gap
            if not files or files[-1] != i:
                files.append(i)
            last = (i, no)
        return body, files, cut

    def _window(self, offset: int, end: int | None) -> Iterator[tuple[int, Line]]:
        index = 0
        sizes = self.found.sizes
        for i in self.order:
            if index + sizes[i] <= offset:
                index += sizes[i]
                continue
            for line in self.found.lines(i):
                if end is not None and index >= end:
                    return
                if index >= offset:
                    yield i, line
                index += 1

    def _header(self) -> str:
        files, matched = len(self.order), self._sum(self.found.counts)
        where = self._where_pattern()
        # A search stopped early (too much output, a timeout) found this much, not all of it.
        least = "at least " if self.found.stopped else ""
        if self.q.mode == "files_with_matches":
            return (f"Found {least}{files} file(s) matching {where}, most recently modified "
                    "first:")
        unit = "match(es)" if self.q.multiline and self.q.mode == "count" else "matching line(s)"
        tail = "; count per file" if self.q.mode == "count" else ""
        return f"Found {least}{matched} {unit} in {least}{files} file(s) for {where}{tail}:"

    def _where(self) -> str:
        if self.root.url is not None:
            place = f"in {self.root.url.href}"
        elif self.root.path is not None and str(self.root.path) != self.cwd:
            place = f'in "{self.show(str(self.root.path))}"'
        else:
            place = "in the working directory"
        parts = [f'glob "{g}"' for g in self.q.globs]
        parts += [f"type {self.q.type}"] if self.q.type else []
        parts += ["case-insensitive"] if self.q.ignore_case else []
        parts += ["multiline"] if self.q.multiline else []
        return place + (f" ({', '.join(parts)})" if parts else "")

    def _notes(self, offset: int, shown: int, total: int, cut: int) -> list[str]:
        notes: list[str] = []
        unit = "lines" if self.q.mode == "content" else "files"
        if offset + shown < total:
            notes.append(f"Showing {unit} {offset + 1}-{offset + shown} of {total}. Use "
                         f"offset={offset + shown} for the next page, or narrow the search "
                         "(path, glob, type).")
        elif offset:
            notes.append(f"Showing {unit} {offset + 1}-{total} of {total}.")
        if cut:
            notes.append(f"{cut} line(s) longer than {MAX_LINE_CHARS} characters were cut "
                         "(marked ...); read_file shows them whole.")
        binary = [self.show(self.found.paths[i]) for i in self.order
                  if i in self.found.binary] if self.found.binary else []
        if binary and self.q.mode == "content":
            notes.append("Binary file(s) matched; their lines are not shown: "
                         + ", ".join(binary[:10]) + (" ..." if len(binary) > 10 else ""))
        notes += self._warnings()
        return notes

    def _warnings(self) -> list[str]:
        notes = []
        reasons = {"timeout": f"it timed out after {self.timeout:g}s",
                   "cancelled": "it was cancelled",
                   "output": "it produced too much output"}
        why = [reasons[self.found.stopped]] if self.found.stopped else []
        if self.found.errors:
            why.append(f"{len(self.found.errors)} path(s) could not be read, e.g. "
                       f"{self.found.errors[0]}")
        if why:
            notes.append(f"The search did not complete ({'; '.join(why)}): results may be "
                         "missing, so this is not proof of absence. Narrow the path, glob or "
                         "pattern and retry.")
        return notes

    def _empty(self) -> str:
        notes = self._warnings()
        if self.found.stopped:
            head = (f"The search for {self._where_pattern()} stopped before it had a complete "
                    "result to show.")
            return " ".join([head, *notes])
        text = f"No matches found for {self._where_pattern()}."
        if not notes and self.root.url is None:
            notes.append("Hidden files, binary files and .gitignored paths are not searched.")
        return " ".join([text, *notes])

    def _where_pattern(self) -> str:
        pattern = self.q.pattern
        if len(pattern) > MAX_PATTERN_SHOWN:
            pattern = f"{pattern[:MAX_PATTERN_SHOWN]}... ({len(pattern):,} characters)"
        return f'pattern "{pattern}" {self._where()}'


def _newest_first(files: list[int], paths: list[str], mtimes: list[int]) -> list[int]:
    """``files`` (indices) sorted most recently modified first, then by path.

    Two stable sorts on plain int and str keys (path, then mtime) instead of a tuple per file;
    the path sort is skipped when no two mtimes are equal, as is usual.
    """
    if len(set(mtimes)) < len(mtimes):
        files.sort(key=paths.__getitem__)
    newest = [-m for m in mtimes]
    files.sort(key=newest.__getitem__)
    return files

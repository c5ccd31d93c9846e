"""read_file: a file's lines numbered like ``cat -n``, an image, a rendered notebook, or a URL.

What the model reads is what licenses its edits, so every read is recorded in the session's
read cache with the file's fstat taken before reading. Output is bounded here (2,000 lines by
default, long lines cut, a character cap) and always says how to read on, so the budget layer
leaves it alone. Text files over ``STREAM_BYTES`` are read in chunks (``agent_ext.fs.lines``):
one pass counts the lines, another keeps only those shown, so a log of hundreds of megabytes
costs no more memory than a small file. A full re-read of a file that has not changed since its
last full read answers with a short "unchanged" note instead of the same text again.
"""

from __future__ import annotations

import asyncio
import difflib
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, overload

from pydantic import Field

from agent_ext.core import (
    ErrorCode,
    ExecControl,
    ImagePart,
    Kind,
    Params,
    ParamsError,
    Part,
    TextPart,
    Tier,
    Tool,
    ToolContext,
    ToolInvocation,
    ToolRefusal,
    ToolResult,
)
from agent_ext.fs import LineRange, ReadCache, Selector, decode_text, sniff_binary
from agent_ext.fs.cache import content_digest
from agent_ext.fs.lines import pick_lines, scan_lines, split_lines
from agent_ext.fs.snapshot import open_regular
from agent_ext.notebook import VIEW_FORMS, NotebookView, split_view
from agent_ext.notebook.reading import notebook_read_result
from agent_ext.urls import PathArg, URLError, URLRouter

from ._ignore import ReadDenied
from ._render import number_lines
from ._targets import parse_target, session_service, target_locations, target_tier

DEFAULT_LIMIT = 2_000
MAX_OUTPUT_CHARS = 256_000
#: Text is read in chunks, so the limit is the time two passes take (about 4 s a GB).
MAX_TEXT_BYTES = 2**30
MAX_IMAGE_BYTES = 5 * 2**20
#: Text files larger than this are read in chunks, keeping only the lines shown.
STREAM_BYTES = 2**20
IMAGE_TYPES = {"png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp"}
_SNIFF_BYTES = 8192


class ReadFileParams(Params):
    file_path: str = Field(
        description="A path, optionally with lines: a.py:10-20, a.py:-30 (the last 30).")
    offset: int | None = Field(default=None, description="First line to read, from 1.")
    limit: int | None = Field(default=None)


class ReadFileTool(Tool[ReadFileParams]):
    name = "read_file"
    description = (
        "Read a file with line numbers, or a notebook as cells with their ids. At most "
        f"{DEFAULT_LIMIT} lines per call: page with offset and limit. Images come back as "
        "images.")
    kind = Kind.READ
    params_model = ReadFileParams
    read_only = True
    search_hint = "view cat open show file contents lines image notebook"
    max_output_chars = math.inf  # bounded and paged here

    def check(self, params: ReadFileParams, ctx: ToolContext) -> str | None:
        if params.offset is not None and params.offset < 0:
            return (f"`offset` is {params.offset}, but lines start at 1; for the last N lines "
                    "write the path as path:-N")
        if params.limit is not None and params.limit < 1:
            return f"`limit` is {params.limit}; give 1 or more lines, or leave it out"
        return None

    def invocation(self, params: ReadFileParams, ctx: ToolContext) -> ReadFileInvocation:
        base, view = split_view(params.file_path)
        if view is not None and base.lower().endswith(".ipynb"):
            # A notebook page (path:cells=0-49, path:source): cells, not lines.
            return ReadFileInvocation(self, params, ctx, parse_target(ctx, base), view)
        target = parse_target(ctx, params.file_path)
        selector = target.selector
        paged = params.offset is not None or params.limit is not None
        if selector is not None and selector.conflicts:
            raise ParamsError("the :conflicts view is not supported; grep the file for '<<<<<<<' "
                              "and read those lines instead")
        if selector is not None and selector.has_lines and paged:
            raise ParamsError(f"`file_path` has a line selector (:{selector.text}) and offset/"
                              "limit are set too; use one or the other")
        notebook = target.path is not None and target.path.suffix.lower() == ".ipynb"
        if notebook and not target.raw and selector is not None and selector.has_lines:
            raise ParamsError("line selectors do not apply to notebooks, which are read by cell: "
                              f"{VIEW_FORMS} Or use offset/limit counted in cells "
                              "(or add :raw to read the notebook's JSON as text)")
        return ReadFileInvocation(self, params, ctx, target)


class ReadFileInvocation(ToolInvocation[ReadFileParams]):
    """One read of a file or internal URL."""

    def __init__(self, tool: Tool[ReadFileParams], params: ReadFileParams, ctx: ToolContext,
                 target: PathArg, view: NotebookView | None = None) -> None:
        super().__init__(tool, params, ctx)
        self.target = target
        self.view = view

    def description(self) -> str:
        if self.target.url is not None:
            return f"read_file {self.target.url.href}"
        suffix = f":{self.target.selector.text}" if self.target.selector is not None else ""
        return f"read_file {self.target.path}{suffix}"

    def locations(self) -> list[Path]:
        return target_locations(self.ctx, self.target)

    def tier(self) -> Tier:
        return target_tier(self.ctx, self.target, Tier.READ)

    async def execute(self, control: ExecControl) -> ToolResult:
        if self.target.url is not None:
            return await self._read_url()
        path = self.target.path
        assert path is not None
        if path.suffix.lower() == ".ipynb" and not self.target.raw:
            # The live notebook when it is open in the browser, else the file; both by cell.
            return await notebook_read_result(self.ctx, path, view=self.view,
                                              offset=self.params.offset, limit=self.params.limit)
        return await asyncio.to_thread(self._read_path, path)

    # -- files ----------------------------------------------------------------------------------

    def _read_path(self, path: Path) -> ToolResult:
        cache = session_service(self.ctx, ReadCache)
        try:
            fd, st = open_regular(path)
        except FileNotFoundError:
            denied = self.ctx.services.get(ReadDenied)
            return ToolResult.fail(ErrorCode.FILE_NOT_FOUND, _not_found(
                path, self.ctx.cwd, denied if callable(denied) else None))
        except ToolRefusal as refusal:
            return refusal.result()
        except OSError as err:
            return ToolResult.fail(ErrorCode.READ_CONTENT_FAILURE,
                                   f"Could not read {path}: {err.strerror or err}.")
        with os.fdopen(fd, "rb") as f:
            if self._whole() and cache.unchanged_since_read(path, st=st):
                return ToolResult(llm_content=_unchanged(path), display=f"{path}: unchanged",
                                  file_paths=[os.fspath(path)])
            head = f.read(_SNIFF_BYTES)
            kind = sniff_binary(head)
            limit = MAX_IMAGE_BYTES if kind in IMAGE_TYPES else MAX_TEXT_BYTES
            if st.st_size > limit:
                return ToolResult.fail(ErrorCode.READ_CONTENT_FAILURE, _too_big(path, st.st_size,
                                                                                limit, kind))
            if kind is not None and kind not in IMAGE_TYPES:
                return ToolResult.fail(ErrorCode.READ_CONTENT_FAILURE, _binary(path, kind))
            if kind is None and self.target.image:
                return ToolResult.fail(ErrorCode.READ_CONTENT_FAILURE,
                                       f":img shows image files; {path} is text (not png, jpeg, "
                                       "gif or webp). Read it without :img.")
            if kind is None and st.st_size > STREAM_BYTES:
                return self._streamed(path, f, cache, st)
            data = head + f.read()
        if kind is not None:
            cache.record_read(path, full=True, cacheable=False, st=st)
            return ToolResult(llm_content=[ImagePart(data, IMAGE_TYPES[kind])],
                              display=f"Read image {path} ({len(data):,} bytes)",
                              file_paths=[os.fspath(path)])
        return self._text(path, decode_text(data).text, cache, st, content_digest(data))

    def _whole(self) -> bool:
        """Whether this call asks for the whole file, as plain numbered text."""
        return (self.target.selector is None and self.params.offset is None
                and self.params.limit is None)

    def _text(self, path: Path, text: str, cache: ReadCache, st: os.stat_result,
              digest: str) -> ToolResult:
        lines = split_lines(text)
        if not lines:
            cache.record_read(path, full=True, cacheable=True, st=st, digest=digest)
            return ToolResult(llm_content=f"(empty file: {path} has no content)",
                              display=f"{path}: empty", file_paths=[os.fspath(path)])
        ranges = self._ranges(len(lines))
        if not ranges:
            return ToolResult.fail(ErrorCode.INVALID_TOOL_PARAMS, self._past_end(path, len(lines)))
        return self._page(path, lines, ranges, max_lines=self._max_lines(ranges), cache=cache,
                          st=st, digest=digest)

    def _page(self, path: Path, lines: Sequence[str], ranges: list[tuple[int, int]], *,
              max_lines: int, cache: ReadCache, st: os.stat_result, digest: str) -> ToolResult:
        page = render_lines(lines, ranges, max_lines=max_lines, numbered=not self.target.raw)
        selector = self.target.selector
        whole = self._whole() or (selector is not None and selector.raw
                                  and not selector.has_lines)
        cache.record_read(path, full=whole and not page.truncated, cacheable=True, st=st,
                          digest=digest)
        return ToolResult(llm_content=page.text, file_paths=[os.fspath(path)],
                          display=f"Read {page.summary} from {path}")

    def _streamed(self, path: Path, f: BinaryIO, cache: ReadCache,
                  st: os.stat_result) -> ToolResult:
        """A large text file: counted in one chunked pass, and only the lines shown kept."""
        scan = scan_lines(f)
        if not scan.total:
            return self._text(path, "", cache, st, scan.digest)
        ranges = self._ranges(scan.total)
        if not ranges:
            return ToolResult.fail(ErrorCode.INVALID_TOOL_PARAMS,
                                   self._past_end(path, scan.total))
        max_lines = self._max_lines(ranges)
        wanted = _first_lines(ranges, min(max_lines, MAX_OUTPUT_CHARS // _LINE_OVERHEAD) + 1)
        lines = LineWindow(scan.total, pick_lines(f, scan, wanted))
        return self._page(path, lines, ranges, max_lines=max_lines, cache=cache, st=st,
                          digest=scan.digest)

    def _ranges(self, total: int) -> list[tuple[int, int]]:
        selector = self.target.selector
        if selector is not None and selector.has_lines:
            return selector.resolve(total)
        start = max(1, self.params.offset or 1)
        if start > total:
            return []
        limit = self.params.limit
        end = total if limit is None else min(total, start + limit - 1)
        return [(start, end)]

    def _max_lines(self, ranges: list[tuple[int, int]]) -> int:
        """An explicit limit or closed line selector is honoured; anything else gets the default."""
        selector = self.target.selector
        if self.params.limit is not None:
            return self.params.limit
        if selector is not None and (selector.tail is not None or (
                selector.ranges and all(r.end is not None for r in selector.ranges))):
            return sum(end - start + 1 for start, end in ranges)
        return DEFAULT_LIMIT

    def _past_end(self, path: Path, total: int) -> str:
        selector = self.target.selector
        asked = (f"selector :{selector.text} starts" if selector is not None
                 else f"offset {self.params.offset} is")
        return (f"{path} has {total} line{'s' if total != 1 else ''}; {asked} past the end. "
                f"Use an offset from 1 to {total}, or path:-50 for the last 50 lines.")

    # -- internal URLs --------------------------------------------------------------------------

    async def _read_url(self) -> ToolResult:
        url = self.target.url
        assert url is not None
        selector = self.target.selector
        if self.params.offset is not None or self.params.limit is not None:
            start = max(1, self.params.offset or 1)
            end = None if self.params.limit is None else start + self.params.limit - 1
            selector = Selector(ranges=(LineRange(start, end),), raw=self.target.raw,
                                text=f"{start}-{'' if end is None else end}")
        try:
            found = await session_service(self.ctx, URLRouter).resolve(url, selector)
        except URLError as err:
            return ToolResult.fail(err.code, str(err))
        notes = [TextPart(note) for note in found.notes]
        if found.text is not None:
            body = found.text or f"({url.href} is empty)"
            text = "\n\n".join([body, *(n.text for n in notes)])
            return ToolResult(llm_content=text, display=f"Read {url.href}")
        parts: list[Part] = [*found.parts, *notes]
        return ToolResult(llm_content=parts, display=f"Read {url.href}")


#: What render_lines counts for each line besides its text (its number and tab).
_LINE_OVERHEAD = 8


class LineWindow(Sequence[str]):
    """A file's lines as render_lines indexes them, holding only the ones picked."""

    def __init__(self, total: int, picked: Mapping[int, str]) -> None:
        self.total = total
        self.picked = picked

    def __len__(self) -> int:
        return self.total

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...

    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self.total))]
        return self.picked[index + 1]


def _first_lines(ranges: list[tuple[int, int]], count: int) -> set[int]:
    """The numbers of the first ``count`` lines the ranges name, in their order."""
    out: set[int] = set()
    for start, end in ranges:
        for n in range(start, min(end, start + count - len(out) - 1) + 1):
            out.add(n)
        if len(out) >= count:
            break
    return out


@dataclass(frozen=True)
class Page:
    """Numbered lines for the model, with notes on what was left out."""

    text: str
    summary: str
    truncated: bool


def render_lines(lines: Sequence[str], ranges: list[tuple[int, int]], *,
                 max_lines: int = DEFAULT_LIMIT, numbered: bool = True) -> Page:
    """The requested ranges, capped at ``max_lines`` lines and MAX_OUTPUT_CHARS characters,
    with a note saying how to read on."""
    total = len(lines)
    blocks: list[str] = []
    used = shown = cut = 0
    last = 0
    stop: int | None = None
    for start, end in ranges:
        picked: list[str] = []
        for n in range(start, end + 1):
            line = lines[n - 1]
            size = min(len(line), 2_100) + _LINE_OVERHEAD
            if shown >= max_lines or (used + size > MAX_OUTPUT_CHARS and shown):
                stop = n
                break
            picked.append(line)
            used += size
            shown += 1
            last = n
        if picked:
            text, cut_here = number_lines(picked, start, numbered=numbered)
            blocks.append(text)
            cut += cut_here
        if stop is not None:
            break
    notes = []
    if stop is not None:
        notes.append(f"[Showing {shown} lines, up to line {last} of {total}. To read more, "
                     f"call read_file with offset={stop}.]")
    if cut:
        notes.append(f"[{cut} line(s) longer than 2,000 characters were cut.]")
    body = "\n...\n".join(blocks)
    first = ranges[0][0]
    summary = f"lines {first}-{last} of {total}" if len(ranges) == 1 else f"{shown} lines"
    return Page("\n\n".join([body, *notes]), summary, truncated=stop is not None or cut > 0)


def _unchanged(path: Path) -> str:
    return (f"{path} has not changed since you last read it in full; its content is earlier in "
            "this conversation. If you cannot see it there, read it again with offset and limit "
            "(for example offset=1, limit=2000).")


def _not_found(path: Path, cwd: Path, denied: ReadDenied | None = None) -> str:
    """The not-found message, with close names in its folder (never ones the rules hide)."""
    message = f"File not found: {path}."
    parent = path.parent
    if not parent.is_dir():
        return f"{message} The folder {parent} does not exist either. Use ls or glob to find it."
    try:
        names = [p.name for p in parent.iterdir()
                 if denied is None or not denied(parent / p.name)]
    except OSError:
        names = []
    close = difflib.get_close_matches(path.name, names, n=3, cutoff=0.6)
    hint = (" Did you mean " + ", ".join(repr(os.fspath(parent / c)) for c in close) + "?"
            if close else f" Relative paths start at {cwd}; use ls or glob to find the file.")
    return message + hint


def _too_big(path: Path, size: int, limit: int, kind: str | None) -> str:
    what = "image" if kind is not None else "text file"
    return (f"{path} is {size / 2**20:.1f} MB, over the {limit // 2**20} MB limit for a "
            f"{what}. Look at parts of it with the shell (head, tail, sed -n '100,200p', grep) "
            "instead.")


def _binary(path: Path, kind: str) -> str:
    how = ("Extract its text with the shell (for example pdftotext)." if kind == "pdf"
           else "Inspect it with the shell (file, xxd, or a program that reads it).")
    return f"{path} is a binary file ({kind}), not text, so read_file cannot show it. {how}"

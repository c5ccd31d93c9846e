"""read_file on real files: numbering, paging, selectors, images, notebooks, URLs, the cache."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

from agent_ext.core import (
    ErrorCode,
    ExecControl,
    ImagePart,
    Kind,
    Permission,
    Tier,
    ToolContext,
    ToolResult,
)
from agent_ext.fs import ReadCache, Selector
from agent_ext.tools.read_file import DEFAULT_LIMIT, ReadFileInvocation, ReadFileTool
from agent_ext.urls import ParsedURL, Resolved, URLError, URLRouter

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(20)


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


async def read(ctx: ToolContext, file_path: str, **kw: Any) -> ToolResult:
    built = ReadFileTool().build({"file_path": file_path, **kw}, ctx)
    if isinstance(built, ToolResult):
        return built
    return await built.execute(ExecControl())


def code(result: ToolResult) -> str | None:
    return result.error.code if result.error else None


def cache(ctx: ToolContext) -> ReadCache:
    found = ctx.service(ReadCache)
    assert found is not None
    return found


# -- text -----------------------------------------------------------------------------------------

async def test_lines_are_numbered_like_cat_n(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    result = await read(ctx, "a.py")
    assert result.text == "     1\tdef f():\n     2\t    return 1"
    assert result.file_paths == [str(tmp_path / "a.py")]
    entry = cache(ctx).entry(tmp_path / "a.py")
    assert entry is not None and entry.last_read_was_full and entry.last_read_cacheable


async def test_crlf_and_legacy_encodings_are_decoded(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"one\r\ntwo\r\n")
    (tmp_path / "l.txt").write_bytes("café\n".encode("latin-1"))
    assert (await read(ctx, "w.txt")).text == "     1\tone\n     2\ttwo"
    assert (await read(ctx, "l.txt")).text == "     1\tcafé"


async def test_default_limit_pages_with_a_hint(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"line {i}\n" for i in range(1, 2501)))
    result = await read(ctx, "big.txt")
    lines = result.text.split("\n")
    assert lines[DEFAULT_LIMIT - 1] == f"{DEFAULT_LIMIT:>6}\tline {DEFAULT_LIMIT}"
    assert "offset=2001" in result.text and "of 2500" in result.text
    entry = cache(ctx).entry(tmp_path / "big.txt")
    assert entry is not None and not entry.last_read_was_full and entry.last_read_cacheable
    rest = await read(ctx, "big.txt", offset=2001)
    assert rest.text.startswith("  2001\tline 2001") and rest.text.endswith("  2500\tline 2500")


async def test_offset_and_limit(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\nb\nc\nd\n")
    assert (await read(ctx, "a.txt", offset=2, limit=2)).text == "     2\tb\n     3\tc"
    assert (await read(ctx, "a.txt", offset=0, limit=1)).text == "     1\ta"
    assert (await read(ctx, "a.txt", offset="3", limit="1")).text == "     3\tc"
    entry = cache(ctx).entry(tmp_path / "a.txt")
    assert entry is not None and not entry.last_read_was_full


async def test_bad_offsets_and_limits(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\nb\nc\n")
    past = await read(ctx, "a.txt", offset=9)
    assert code(past) == ErrorCode.INVALID_TOOL_PARAMS
    assert "has 3 lines; offset 9 is past the end" in past.text
    assert "offset" in (await read(ctx, "a.txt", offset=-2)).text
    assert code(await read(ctx, "a.txt", limit=0)) == ErrorCode.INVALID_TOOL_PARAMS
    assert cache(ctx).check(tmp_path / "a.txt") == "unknown"


async def test_long_lines_are_cut_and_the_read_is_not_full(ctx: ToolContext,
                                                           tmp_path: Path) -> None:
    (tmp_path / "min.js").write_text("x" * 5000 + "\nshort\n")
    result = await read(ctx, "min.js")
    first = result.text.split("\n")[0]
    assert first.startswith("     1\t" + "x" * 2000 + "... [line cut: 5,000 characters")
    assert "1 line(s) longer than 2,000 characters were cut" in result.text
    entry = cache(ctx).entry(tmp_path / "min.js")
    assert entry is not None and not entry.last_read_was_full


async def test_output_is_capped_in_characters(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_text(("y" * 1900 + "\n") * 1000)
    result = await read(ctx, "wide.txt")
    assert len(result.text) < 300_000
    assert "To read more, call read_file with offset=" in result.text


async def test_empty_file(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "e.txt").write_text("")
    result = await read(ctx, "e.txt")
    assert not result.is_error and "(empty file" in result.text
    entry = cache(ctx).entry(tmp_path / "e.txt")
    assert entry is not None and entry.last_read_was_full and entry.last_read_cacheable


# -- selectors ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("selector", "expected"), [
    ("2-3", "     2\tb\n     3\tc"),
    ("L2..L3", "     2\tb\n     3\tc"),
    ("4", "     4\td\n     5\te"),
    ("2+1", "     2\tb"),
    ("-2", "     4\td\n     5\te"),
    ("raw", "a\nb\nc\nd\ne"),
    ("raw:2-3", "b\nc"),
    ("1,5", "     1\ta\n...\n     5\te"),
])
async def test_selectors(ctx: ToolContext, tmp_path: Path, selector: str, expected: str) -> None:
    (tmp_path / "s.txt").write_text("a\nb\nc\nd\ne\n")
    assert (await read(ctx, f"s.txt:{selector}")).text == expected


async def test_selector_errors(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "s.txt").write_text("a\nb\n")
    zero = await read(ctx, "s.txt:0")
    assert code(zero) == ErrorCode.INVALID_TOOL_PARAMS and "Valid forms" in zero.text
    both = await read(ctx, "s.txt:1-2", offset=1)
    assert code(both) == ErrorCode.INVALID_TOOL_PARAMS and "one or the other" in both.text
    past = await read(ctx, "s.txt:7-9")
    assert "past the end" in past.text
    assert code(await read(ctx, "s.txt:conflicts")) == ErrorCode.INVALID_TOOL_PARAMS


async def test_a_raw_full_read_counts_as_full(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "s.txt").write_text("a\n")
    await read(ctx, "s.txt:raw")
    entry = cache(ctx).entry(tmp_path / "s.txt")
    assert entry is not None and entry.last_read_was_full


async def test_a_real_file_named_like_a_selector_wins(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "notes:raw").write_text("literal\n")
    assert (await read(ctx, "notes:raw")).text == "     1\tliteral"


# -- paths ----------------------------------------------------------------------------------------

async def test_relative_home_and_escaped_paths(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "my file.txt").write_text("x\n")
    home = Path(os.environ["HOME"])
    (home / "h.txt").write_text("home\n")
    for spelling in ("sub/my\\ file.txt", "sub/../sub/my file.txt",
                     str(tmp_path / "sub" / "my file.txt")):
        assert (await read(ToolContext(cwd=tmp_path), spelling)).text == "     1\tx"
    assert (await read(ctx, "~/h.txt")).text == "     1\thome"


async def test_missing_file_suggests_close_names(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("a: 1\n")
    result = await read(ctx, "config.yml")
    assert code(result) == ErrorCode.FILE_NOT_FOUND
    assert str(tmp_path / "config.yaml") in result.text
    gone = await read(ctx, "nowhere/x.txt")
    assert code(gone) == ErrorCode.FILE_NOT_FOUND and "does not exist" in gone.text


async def test_directories_are_refused_with_an_ls_hint(ctx: ToolContext, tmp_path: Path) -> None:
    result = await read(ctx, ".")
    assert code(result) == ErrorCode.TARGET_IS_DIRECTORY and "ls" in result.text


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
async def test_a_fifo_is_refused_without_blocking(ctx: ToolContext, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    assert code(await read(ctx, "pipe")) == ErrorCode.TARGET_NOT_REGULAR_FILE


async def test_invocation_metadata(ctx: ToolContext, tmp_path: Path) -> None:
    tool = ReadFileTool()
    assert tool.kind is Kind.READ and tool.read_only and tool.concurrency_safe
    assert math.isinf(tool.max_output_chars or 0)
    assert tool.problems() == []
    inv = tool.build({"file_path": "x/../a.py:3-4"}, ctx)
    assert isinstance(inv, ReadFileInvocation)
    assert inv.locations() == [tmp_path / "a.py"]
    assert inv.tier() is Tier.READ and inv.default_permission() is Permission.ALLOW
    assert "a.py:3-4" in inv.description()


# -- binary and images ----------------------------------------------------------------------------

async def test_binary_files_are_refused_with_their_type(ctx: ToolContext,
                                                        tmp_path: Path) -> None:
    (tmp_path / "prog").write_bytes(b"\x7fELF" + bytes(100))
    (tmp_path / "blob").write_bytes(b"abc\x00def")
    (tmp_path / "doc.pdf").write_bytes(b"%PDF-1.7\n" + bytes(50))
    elf = await read(ctx, "prog")
    assert code(elf) == ErrorCode.READ_CONTENT_FAILURE and "(elf)" in elf.text
    assert "(binary)" in (await read(ctx, "blob")).text
    assert "pdftotext" in (await read(ctx, "doc.pdf")).text
    assert cache(ctx).check(tmp_path / "prog") == "unknown"


async def test_images_come_back_as_image_parts(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "p.png").write_bytes(PNG)
    (tmp_path / "j.jpg").write_bytes(b"\xff\xd8\xff\xe0" + bytes(30))
    (tmp_path / "w.webp").write_bytes(b"RIFF\x10\x00\x00\x00WEBPVP8 " + bytes(10))
    png = await read(ctx, "p.png")
    assert not png.is_error
    assert png.parts == [ImagePart(PNG, "image/png")]
    assert (await read(ctx, "j.jpg")).parts[0] == ImagePart((tmp_path / "j.jpg").read_bytes(),
                                                            "image/jpeg")
    webp = (await read(ctx, "w.webp")).parts[0]
    assert isinstance(webp, ImagePart) and webp.mime_type == "image/webp"
    entry = cache(ctx).entry(tmp_path / "p.png")
    assert entry is not None and not entry.last_read_cacheable


async def test_oversized_images_get_a_message(ctx: ToolContext, tmp_path: Path) -> None:
    with (tmp_path / "huge.png").open("wb") as f:
        f.write(PNG)
        f.truncate(6 * 2**20)
    result = await read(ctx, "huge.png")
    assert code(result) == ErrorCode.READ_CONTENT_FAILURE and "5 MB" in result.text


async def test_img_selector_on_text_is_explained(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "p.png").write_bytes(PNG)
    (tmp_path / "t.txt").write_text("x\n")
    assert isinstance((await read(ctx, "p.png:img")).parts[0], ImagePart)
    assert ":img" in (await read(ctx, "t.txt:img")).text


# -- the unchanged fast path ----------------------------------------------------------------------

async def test_an_unchanged_full_reread_answers_with_a_placeholder(ctx: ToolContext,
                                                                   tmp_path: Path) -> None:
    f = tmp_path / "a.py"
    f.write_text("x = 1\n")
    assert (await read(ctx, "a.py")).text == "     1\tx = 1"
    again = await read(ctx, "a.py")
    assert not again.is_error and "has not changed since you last read it" in again.text
    assert "offset" in again.text
    assert (await read(ctx, "a.py", offset=1)).text == "     1\tx = 1"
    assert (await read(ctx, "a.py:1")).text == "     1\tx = 1"
    f.write_text("x = 22\n")
    assert (await read(ctx, "a.py")).text == "     1\tx = 22"
    cache(ctx).disarm_history()
    assert (await read(ctx, "a.py")).text == "     1\tx = 22"


async def test_a_partial_read_never_gets_the_placeholder(ctx: ToolContext,
                                                         tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("z\n" * 2100)
    await read(ctx, "big.txt")
    assert "has not changed" not in (await read(ctx, "big.txt")).text


# -- notebooks ------------------------------------------------------------------------------------

def notebook(cells: list[dict[str, Any]], **meta: Any) -> str:
    return json.dumps({"cells": cells, "metadata": meta, "nbformat": 4, "nbformat_minor": 5})


def code_cell(source: str | list[str], outputs: list[dict[str, Any]] | None = None,
              count: int | None = None, cid: str | None = None) -> dict[str, Any]:
    cell: dict[str, Any] = {"cell_type": "code", "source": source, "metadata": {},
                            "execution_count": count, "outputs": outputs or []}
    if cid is not None:
        cell["id"] = cid
    return cell


async def test_notebooks_are_read_by_cell_through_the_notebook_layer(ctx: ToolContext,
                                                                      tmp_path: Path) -> None:
    cells = [
        {"cell_type": "markdown", "id": "intro", "source": ["# Title\n", "text"], "metadata": {}},
        code_cell(["import os\n", "print(1)"], count=3, cid="c1", outputs=[
            {"output_type": "stream", "name": "stdout", "text": ["1\n"]}]),
        code_cell("x = 2", count=4, cid="c2"),
    ]
    path = tmp_path / "n.ipynb"
    path.write_text(notebook(cells, language_info={"name": "python"}))
    session_cache = ctx.services.setdefault(ReadCache, ReadCache())  # as an Agent provides it
    assert isinstance(session_cache, ReadCache)
    whole = await read(ctx, "n.ipynb")
    assert "--- Markdown Cell intro ---" in whole.text
    assert "--- Code Cell c1 [3] ---" in whole.text and "1\n" in whole.text
    paged = await read(ctx, "n.ipynb", offset=2, limit=1)
    assert "c2" in paged.text and "c1 [3]" not in paged.text
    view = await read(ctx, "n.ipynb:cells=0-1:source")
    assert "intro" in view.text and "c1" in view.text and "c2 [4]" not in view.text
    entry = session_cache.entry(path)
    assert entry is not None and not entry.last_read_cacheable


async def test_notebook_line_selectors_refused_bad_json_reported(ctx: ToolContext,
                                                                 tmp_path: Path) -> None:
    (tmp_path / "n.ipynb").write_text(notebook([code_cell("x = 1")]))
    (tmp_path / "bad.ipynb").write_text("{not json")
    lines = await read(ctx, "n.ipynb:1-3")
    assert code(lines) == ErrorCode.INVALID_TOOL_PARAMS and "cells=" in lines.text
    bad = await read(ctx, "bad.ipynb")
    assert code(bad) == ErrorCode.NOTEBOOK_INVALID_JSON
    raw = await read(ctx, "n.ipynb:raw")
    assert json.loads(raw.text)["cells"][0]["source"] == "x = 1"


# -- internal URLs --------------------------------------------------------------------------------

class MemScheme:
    """A writable in-memory scheme: ``mem://name``."""

    name = "mem"
    read_only = False

    def __init__(self, store: dict[str, str]) -> None:
        self.store = store
        self.selectors: list[Selector | None] = []

    async def resolve(self, url: ParsedURL, selector: Selector | None) -> Resolved:
        self.selectors.append(selector)
        if url.host not in self.store:
            raise URLError(ErrorCode.FILE_NOT_FOUND, f"no {url.host!r} in memory")
        return Resolved(text=self.store[url.host], notes=("(from memory)",))

    def tier_for(self, url: ParsedURL) -> Tier:
        return Tier.READ

    async def write(self, url: ParsedURL, text: str) -> None:
        self.store[url.host] = text


async def test_urls_go_to_the_router(ctx: ToolContext) -> None:
    scheme = MemScheme({"a": "alpha\nbeta"})
    ctx.services[URLRouter] = URLRouter([scheme])
    result = await read(ctx, "mem://a")
    assert result.text == "alpha\nbeta\n\n(from memory)"
    await read(ctx, "mem://a:2-3")
    await read(ctx, "mem://a", offset=2, limit=5)
    assert scheme.selectors[1] is not None and scheme.selectors[1].text == "2-3"
    paged = scheme.selectors[2]
    assert paged is not None and paged.resolve(100) == [(2, 6)]
    missing = await read(ctx, "mem://zzz")
    assert code(missing) == ErrorCode.FILE_NOT_FOUND
    inv = ReadFileTool().build({"file_path": "mem://a"}, ctx)
    assert isinstance(inv, ReadFileInvocation) and inv.tier() is Tier.READ
    assert inv.locations() == [Path("mem://a")]  # a scheme that cannot say: the address


async def test_unknown_schemes_are_refused_up_front(ctx: ToolContext) -> None:
    result = await read(ctx, "nope://thing")
    assert code(result) == ErrorCode.INVALID_TOOL_PARAMS and "Unknown URL scheme" in result.text
    assert isinstance(ctx.service(URLRouter), URLRouter)


# -- large files, read in chunks ------------------------------------------------------------------

STREAMED_READS: list[tuple[str, dict[str, Any]]] = [
    ("big.txt", {}), ("big.txt", {"offset": 4990}), ("big.txt", {"offset": 7, "limit": 3}),
    ("big.txt:-30", {}), ("big.txt:10-20,4000-4005", {}), ("big.txt:4999-", {}),
    ("big.txt", {"offset": 9000}), ("big.txt", {"limit": 100_000}), ("big.txt:raw", {}),
    ("crlf.txt:-3", {}), ("crlf.txt", {"offset": 2}),
]


@pytest.mark.parametrize(("file_path", "kw"), STREAMED_READS)
async def test_a_large_file_reads_the_same_in_chunks(file_path: str, kw: dict[str, Any],
                                                     tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_ext.tools import read_file as module
    (tmp_path / "big.txt").write_text("".join(f"{i} " + "w" * (i % 300) + "\n"
                                              for i in range(1, 5001)))
    (tmp_path / "crlf.txt").write_bytes(b"first\r\n" + b"z" * 3000 + b"\r\nlast")
    results = []
    for threshold in (math.inf, 0):
        monkeypatch.setattr(module, "STREAM_BYTES", threshold)
        fresh = ToolContext(cwd=tmp_path)
        result = await read(fresh, file_path, **kw)
        entry = cache(fresh).entry(tmp_path / file_path.split(":", maxsplit=1)[0])
        results.append((result.text, code(result), entry and (
            entry.digest, entry.last_read_was_full)))
    assert results[0] == results[1]
    assert results[0][0]


async def test_a_large_file_keeps_only_the_lines_shown(tmp_path: Path, ctx: ToolContext,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_ext.fs import lines as lines_module
    kept: list[int] = []
    real = lines_module.pick_lines

    def counting(f: Any, scan: Any, wanted: set[int]) -> dict[int, str]:
        kept.append(len(wanted))
        return real(f, scan, wanted)

    monkeypatch.setattr("agent_ext.tools.read_file.pick_lines", counting)
    (tmp_path / "huge.log").write_bytes(b"entry\n" * 600_000)
    tail = await read(ctx, "huge.log:-5")
    assert tail.text.startswith("599996\tentry") and tail.text.endswith("600000\tentry")
    whole = await read(ctx, "huge.log")
    assert "up to line 2000 of 600000" in whole.text and "offset=2001" in whole.text
    assert max(kept) <= DEFAULT_LIMIT + 1


async def test_a_text_file_over_the_limit_is_refused_with_shell_hints(
        ctx: ToolContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_ext.tools import read_file as module
    monkeypatch.setattr(module, "MAX_TEXT_BYTES", 2 * 2**20)
    (tmp_path / "huge.log").write_bytes(b"line\n" * 600_000)
    result = await read(ctx, "huge.log")
    assert code(result) == ErrorCode.READ_CONTENT_FAILURE
    assert "2.9 MB, over the 2 MB limit" in result.text and "tail" in result.text
    assert cache(ctx).check(tmp_path / "huge.log") == "unknown"

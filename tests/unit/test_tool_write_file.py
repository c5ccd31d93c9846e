"""write_file on real files: create, overwrite only after a full read, exact content, stale refusals."""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_ext.core import (
    ErrorCode,
    ExecControl,
    Kind,
    Permission,
    Tier,
    ToolContext,
    ToolResult,
)
from agent_ext.fs import EditHistory, ReadCache
from agent_ext.tools.read_file import ReadFileTool
from agent_ext.tools.write_file import WriteFileInvocation, WriteFileTool
from agent_ext.urls import URLRouter

from .test_tool_edit import ReadOnlyScheme
from .test_tool_read_file import MemScheme


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


async def read(ctx: ToolContext, file_path: str, **kw: Any) -> ToolResult:
    built = ReadFileTool().build({"file_path": file_path, **kw}, ctx)
    assert not isinstance(built, ToolResult), built.text
    return await built.execute(ExecControl())


async def write(ctx: ToolContext, file_path: str, content: str, *,
                during_approval: Callable[[], None] | None = None,
                modified: str | None = None) -> ToolResult:
    """One write the way the pipeline runs it: build, preflight, diff shown, approved, executed."""
    built = WriteFileTool().build({"file_path": file_path, "content": content}, ctx)
    if isinstance(built, ToolResult):
        return built
    assert isinstance(built, WriteFileInvocation)
    early = await built.preflight()
    if early is not None:
        return early
    await built.confirmation_details()
    if during_approval is not None:
        during_approval()
    chosen = built.with_modification(modified) if modified is not None else built
    return await chosen.execute(ExecControl())


def code(result: ToolResult) -> str | None:
    return result.error.code if result.error else None


async def test_create_writes_exactly_the_content(ctx: ToolContext, tmp_path: Path) -> None:
    result = await write(ctx, "pkg/sub/mod.py", "x = 1  \n\ty = 2")
    f = tmp_path / "pkg" / "sub" / "mod.py"
    assert not result.is_error
    assert result.text == f"Successfully created and wrote to new file: {f} (2 lines)."
    assert f.read_bytes() == b"x = 1  \n\ty = 2"
    assert stat.S_IMODE(f.stat().st_mode) & 0o600 == 0o600
    history = ctx.service(EditHistory)
    assert history is not None and history.entries()[-1].created


async def test_overwriting_needs_a_full_read(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("".join(f"{i}\n" for i in range(10)))
    never = await write(ctx, "a.txt", "new\n")
    assert code(never) == ErrorCode.EDIT_REQUIRES_PRIOR_READ and "Read all of it" in never.text
    await read(ctx, "a.txt", offset=1, limit=3)
    partial = await write(ctx, "a.txt", "new\n")
    assert code(partial) == ErrorCode.EDIT_REQUIRES_PRIOR_READ and "only part" in partial.text
    assert f.read_text().startswith("0\n1\n")
    await read(ctx, "a.txt")
    done = await write(ctx, "a.txt", "new\n")
    assert done.text == f"Successfully overwrote file: {f} (1 line)."
    assert f.read_text() == "new\n"


@pytest.mark.parametrize(("raw", "content", "expected"), [
    (b"a\r\nb\r\n", "x\ny\n", b"x\r\ny\r\n"),
    (b"\xef\xbb\xbfa\n", "x\n", b"\xef\xbb\xbfx\n"),
    ("a\n".encode("utf-16"), "x\n", "x\n".encode("utf-16")),
    (b"a\n", "x\r\ny\r\n", b"x\r\ny\r\n"),
    (b"a\r\n", "x\r\ny\n", b"x\r\ny\n"),
])
async def test_overwrite_keeps_the_files_style(ctx: ToolContext, tmp_path: Path, raw: bytes,
                                               content: str, expected: bytes) -> None:
    f = tmp_path / "f.txt"
    f.write_bytes(raw)
    await read(ctx, "f.txt")
    assert not (await write(ctx, "f.txt", content)).is_error
    assert f.read_bytes() == expected


async def test_the_mode_is_kept(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "run.sh"
    f.write_text("echo a\n")
    f.chmod(0o755)
    await read(ctx, "run.sh")
    await write(ctx, "run.sh", "echo b\n")
    assert stat.S_IMODE(f.stat().st_mode) == 0o755


async def test_identical_content_writes_nothing(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("same\n")
    before = f.stat().st_mtime_ns
    await read(ctx, "a.txt")
    result = await write(ctx, "a.txt", "same\n")
    assert not result.is_error and "already has exactly this content" in result.text
    assert f.stat().st_mtime_ns == before and ctx.service(EditHistory) is None


async def test_stale_overwrites_are_refused(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("v1\n")
    await read(ctx, "a.txt")
    f.write_text("v2 by the user\n")
    assert code(await write(ctx, "a.txt", "mine\n")) == ErrorCode.FILE_CHANGED_SINCE_READ
    await read(ctx, "a.txt")
    waited = await write(ctx, "a.txt", "mine\n", during_approval=lambda: f.write_text("v3\n"))
    assert code(waited) == ErrorCode.FILE_CHANGED_SINCE_READ and f.read_text() == "v3\n"
    created = await write(ctx, "fresh.txt", "mine\n",
                          during_approval=lambda: (tmp_path / "fresh.txt").write_text("theirs"))
    assert code(created) == ErrorCode.ATTEMPT_TO_CREATE_EXISTING_FILE
    assert (tmp_path / "fresh.txt").read_text() == "theirs"


async def test_directories_are_refused(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    assert code(await write(ctx, "d", "x")) == ErrorCode.TARGET_IS_DIRECTORY


async def test_confirmation_and_edit_then_approve(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("one\n")
    await read(ctx, "a.txt")
    inv = WriteFileTool().build({"file_path": "a.txt", "content": "two\n"}, ctx)
    assert isinstance(inv, WriteFileInvocation)
    details = await inv.confirmation_details()
    assert details.kind == "edit" and details.title == "Overwrite a.txt"
    assert (details.original, details.proposed) == ("one\n", "two\n")
    assert details.diff is not None and "-one\n+two\n" in details.diff
    result = await write(ctx, "a.txt", "two\n", modified="three\n")
    assert "The user edited your content" in result.text and "three" in result.text
    assert f.read_text() == "three\n"
    new = WriteFileTool().build({"file_path": "n.txt", "content": "x"}, ctx)
    assert isinstance(new, WriteFileInvocation)
    assert (await new.confirmation_details()).title == "Create n.txt"


async def test_after_writing_the_file_counts_as_read(ctx: ToolContext, tmp_path: Path) -> None:
    await write(ctx, "a.txt", "first\n")
    assert not (await write(ctx, "a.txt", "second\n")).is_error
    cache = ctx.service(ReadCache)
    assert cache is not None and cache.check(tmp_path / "a.txt") == "fresh"


async def test_invocation_metadata(ctx: ToolContext, tmp_path: Path) -> None:
    tool = WriteFileTool()
    assert tool.kind is Kind.EDIT and not tool.read_only and tool.problems() == []
    inv = tool.build({"file_path": "a/../b.txt", "content": ""}, ctx)
    assert isinstance(inv, WriteFileInvocation)
    assert inv.locations() == [tmp_path / "b.txt"]
    assert inv.tier() is Tier.WRITE and inv.default_permission() is Permission.ASK
    bad = tool.build({"file_path": "b.txt:raw", "content": ""}, ctx)
    assert isinstance(bad, ToolResult) and code(bad) == ErrorCode.INVALID_TOOL_PARAMS


async def test_urls(ctx: ToolContext) -> None:
    store = {"have": "old"}
    ctx.services[URLRouter] = URLRouter([MemScheme(store), ReadOnlyScheme()])
    assert not (await write(ctx, "mem://have", "new")).is_error
    assert not (await write(ctx, "mem://fresh", "made")).is_error
    assert store == {"have": "new", "fresh": "made"}
    refused = await write(ctx, "ro://x", "y")
    assert code(refused) == ErrorCode.FILE_WRITE_FAILURE and "read-only" in refused.text

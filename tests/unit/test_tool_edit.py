"""edit on real files: matching, encodings kept, the diff shown, and every stale write refused."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_ext import Agent
from agent_ext.core import (
    ErrorCode,
    ExecControl,
    Kind,
    Permission,
    Tier,
    ToolContext,
    ToolResult,
)
from agent_ext.fs import AtomicWriteError, EditHistory, ReadCache
from agent_ext.models import ScriptedModel
from agent_ext.tools import _change as change_mod
from agent_ext.tools.edit import EditInvocation, EditTool
from agent_ext.tools.read_file import ReadFileTool
from agent_ext.urls import ParsedURL, Resolved, URLRouter

from .test_tool_read_file import MemScheme


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


async def read(ctx: ToolContext, file_path: str, **kw: Any) -> ToolResult:
    built = ReadFileTool().build({"file_path": file_path, **kw}, ctx)
    assert not isinstance(built, ToolResult), built.text
    return await built.execute(ExecControl())


async def edit(ctx: ToolContext, file_path: str, old: str, new: str, *,
               replace_all: bool = False, during_approval: Callable[[], None] | None = None,
               modified: str | None = None, ask: bool = True) -> ToolResult:
    """One edit the way the pipeline runs it: build, preflight, diff shown, approved, executed."""
    built = EditTool().build({"file_path": file_path, "old_string": old, "new_string": new,
                              "replace_all": replace_all}, ctx)
    if isinstance(built, ToolResult):
        return built
    assert isinstance(built, EditInvocation)
    if ask:
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


def history(ctx: ToolContext) -> EditHistory:
    found = ctx.service(EditHistory)
    assert found is not None
    return found


# -- the basics -----------------------------------------------------------------------------------

async def test_edit_after_a_read_and_the_result_text(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "a.py"
    f.write_text("".join(f"line {i}\n" for i in range(1, 21)))
    await read(ctx, "a.py")
    result = await edit(ctx, "a.py", "line 10\n", "line ten\n")
    assert not result.is_error, result.text
    assert result.text == (
        f"The file {f} has been updated. Showing lines 6-14 of 20 from the edited file:\n\n"
        "---\n\n" + "\n".join(f"{n:>6}\tline {'ten' if n == 10 else n}" for n in range(6, 15)))
    assert "line ten\n" in f.read_text()
    assert result.file_paths == [str(f)]
    assert "+line ten" in str(result.display)


async def test_editing_needs_a_prior_read_but_a_partial_one_is_enough(ctx: ToolContext,
                                                                      tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("a\nb\nc\n")
    refused = await edit(ctx, "a.txt", "b", "B")
    assert code(refused) == ErrorCode.EDIT_REQUIRES_PRIOR_READ
    assert f.read_text() == "a\nb\nc\n"
    await read(ctx, "a.txt", offset=2, limit=1)
    assert not (await edit(ctx, "a.txt", "b", "B")).is_error
    assert f.read_text() == "a\nB\nc\n"


async def test_a_second_edit_needs_no_new_read(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one two\n")
    await read(ctx, "a.txt")
    assert not (await edit(ctx, "a.txt", "one", "1")).is_error
    assert not (await edit(ctx, "a.txt", "two", "2")).is_error
    assert (tmp_path / "a.txt").read_text() == "1 2\n"


async def test_new_string_is_written_as_given(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("title\n")
    await read(ctx, "a.md")
    await edit(ctx, "a.md", "title", "title  \n\ttabbed   \n$1 \\n")
    assert (tmp_path / "a.md").read_text() == "title  \n\ttabbed   \n$1 \\n\n"


async def test_replace_all_and_occurrence_errors(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "a.py"
    f.write_text("x = 1\ny = x\nz = x\n")
    await read(ctx, "a.py")
    many = await edit(ctx, "a.py", "= x", "= w")
    assert code(many) == ErrorCode.EDIT_EXPECTED_OCCURRENCE_MISMATCH
    assert "2 times" in many.text and "replace_all" in many.text
    none = await edit(ctx, "a.py", "nothing like this", "q")
    assert code(none) == ErrorCode.EDIT_NO_OCCURRENCE_FOUND and "Re-read" in none.text
    same = await edit(ctx, "a.py", "y = x", "y = x")
    assert code(same) == ErrorCode.EDIT_NO_CHANGE
    assert f.read_text() == "x = 1\ny = x\nz = x\n"
    done = await edit(ctx, "a.py", "= x", "= w", replace_all=True)
    assert not done.is_error and "Replaced 2 occurrences" in done.text
    assert f.read_text() == "x = 1\ny = w\nz = w\n"


async def test_a_fuzzy_match_says_how_it_matched(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "a.py"
    f.write_text('def f():\n    return "hi"\n')
    await read(ctx, "a.py")
    result = await edit(ctx, "a.py", "return “hi”", "return 'bye'")
    assert not result.is_error
    assert "did not match exactly" in result.text and "quotes" in result.text
    assert f.read_text() == "def f():\n    return 'bye'\n"


async def test_invocation_metadata(ctx: ToolContext, tmp_path: Path) -> None:
    tool = EditTool()
    assert tool.kind is Kind.EDIT and not tool.read_only and not tool.concurrency_safe
    assert tool.problems() == []
    inv = tool.build({"file_path": "d/../a.py", "old_string": "a", "new_string": "b"}, ctx)
    assert isinstance(inv, EditInvocation)
    assert inv.locations() == [tmp_path / "a.py"]
    assert inv.tier() is Tier.WRITE and inv.default_permission() is Permission.ASK
    selector = tool.build({"file_path": "a.py:3-4", "old_string": "a", "new_string": "b"}, ctx)
    assert isinstance(selector, ToolResult) and code(selector) == ErrorCode.INVALID_TOOL_PARAMS
    assert "read selector" in selector.text


async def test_without_an_approval_step_it_still_writes(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    await read(ctx, "a.txt")
    assert not (await edit(ctx, "a.txt", "a", "b", ask=False)).is_error
    assert (tmp_path / "a.txt").read_text() == "b\n"


# -- creating -------------------------------------------------------------------------------------

async def test_create_with_an_empty_old_string(ctx: ToolContext, tmp_path: Path) -> None:
    result = await edit(ctx, "new/deep/f.py", "", "print('hi')\n")
    f = tmp_path / "new" / "deep" / "f.py"
    assert not result.is_error
    assert result.text.startswith(f"Created new file {f} with the provided content.")
    assert "     1\tprint('hi')" in result.text
    assert f.read_bytes() == b"print('hi')\n"
    assert history(ctx).entries()[-1].created


async def test_create_and_existence_rules(ctx: ToolContext, tmp_path: Path) -> None:
    missing = await edit(ctx, "nope.txt", "x", "y")
    assert code(missing) == ErrorCode.FILE_NOT_FOUND and "empty old_string" in missing.text
    (tmp_path / "have.txt").write_text("x\n")
    await read(ctx, "have.txt")
    exists = await edit(ctx, "have.txt", "", "y")
    assert code(exists) == ErrorCode.ATTEMPT_TO_CREATE_EXISTING_FILE
    assert (tmp_path / "have.txt").read_text() == "x\n"


async def test_a_file_created_during_the_approval_wait_is_kept(ctx: ToolContext,
                                                               tmp_path: Path) -> None:
    f = tmp_path / "race.txt"
    result = await edit(ctx, "race.txt", "", "mine\n",
                        during_approval=lambda: f.write_text("theirs\n"))
    assert code(result) == ErrorCode.ATTEMPT_TO_CREATE_EXISTING_FILE
    assert f.read_text() == "theirs\n"


# -- encodings, line endings, modes, symlinks -----------------------------------------------------

@pytest.mark.parametrize(("raw", "expected"), [
    (b"a\r\nb\r\n", b"a\r\nB\r\n"),
    (b"\xef\xbb\xbfa\nb\n", b"\xef\xbb\xbfa\nB\n"),
    ("\ufeffa\r\nb\r\n".encode("utf-16"), "\ufeffa\r\nB\r\n".encode("utf-16")),
    (b"a\rb\r", b"a\rB\r"),
    (b"a\r\nb\nc\r\nd\r\n", b"a\r\nb\nC\r\nd\r\n"),
    ("caf\u00e9\nb\n".encode("latin-1"), "caf\u00e9\nB\n".encode("latin-1")),
])
async def test_encoding_bom_and_line_endings_are_kept(ctx: ToolContext, tmp_path: Path,
                                                      raw: bytes, expected: bytes) -> None:
    f = tmp_path / "f.txt"
    f.write_bytes(raw)
    await read(ctx, "f.txt")
    old, new = ("c", "C") if b"d" in raw else ("b", "B")
    result = await edit(ctx, "f.txt", old, new)
    assert not result.is_error, result.text
    assert f.read_bytes() == expected


async def test_characters_the_encoding_cannot_hold(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "l.txt"
    f.write_bytes("caf\u00e9\n".encode("latin-1"))
    await read(ctx, "l.txt")
    result = await edit(ctx, "l.txt", "caf", "\u20ac")
    assert code(result) == ErrorCode.EDIT_PREPARATION_FAILURE and "latin" in result.text
    assert f.read_bytes() == "caf\u00e9\n".encode("latin-1")


async def test_the_mode_is_kept(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "run.sh"
    f.write_text("echo a\n")
    f.chmod(0o751)
    await read(ctx, "run.sh")
    await edit(ctx, "run.sh", "a", "b")
    assert stat.S_IMODE(f.stat().st_mode) == 0o751 and f.read_text() == "echo b\n"


async def test_symlinks_are_written_through(ctx: ToolContext, tmp_path: Path) -> None:
    target = tmp_path / "real.txt"
    target.write_text("v1\n")
    (tmp_path / "link.txt").symlink_to(target)
    await read(ctx, "link.txt")
    assert not (await edit(ctx, "link.txt", "v1", "v2")).is_error
    assert (tmp_path / "link.txt").is_symlink() and target.read_text() == "v2\n"


# -- stale writes ---------------------------------------------------------------------------------

async def test_changed_between_read_and_edit(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("a\n")
    await read(ctx, "a.txt")
    f.write_text("a and more\n")
    result = await edit(ctx, "a.txt", "a", "b")
    assert code(result) == ErrorCode.FILE_CHANGED_SINCE_READ and "read_file" in result.text
    assert f.read_text() == "a and more\n"


async def test_changed_during_the_approval_wait(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("a\n")
    await read(ctx, "a.txt")
    result = await edit(ctx, "a.txt", "a", "b", during_approval=lambda: f.write_text("user\n"))
    assert code(result) == ErrorCode.FILE_CHANGED_SINCE_READ
    assert f.read_text() == "user\n"
    assert ctx.service(EditHistory) is None


async def test_same_size_change_with_the_old_mtime_is_caught(ctx: ToolContext,
                                                             tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("aaaa\n")
    await read(ctx, "a.txt")

    def sneaky() -> None:
        st = f.stat()
        f.write_text("bbbb\n")
        os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))

    result = await edit(ctx, "a.txt", "aaaa", "cccc", during_approval=sneaky)
    assert code(result) == ErrorCode.FILE_CHANGED_SINCE_READ
    assert f.read_text() == "bbbb\n"


async def test_deleted_during_the_approval_wait(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("a\n")
    await read(ctx, "a.txt")
    result = await edit(ctx, "a.txt", "a", "b", during_approval=f.unlink)
    assert code(result) == ErrorCode.FILE_CHANGED_SINCE_READ
    assert not f.exists()


async def test_turned_into_a_directory(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("a\n")
    await read(ctx, "a.txt")

    def swap() -> None:
        f.unlink()
        f.mkdir()

    result = await edit(ctx, "a.txt", "a", "b", during_approval=swap)
    assert code(result) == ErrorCode.TARGET_IS_DIRECTORY
    assert f.is_dir() and list(f.iterdir()) == []


async def test_a_swapped_symlink_is_refused(ctx: ToolContext, tmp_path: Path) -> None:
    one, two = tmp_path / "one.txt", tmp_path / "two.txt"
    one.write_text("same\n")
    two.write_text("same\n")
    link = tmp_path / "link.txt"
    link.symlink_to(one)
    await read(ctx, "link.txt")
    await read(ctx, "two.txt")

    def swap() -> None:
        link.unlink()
        link.symlink_to(two)

    result = await edit(ctx, "link.txt", "same", "changed", during_approval=swap)
    assert code(result) == ErrorCode.FILE_CHANGED_SINCE_READ and "symlink" in result.text
    assert one.read_text() == two.read_text() == "same\n"


async def test_replaced_by_another_file(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("a\n")
    await read(ctx, "a.txt")

    def editor_save() -> None:
        (tmp_path / "tmp").write_text("a\n")
        (tmp_path / "tmp").replace(f)

    result = await edit(ctx, "a.txt", "a", "b", during_approval=editor_save)
    assert code(result) == ErrorCode.FILE_CHANGED_SINCE_READ
    assert f.read_text() == "a\n"


# -- approval: the diff and edit-then-approve -----------------------------------------------------

async def test_confirmation_details_show_a_unified_diff(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "a.py"
    f.write_text("a = 1\nb = 2\n")
    await read(ctx, "a.py")
    inv = EditTool().build({"file_path": "a.py", "old_string": "b = 2", "new_string": "b = 3"},
                           ctx)
    assert isinstance(inv, EditInvocation)
    details = await inv.confirmation_details()
    assert details.kind == "edit" and details.tool_name == "edit"
    assert details.file_path == str(f) and details.title == "Edit a.py"
    assert details.original == "a = 1\nb = 2\n" and details.proposed == "a = 1\nb = 3\n"
    assert details.diff is not None
    assert details.diff.startswith(f"--- {f}\t(current)\n+++ {f}\t(proposed)\n")
    assert "-b = 2\n+b = 3\n" in details.diff
    assert "+1 -1" in details.summary
    assert f.read_text() == "a = 1\nb = 2\n"


async def test_a_failing_edit_is_reported_before_anyone_is_asked(ctx: ToolContext,
                                                                 tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("a\n")
    await read(ctx, "a.py")
    inv = EditTool().build({"file_path": "a.py", "old_string": "zzz", "new_string": "b"}, ctx)
    assert isinstance(inv, EditInvocation)
    early = await inv.preflight()
    assert early is not None and code(early) == ErrorCode.EDIT_NO_OCCURRENCE_FOUND
    details = await inv.confirmation_details()
    assert details.kind == "info" and "not found" in details.summary


async def test_edit_then_approve_writes_the_users_text(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_bytes(b"a\r\nb\r\n")
    await read(ctx, "a.txt")
    result = await edit(ctx, "a.txt", "b", "B", modified="a\nuser's line\n")
    assert not result.is_error
    assert "The user edited your proposed change" in result.text and "user's line" in result.text
    assert f.read_bytes() == b"a\r\nuser's line\r\n"


async def test_edit_then_approve_is_still_checked_for_staleness(ctx: ToolContext,
                                                                tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("a\n")
    await read(ctx, "a.txt")
    result = await edit(ctx, "a.txt", "a", "b", modified="c\n",
                        during_approval=lambda: f.write_text("other\n"))
    assert code(result) == ErrorCode.FILE_CHANGED_SINCE_READ and f.read_text() == "other\n"


# -- bookkeeping ----------------------------------------------------------------------------------

async def test_history_and_read_cache_are_updated(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("old\n")
    await read(ctx, "a.txt")
    control = ExecControl()
    control.call_id = "call_7"  # type: ignore[attr-defined]
    inv = EditTool().build({"file_path": "a.txt", "old_string": "old", "new_string": "new"}, ctx)
    assert isinstance(inv, EditInvocation)
    assert not (await inv.execute(control)).is_error
    [entry] = history(ctx).entries()
    assert (entry.tool, entry.call_id, entry.created) == ("edit", "call_7", False)
    cache = ctx.service(ReadCache)
    assert cache is not None and cache.check(f) == "fresh"
    assert history(ctx).undo().ok and f.read_text() == "old\n"


async def test_write_failures_are_reported(ctx: ToolContext, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    await read(ctx, "a.txt")

    def full_disk(path: object, data: bytes, **kw: object) -> os.stat_result:
        raise AtomicWriteError(28, f"Could not write {path}: the disk is full.", tmp_path)

    monkeypatch.setattr(change_mod, "atomic_write", full_disk)
    result = await edit(ctx, "a.txt", "a", "b")
    assert code(result) == ErrorCode.FILE_WRITE_FAILURE
    assert result.text.startswith("Error executing edit:") and "disk is full" in result.text
    assert (tmp_path / "a.txt").read_text() == "a\n"


# -- internal URLs --------------------------------------------------------------------------------

class ReadOnlyScheme:
    name = "ro"
    read_only = True

    async def resolve(self, url: ParsedURL, selector: object) -> Resolved:
        return Resolved(text="fixed")

    def tier_for(self, url: ParsedURL) -> Tier:
        return Tier.READ


async def test_edit_a_writable_url(ctx: ToolContext) -> None:
    store = {"c": "x = 1\ny = 2\n"}
    ctx.services[URLRouter] = URLRouter([MemScheme(store), ReadOnlyScheme()])
    result = await edit(ctx, "mem://c", "y = 2", "y = 3")
    assert not result.is_error and "mem://c has been updated" in result.text
    assert store["c"] == "x = 1\ny = 3\n"
    stale = await edit(ctx, "mem://c", "x = 1", "x = 0",
                       during_approval=lambda: store.update(c="changed"))
    assert code(stale) == ErrorCode.FILE_CHANGED_SINCE_READ and store["c"] == "changed"
    refused = await edit(ctx, "ro://thing", "fixed", "loose")
    assert code(refused) == ErrorCode.FILE_WRITE_FAILURE and "read-only" in refused.text
    inv = EditTool().build({"file_path": "mem://c", "old_string": "a", "new_string": "b"}, ctx)
    assert isinstance(inv, EditInvocation) and inv.tier() is Tier.WRITE
    assert inv.locations() == [Path("mem://c")]


async def test_a_change_to_a_file_never_read_shows_it_so_the_next_try_lands(
        tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (tmp_path / "hidden.txt").write_text("private value\n")
    (tmp_path / "asked.txt").write_text("ask first\n")
    agent = Agent(ScriptedModel([]), cwd=tmp_path, mode="acceptEdits", plugins=False, mcp=False,
                  rules={"deny": ["Read(./hidden.txt)"], "ask": ["Read(./asked.txt)"]})
    change = {"file_path": "calc.py", "old_string": "a - b", "new_string": "a + b"}
    try:
        first = await agent.call_tool("edit", change)
        assert first.error is not None and first.error.code == "edit_requires_prior_read"
        assert "return a - b" in first.text and "It is read now" in first.text
        assert first.text.startswith(
            f"{tmp_path / 'calc.py'} had not been read in this session, so nothing was changed. "
            "It is read now: here is all of it (2 lines). Make the change again against this "
            "content. ")
        assert "Your old_string matches (line 2): send the same edit again" in first.text
        assert (tmp_path / "calc.py").read_text().endswith("a - b\n")  # nothing changed yet
        second = await agent.call_tool("edit", change)
        assert not second.is_error, second.text
        assert (tmp_path / "calc.py").read_text().endswith("a + b\n")
        for name, text in (("hidden.txt", "private value"), ("asked.txt", "ask first")):
            refused = await agent.call_tool("edit", {"file_path": name, "old_string": "a",
                                                     "new_string": "b"})
            assert refused.is_error and text not in refused.text
    finally:
        await agent.aclose()


# -- files too large to edit ----------------------------------------------------------------------

@pytest.mark.parametrize(("lines", "width", "says"), [
    (700_000, 9, "MB with 700,000 lines"),       # over the size limit: lines counted in chunks
    (120_000, 2, "with 120,000 lines"),          # under the size limit, over the line limit
])
async def test_a_file_too_large_is_refused_with_a_shell_recipe(
        ctx: ToolContext, tmp_path: Path, lines: int, width: int, says: str) -> None:
    path = tmp_path / "big.log"
    path.write_bytes((b"x" * (width - 1) + b"\n") * lines)
    before = path.read_bytes()
    await read(ctx, "big.log")
    result = await edit(ctx, "big.log", "x" * (width - 1) + "\n", "y\n")
    assert code(result) == "edit_preparation_failure"
    assert says in result.text and "sed -i" in result.text and "nothing was changed" in result.text
    assert "up to 5 MB and 100,000 lines" in result.text
    assert path.read_bytes() == before


async def test_a_file_at_the_line_limit_is_edited(ctx: ToolContext, tmp_path: Path) -> None:
    path = tmp_path / "ok.txt"
    path.write_text("line\n" * 99_999 + "target\n")
    await read(ctx, "ok.txt", offset=100_000)
    result = await edit(ctx, "ok.txt", "target\n", "done\n")
    assert code(result) is None, result.text
    assert path.read_text().endswith("line\ndone\n")


async def test_a_blind_edit_whose_old_string_is_wrong_is_shown_the_closest_lines(
        tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text('def add(a, b):\n    """Sum."""\n    return a - b\n')
    agent = Agent(ScriptedModel([]), cwd=tmp_path, mode="acceptEdits", plugins=False, mcp=False)
    try:
        first = await agent.call_tool("edit", {"file_path": "calc.py",
                                               "old_string": "def add(a, b): return a - b",
                                               "new_string": "def add(a, b): return a + b"})
    finally:
        await agent.aclose()
    assert "It is read now" in first.text and "old_string was not found" in first.text
    assert "The closest text in the file is at lines 1-3" in first.text
    assert "No edit was made" not in first.text

"""The ls tool on a real tree: ordering, sizes, hidden and ignored entries, caps and errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_ext.core import ErrorCode, ExecControl, Kind, Tier, ToolContext, ToolResult
from agent_ext.tools._ignore import ReadDenied
from agent_ext.tools.ls import MAX_ENTRIES, LsInvocation, LsTool

from .test_tool_grep import build_tree

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return build_tree(tmp_path / "tree")


async def ls(root: Path, args: dict[str, Any], ctx: ToolContext | None = None) -> ToolResult:
    built = LsTool().build(args, ctx or ToolContext(cwd=root))
    if isinstance(built, ToolResult):
        return built
    return await built.execute(ExecControl())


def listed(result: ToolResult) -> list[str]:
    lines = result.text.split("\n")
    start = lines.index("---") + 1
    end = lines.index("---", start) if "---" in lines[start:] else len(lines)
    return lines[start:end]


async def test_directories_first_sizes_links_and_skipped_entries(tree: Path) -> None:
    result = await ls(tree, {})
    assert result.error is None
    lines = listed(result)
    assert lines[:5] == ["docs/", "loop/ -> .", "rules/", "sub/", "ünï/"]
    assert "a.py  (77 B)" in lines
    assert "big.txt  (11.7 KB)" in lines
    assert "link.py -> a.py  (77 B)" in lines
    names = {line.split("  ")[0] for line in lines}
    for absent in (".env", ".gitignore", ".hid/", ".git/", "build/", "gen.py", "x.log",
                   "excluded.txt", "dot_ignored.txt", "anchored.txt"):
        assert absent not in names, absent
    assert "Not shown: 6 hidden (dot) and 8 .gitignored entries; pass all=true" in result.text
    assert result.text.startswith(f"{tree} (the working directory): 5 directories, 27 file(s)")


async def test_all_shows_hidden_and_marks_ignored(tree: Path) -> None:
    lines = listed(await ls(tree, {"all": True}))
    assert ".git/" in lines
    assert ".env  (11 B)" in lines
    assert "build/  [ignored]" in lines
    assert "x.log  (12 B)  [ignored]" in lines
    assert "keep.log  (9 B)" in lines


async def test_subdirectory_ignore_globs_and_broken_links(tree: Path) -> None:
    (tree / "sub" / "gone").symlink_to("missing-target")
    result = await ls(tree, {"path": "sub", "ignore": ["deep", "*.txt"]})
    assert listed(result) == ["up/ -> ..", "gone -> missing-target (broken link)", "keep.md  (14 B)"]
    assert result.text.startswith("sub/: 1 directory, 2 file(s)")
    assert "2 entries matched `ignore`" in result.text
    coerced = await ls(tree, {"path": "sub", "ignore": '["deep/"]'})
    assert "deep/" not in listed(coerced)


async def test_errors(tree: Path) -> None:
    file = await ls(tree, {"path": "a.py"})
    assert file.error is not None
    assert file.error.code == ErrorCode.PATH_IS_NOT_A_DIRECTORY
    assert "use read_file" in file.text
    missing = await ls(tree, {"path": "nope"})
    assert missing.error is not None
    assert missing.error.code == ErrorCode.FILE_NOT_FOUND
    bad = await ls(tree, {"ignore": ["*.{py"]})
    assert bad.error is not None
    assert bad.error.code == ErrorCode.INVALID_TOOL_PARAMS


async def test_empty_capped_and_denied(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert (await ls(tmp_path, {"path": "empty"})).text == "empty/ is empty."
    (tmp_path / "hid").mkdir()
    (tmp_path / "hid" / ".x").write_text("")
    assert (await ls(tmp_path, {"path": "hid"})).text.startswith("hid/ has no entries to show.")
    big = tmp_path / "big"
    big.mkdir()
    for i in range(MAX_ENTRIES + 20):
        (big / f"f{i:04}").write_text("")
    result = await ls(tmp_path, {"path": "big"})
    assert len(listed(result)) == MAX_ENTRIES
    assert "[20 more entries not shown]" in result.text
    ctx = ToolContext(cwd=tmp_path)
    ctx.services[ReadDenied] = lambda path: path.name == "f0001"
    denied = await ls(tmp_path, {"path": "big"}, ctx=ctx)
    assert "f0001  (0 B)" not in listed(denied)
    assert "1 result(s) hidden by permission rules." in denied.text


def test_shape(tree: Path) -> None:
    tool = LsTool()
    assert (tool.kind, tool.read_only, tool.concurrency_safe) == (Kind.READ, True, True)
    assert not tool.problems()
    built = tool.build({"path": "sub"}, ToolContext(cwd=tree))
    assert isinstance(built, LsInvocation)
    assert built.locations() == [tree / "sub"]
    assert built.tier() == Tier.READ

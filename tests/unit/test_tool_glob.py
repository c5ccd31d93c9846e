"""The glob tool on a real tree: matching, ignore pruning, ordering, caps and errors."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from agent_ext.core import ErrorCode, ExecControl, Kind, Tier, ToolContext, ToolResult
from agent_ext.tools._ignore import ReadDenied
from agent_ext.tools.glob import COLLECT_LIMIT, SHOW_LIMIT, GlobInvocation, GlobTool

from .test_tool_grep import build_tree

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return build_tree(tmp_path / "tree")


async def glob(root: Path, args: dict[str, Any], ctx: ToolContext | None = None,
               control: ExecControl | None = None) -> ToolResult:
    built = GlobTool().build(args, ctx or ToolContext(cwd=root))
    if isinstance(built, ToolResult):
        return built
    return await built.execute(control or ExecControl())


def listed(result: ToolResult) -> list[str]:
    lines = result.text.split("\n")
    if "---" not in lines:
        return []
    start = lines.index("---") + 1
    end = lines.index("---", start) if "---" in lines[start:] else len(lines)
    return lines[start:end]


async def test_recursive_dotfiles_ignored_dirs_and_symlinks(tree: Path) -> None:
    result = await glob(tree, {"pattern": "**/*.py"})
    assert result.error is None
    assert set(listed(result)) == {"a.py", "b.py", ".hidden.py", ".hid/h.py",
                                   "sub/deep/nested/c.py", "ünï/çødé.py"}
    assert result.text.startswith('Found 6 file(s) matching "**/*.py" in the working directory '
                                  "(paths relative to the working directory;")
    every = listed(await glob(tree, {"pattern": "**/*"}))
    assert ".gitignore" in every
    assert "sub/.gitignore" in every
    assert not any(p.startswith((".git/", "build/", "loop/", "sub/up/")) for p in every)
    assert "link.py" not in every
    assert "gen.py" not in every
    assert "sub/r.md" not in every


async def test_case_insensitive_one_level_braces_and_prefixes(tree: Path) -> None:
    assert set(listed(await glob(tree, {"pattern": "*.PY"}))) == {"a.py", "b.py", ".hidden.py"}
    assert listed(await glob(tree, {"pattern": "makefile"})) == ["Makefile"]
    assert set(listed(await glob(tree, {"pattern": "*.{md,json}"}))) == {"notes.md",
                                                                          "data.json"}
    assert listed(await glob(tree, {"pattern": "sub/**/*.py"})) == ["sub/deep/nested/c.py"]
    assert listed(await glob(tree, {"pattern": "./docs/*.md"})) == ["docs/guide.md"]
    assert set(listed(await glob(tree, {"pattern": "**/?.py"}))) == {"a.py", "b.py", ".hid/h.py",
                                                                    "sub/deep/nested/c.py"}


async def test_path_argument_and_absolute_patterns(tree: Path) -> None:
    result = await glob(tree, {"pattern": "**/*.md", "path": "sub"})
    assert listed(result) == ["sub/keep.md"]
    assert 'in "sub"' in result.text
    absolute = await glob(tree, {"pattern": f"{tree}/docs/**/*.md"})
    assert listed(absolute) == ["docs/guide.md"]
    outside = await glob(tree, {"pattern": "*.md"}, ctx=ToolContext(cwd=tree / "sub"))
    assert listed(outside) == ["keep.md"]
    nullish = await glob(tree, {"pattern": "*.toml", "path": "null"})
    assert listed(nullish) == ["conf.toml"]


async def test_an_existing_literal_path_is_taken_literally(tree: Path) -> None:
    page = tree / "app" / "[id]" / "page.tsx"
    page.parent.mkdir(parents=True)
    page.write_text("x")
    assert listed(await glob(tree, {"pattern": "app/[id]/page.tsx"})) == ["app/[id]/page.tsx"]
    assert listed(await glob(tree, {"pattern": "a.py"})) == ["a.py"]


async def test_recent_files_first_then_alphabetical(tmp_path: Path) -> None:
    old = time.time() - 3 * 24 * 3600
    for name, age in (("b_old.txt", old), ("a_old.txt", old - 50), ("c_new.txt", None),
                      ("d_newer.txt", None)):
        (tmp_path / name).write_text("x")
        if age is not None:
            os.utime(tmp_path / name, (age, age))
    os.utime(tmp_path / "c_new.txt", (time.time() - 60, time.time() - 60))
    result = await glob(tmp_path, {"pattern": "*.txt"})
    assert listed(result) == ["d_newer.txt", "c_new.txt", "a_old.txt", "b_old.txt"]


async def test_show_and_collection_caps(tmp_path: Path) -> None:
    for i in range(SHOW_LIMIT + 50):
        (tmp_path / f"f{i:04}.txt").write_text("x")
    result = await glob(tmp_path, {"pattern": "*.txt"})
    assert len(listed(result)) == SHOW_LIMIT
    assert "[50 file(s) truncated]" in result.text
    for i in range(COLLECT_LIMIT):
        (tmp_path / f"g{i:04}.txt").write_text("x")
    capped = await glob(tmp_path, {"pattern": "*.txt"})
    assert capped.text.startswith(f"Found at least {COLLECT_LIMIT} file(s)")
    assert f"Stopped collecting at {COLLECT_LIMIT} matches" in capped.text


async def test_no_match_and_errors(tree: Path) -> None:
    none = await glob(tree, {"pattern": "*.nothing"})
    assert none.error is None
    assert none.text.startswith('No files found matching pattern "*.nothing" in the working '
                                "directory.")
    assert '"**/*.nothing"' in none.text
    for args, words in (({"pattern": "*.py", "path": "a.py"}, "is a file"),
                        ({"pattern": "*.py", "path": "nope"}, "does not exist"),
                        ({"pattern": "*.{py"}, "unclosed"),
                        ({"pattern": ""}, "pattern")):
        result = await glob(tree, args)
        assert result.error is not None, args
        assert result.error.code == ErrorCode.INVALID_TOOL_PARAMS
        assert words in result.text


async def test_walk_failure_is_a_glob_execution_error(tree: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_: object, **__: object) -> object:
        raise OSError("disk on fire")

    monkeypatch.setattr(GlobInvocation, "_collect", boom)
    result = await glob(tree, {"pattern": "**/*.py"})
    assert result.error is not None
    assert result.error.code == ErrorCode.GLOB_EXECUTION_ERROR
    assert "disk on fire" in result.text


async def test_permission_filter_and_cancel(tree: Path) -> None:
    ctx = ToolContext(cwd=tree)
    ctx.services[ReadDenied] = lambda path: (tree / "sub") in path.parents
    result = await glob(tree, {"pattern": "**/*.py"}, ctx=ctx)
    assert "sub/deep/nested/c.py" not in listed(result)
    assert "1 result(s) hidden by permission rules." in result.text
    control = ExecControl()
    control.cancelled.set()
    for i in range(300):
        (tree / "many" / f"{i}.txt").parent.mkdir(exist_ok=True)
        (tree / "many" / f"{i}.txt").write_text("x")
    stopped = await glob(tree, {"pattern": "**/*.txt"}, control=control)
    assert "did not finish" in stopped.text


def test_shape(tree: Path) -> None:
    tool = GlobTool()
    assert (tool.kind, tool.read_only, tool.concurrency_safe) == (Kind.SEARCH, True, True)
    assert not tool.problems()
    built = tool.build({"pattern": "*.py", "path": "sub"}, ToolContext(cwd=tree))
    assert isinstance(built, GlobInvocation)
    assert built.locations() == [tree / "sub"]
    assert built.tier() == Tier.READ
    elsewhere = tool.build({"pattern": f"{tree}/docs/**/*.md"}, ToolContext(cwd=tree / "sub"))
    assert isinstance(elsewhere, GlobInvocation)
    assert elsewhere.locations() == [tree / "docs"]  # what path rules must see
    up = tool.build({"pattern": "../rules/*.txt"}, ToolContext(cwd=tree / "sub"))
    assert isinstance(up, GlobInvocation)
    assert up.locations() == [tree / "rules"]

"""The grep tool on a real tree: ignore rules, modes, paging, errors, read records, permission
filtering, and parity of the pure-Python engine with ripgrep."""

from __future__ import annotations

import asyncio
import codecs
import json
import os
import stat
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from agent_ext.core import ErrorCode, ExecControl, Kind, Tier, ToolContext, ToolResult
from agent_ext.fs import ReadCache, check_prior_read
from agent_ext.tools._grep_hits import Found
from agent_ext.tools._ignore import ReadDenied
from agent_ext.tools._pygrep import GrepQuery
from agent_ext.tools._rg import Collector, find_rg, rg_args
from agent_ext.tools.grep import MAX_LINE_CHARS, GrepInvocation, GrepTool, _newest_first
from agent_ext.urls import Resolved, URLRouter
from agent_ext.urls.parse import ParsedURL

pytestmark = pytest.mark.timeout(60)

HAVE_RG = find_rg() is not None
NOTEBOOK = {"cells": [{"cell_type": "code", "source": ["x = 'foo'\n"], "metadata": {},
                       "outputs": [], "execution_count": None}],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
TEXT_FILES = {
    ".gitignore": "build/\n*.log\n!keep.log\n/anchored.txt\ngen.py\ndocs/**/*.tmp\n!.env\n"
                  "# a comment\n\\#hash.txt\nspaced.txt   \n",
    ".ignore": "dot_ignored.txt\n",
    ".git/info/exclude": "excluded.txt\n",
    ".env": "SECRET=foo\n",
    ".hidden.py": "def foo(): pass\n",
    ".hid/h.py": "foo = 1\n",
    "a.py": "import os\n\ndef foo(x):\n    return x  # foo\n\nclass Foo:\n    pass\n\n"
            "FOO = 'bar'\n",
    "b.py": "from a import foo\nfoo(1)\nprint('hello world')\n\n\nprint('end')\n",
    "gen.py": "foo generated\n",
    "keep.log": "foo kept\n",
    "x.log": "foo ignored\n",
    "anchored.txt": "foo root\n",
    "sub/anchored.txt": "foo sub\n",
    "sub/.gitignore": "*.md\n!keep.md\n",
    "sub/r.md": "foo md\n",
    "sub/keep.md": "# foo\nkeep me\n",
    "sub/deep/nested/c.py": "def bar():\n    return 'foo'\n",
    "build/out.py": "foo build\n",
    "docs/a/b.tmp": "foo tmp\n",
    "docs/c.tmp": "foo tmp2\n",
    "docs/guide.md": "# Guide\nfoo guide\nTODO: more\n",
    "excluded.txt": "foo excluded\n",
    "dot_ignored.txt": "foo\n",
    "#hash.txt": "foo hash\n",
    "spaced.txt": "foo\n",
    "ünï/çødé.py": "λόγος = 'foo'\nΛΌΓΟΣ\n",
    "big.txt": ("x" * 2000 + " foo " + "y" * 2000 + "\n") * 3 + "tail foo\n",
    "notes.md": "TODO: write docs\nsee foo\n",
    "Makefile": "all:\n\techo foo\n",
    "data.json": '{"foo": 12}\n',
    "conf.toml": 'foo = "x"\n',
    "conf.yaml": "foo: x\n",
    "script.sh": "echo foo\n",
    "page.html": "<p>foo</p>\n",
    "style.css": ".foo {}\n",
    "main.go": "package main // foo\n",
    "lib.rs": "fn foo() {}\n",
    "App.java": "class Foo {}\n",
    "x.c": "int foo;\n",
    "x.cpp": "int foo();\n",
    "app.ts": "const foo = 1\n",
    "app.js": "var foo\n",
    "multi.txt": "alpha\nbeta\ngamma\nalpha beta\n",
    "noeol.txt": "last foo",
    "nb.ipynb": json.dumps(NOTEBOOK, indent=1) + "\n",
    "rules/.gitignore": "**/tmpdir\n[0-9].txt\n*.bak\nnested/a\n/anch/\n",
    "rules/tmpdir/t.txt": "foo\n",
    "rules/deep/tmpdir/t.txt": "foo\n",
    "rules/1.txt": "foo\n",
    "rules/12.txt": "foo\n",
    "rules/x.bak": "foo\n",
    "rules/keep/.gitignore": "!important.bak\n",
    "rules/keep/important.bak": "foo\n",
    "rules/keep/other.bak": "foo\n",
    "rules/nested/a": "foo\n",
    "rules/deep/nested/a": "foo\n",
    "rules/anch/f.txt": "foo\n",
    "rules/deep/anch/f.txt": "foo\n",
}
BYTE_FILES = {
    "bin.dat": b"\0\1foo\2\n",
    "crlf.txt": b"first foo\r\nsecond\r\nfoo$ end\r\nfoo\r\n",
    "utf16.txt": "foo utf16\n".encode("utf-16"),
    "bom.txt": codecs.BOM_UTF8 + b"foo bom\n",
}


def build_tree(root: Path) -> Path:
    """The shared test tree: a git repo with nested ignore files, hidden, binary, links."""
    for name, text in TEXT_FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8", newline="")
    for name, data in BYTE_FILES.items():
        (root / name).write_bytes(data)
    (root / "link.py").symlink_to("a.py")
    (root / "loop").symlink_to(".")
    (root / "sub" / "up").symlink_to("..")
    files = sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())
    base = time.time() - 3600
    for i, path in enumerate(files):  # distinct mtimes: a deterministic newest-first order
        os.utime(path, (base - 7 * i, base - 7 * i))
    return root


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return build_tree(tmp_path / "tree")


async def grep(root: Path, args: dict[str, Any], *, engine: str = "auto",
               ctx: ToolContext | None = None, control: ExecControl | None = None,
               **kw: Any) -> ToolResult:
    ctx = ctx or ToolContext(cwd=root)
    built = GrepTool(engine=engine, **kw).build(args, ctx)  # type: ignore[arg-type]
    if isinstance(built, ToolResult):
        return built
    return await built.execute(control or ExecControl())


def body(result: ToolResult) -> list[str]:
    """The result lines between the first two ``---`` markers."""
    lines = result.text.split("\n")
    start = lines.index("---") + 1
    end = lines.index("---", start) if "---" in lines[start:] else len(lines)
    return lines[start:end]


# --- parity: the pure-Python engine gives ripgrep's results ------------------------------------

PARITY_CASES: list[dict[str, Any]] = [
    {"pattern": "foo"},
    {"pattern": "foo", "output_mode": "content"},
    {"pattern": "foo", "output_mode": "count"},
    {"pattern": "FOO", "-i": True, "output_mode": "content"},
    {"pattern": "foo", "glob": "*.py"},
    {"pattern": "foo", "glob": "*.{md,txt}", "output_mode": "content"},
    {"pattern": "foo", "glob": "!*.py"},
    {"pattern": "foo", "glob": "sub/**"},
    {"pattern": "foo", "glob": "*.log"},
    {"pattern": "foo", "glob": "docs/*.tmp"},
    {"pattern": "foo", "glob": "*.py,*.md"},
    {"pattern": "foo", "type": "py"},
    {"pattern": "foo", "type": "md", "output_mode": "content"},
    {"pattern": "foo", "type": "make"},
    {"pattern": "foo", "type": "ipynb", "output_mode": "content"},
    {"pattern": "foo", "type": "sh"},
    {"pattern": "Foo", "type": "java"},
    {"pattern": "return", "output_mode": "content", "-C": 1},
    {"pattern": "import", "output_mode": "content", "-C": 1},
    {"pattern": "foo", "output_mode": "content", "-A": 2, "-B": 1, "path": "a.py"},
    {"pattern": "^def ", "output_mode": "content"},
    {"pattern": "foo$", "output_mode": "content"},
    {"pattern": r"\bFoo\b", "output_mode": "count"},
    {"pattern": "alpha.*?gamma", "multiline": True, "output_mode": "content"},
    {"pattern": r"beta\ngamma", "multiline": True, "output_mode": "count"},
    {"pattern": "a", "multiline": True, "output_mode": "count"},
    {"pattern": "λόγος", "-i": True, "output_mode": "content"},
    {"pattern": "foo", "path": "sub"},
    {"pattern": "foo", "path": "sub", "output_mode": "content"},
    {"pattern": "foo", "path": "build"},
    {"pattern": "foo", "path": ".hid"},
    {"pattern": "x{3}", "output_mode": "count"},
    {"pattern": "foo", "output_mode": "content", "-n": False},
    {"pattern": "foo", "head_limit": 3, "offset": 2},
    {"pattern": "tail|utf16|bom", "output_mode": "content"},
    {"pattern": "foo", "path": "bin.dat", "output_mode": "count"},
    {"pattern": "last", "output_mode": "content"},
    {"pattern": "(?i)todo", "output_mode": "content"},
    {"pattern": "[[:upper:]]{3}", "output_mode": "count"},
    {"pattern": r"\d+", "glob": "*.json", "output_mode": "content"},
    {"pattern": r"print\(", "output_mode": "content", "-B": 2},
    {"pattern": "nothing-matches-this"},
    {"pattern": "foo", "path": "rules", "output_mode": "count"},
    {"pattern": "foo", "glob": "**/tmpdir/*.txt"},
    {"pattern": "foo", "glob": "rules/[0-9]*"},
]


@pytest.mark.skipif(not HAVE_RG, reason="needs the rg binary")
@pytest.mark.parametrize("args", PARITY_CASES, ids=lambda a: json.dumps(a, ensure_ascii=False))
async def test_python_engine_matches_ripgrep(tree: Path, args: dict[str, Any]) -> None:
    rg = await grep(tree, args, engine="rg")
    py = await grep(tree, args, engine="python")
    assert rg.error is None, rg.text
    assert py.text == rg.text


def test_parity_table_is_large_enough() -> None:
    assert len(PARITY_CASES) >= 25


STREAM_QUERIES = [
    GrepQuery("foo"),
    GrepQuery("foo", mode="count"),
    GrepQuery("foo", mode="content"),
    GrepQuery("o", mode="content", before=1, after=2),
    GrepQuery(r"\w\n\w", mode="content", multiline=True),
]


def columns(found: Found) -> list[tuple[str, int, int, bool, list[Any]]]:
    """Each file's path, counts, binary flag and lines, in path order (arrival order varies)."""
    rows = [(found.paths[i], found.counts[i], found.sizes[i] if found.sizes else 0,
             i in found.binary, found.lines(i)) for i in range(len(found))]
    return sorted(rows)


@pytest.mark.skipif(not HAVE_RG, reason="needs the rg binary")
@pytest.mark.parametrize("query", STREAM_QUERIES, ids=lambda q: f"{q.mode}:{q.pattern}")
def test_rg_output_parses_the_same_in_pieces_of_any_size(tree: Path, query: GrepQuery) -> None:
    exe = find_rg()
    assert exe is not None
    out = subprocess.run([exe, *rg_args(query, ".")], cwd=tree, capture_output=True,
                         check=False).stdout
    assert out

    def parse(size: int, *, complete: bool = True, data: bytes = out) -> Found:
        sink = Collector(query, str(tree))
        for at in range(0, len(data), size):
            sink.feed(data[at:at + size])
        return sink.finish(complete=complete)

    whole = columns(parse(len(out)))
    assert len(whole) >= 2
    for size in (1, 2, 3, 7, 64, 1000):
        assert columns(parse(size)) == whole, size
    # rg's parallel walk orders files differently from run to run, so the place to cut at is
    # the longest of these prefixes that stops before some file's record.
    cuts = [columns(parse(5, complete=False, data=out[:len(out) * k // 8])) for k in range(7, 0, -1)]
    cut = next((c for c in cuts if 0 < len(c) < len(whole)), [])
    assert cut, [len(c) for c in cuts]
    by_path = {row[0]: row for row in whole}
    for path, count, size, binary, lines in cut:
        # A stopped run keeps complete records, and of a content block cut short its whole
        # lines: each a real line of that file's full result.
        full = by_path[path]
        if (path, count, size, binary, lines) != full:
            assert query.mode == "content" and lines and lines == full[4][:len(lines)]
            assert count == size == len(lines) < full[1]


async def test_late_binary_files_and_odd_names_match_the_python_engine(tmp_path: Path) -> None:
    """A binary file with matches before its first NUL (rg adds a warning line to its block),
    and names with a newline or a NUL-like look, take the careful parsing path."""
    root = tmp_path / "t"
    root.mkdir()
    filler = ("x" * 99 + "\n").encode() * 3000  # far apart: not in one of rg's buffers
    (root / "late.bin").write_bytes(b"foo 1\nbar\nfoo 2\n" + filler + b"foo 3\nbar\n" + filler
                                    + b"\0foo\n")
    (root / "plain.txt").write_text("foo a\nb\nfoo c\n")
    (root / "12.txt").write_text("foo digits\n")
    if os.name == "posix":
        (root / "odd\nname.txt").write_text("foo odd\n")
    cases: list[dict[str, Any]] = [{"pattern": "foo", "output_mode": "content"},
                                   {"pattern": "foo", "output_mode": "content", "-C": 1},
                                   {"pattern": "foo", "output_mode": "content", "offset": 2}]
    for args in cases if HAVE_RG else []:
        rg = await grep(root, args, engine="rg")
        py = await grep(root, args, engine="python")
        assert rg.text == py.text, args
        assert "late.bin:3:foo 2" in rg.text


@pytest.mark.skipif(not HAVE_RG, reason="needs the rg binary")
@pytest.mark.parametrize("mode", ["content", "count", "files_with_matches"])
async def test_hidden_files_leave_the_totals_the_same_with_both_engines(tree: Path,
                                                                        mode: str) -> None:
    ctx = ToolContext(cwd=tree)
    ctx.services[ReadDenied] = lambda path: (tree / "sub") in path.parents
    args = {"pattern": "foo", "output_mode": mode, "-C": 1 if mode == "content" else None}
    args = {k: v for k, v in args.items() if v is not None}
    rg = await grep(tree, args, ctx=ctx, engine="rg")
    py = await grep(tree, args, ctx=ctx, engine="python")
    assert rg.text == py.text
    assert "hidden" not in rg.text  # not even how many: that would tell what they hold
    assert "sub/" not in rg.text


def test_equal_mtimes_are_ordered_by_path() -> None:
    paths = ["b", "a", "d", "c"]
    assert _newest_first([0, 1, 2, 3], paths, [5, 5, 9, 5]) == [2, 1, 0, 3]
    assert _newest_first([0, 1, 2, 3], paths, [4, 3, 2, 1]) == [0, 1, 2, 3]


# --- what is searched ----------------------------------------------------------------------------

@pytest.mark.parametrize("engine", ["rg", "python"])
async def test_ignore_rules_hidden_binary_and_symlinks(tree: Path, engine: str) -> None:
    if engine == "rg" and not HAVE_RG:
        pytest.skip("needs the rg binary")
    files = set(body(await grep(tree, {"pattern": "foo"}, engine=engine)))
    assert {"a.py", "keep.log", ".env", "sub/keep.md", "sub/anchored.txt", "ünï/çødé.py",
            "docs/guide.md", "utf16.txt", "bom.txt", "crlf.txt", "noeol.txt",
            "nb.ipynb"} <= files
    for skipped in ("x.log", "gen.py", "build/out.py", ".hidden.py", ".hid/h.py", "bin.dat",
                    "excluded.txt", "dot_ignored.txt", "sub/r.md", "anchored.txt",
                    "docs/a/b.tmp", "docs/c.tmp", "#hash.txt", "spaced.txt", "link.py"):
        assert skipped not in files, skipped
    assert not any(f.startswith(("loop/", "sub/up/")) for f in files)
    assert {f for f in files if f.startswith("rules/")} == {
        "rules/12.txt", "rules/keep/important.bak", "rules/deep/nested/a", "rules/deep/anch/f.txt"}


async def test_gitignore_needs_a_git_repository(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    (root / ".gitignore").write_text("*.log\n")
    (root / ".ignore").write_text("skip.txt\n")
    for name in ("a.log", "skip.txt", "keep.txt"):
        (root / name).write_text("foo\n")
    for engine in ("rg", "python") if HAVE_RG else ("python",):
        found = await grep(root, {"pattern": "foo"}, engine=engine)
        assert set(body(found)) == {"a.log", "keep.txt"}


async def test_a_bad_ignore_line_is_skipped_not_reported_as_a_gap(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("[abc\nskip.txt\n")
    (tmp_path / "a.txt").write_text("hello\n")
    (tmp_path / "skip.txt").write_text("hello\n")
    for engine in ("rg", "python") if HAVE_RG else ("python",):
        result = await grep(tmp_path, {"pattern": "hello"}, engine=engine)
        assert body(result) == ["a.txt"], engine
        assert "did not complete" not in result.text


async def test_parent_gitignore_applies_to_a_subdirectory_search(tree: Path) -> None:
    (tree / "sub" / "x.log").write_text("foo\n")
    for engine in ("rg", "python") if HAVE_RG else ("python",):
        result = await grep(tree, {"pattern": "foo", "path": "sub"}, engine=engine)
        assert "sub/x.log" not in body(result)
        assert "sub/anchored.txt" in body(result)


# --- output --------------------------------------------------------------------------------------

async def test_files_newest_first_relative_paths_and_header(tree: Path) -> None:
    now = time.time()
    os.utime(tree / "b.py", (now, now))
    result = await grep(tree, {"pattern": "foo", "type": "py"})
    assert result.error is None
    assert result.text.startswith('Found 5 file(s) matching pattern "foo" in the working '
                                  "directory (type py), most recently modified first:")
    assert body(result)[0] == "b.py"
    # As in ripgrep, a type (or glob) match whitelists a hidden file.
    assert set(body(result)) == {"a.py", "b.py", ".hidden.py", "sub/deep/nested/c.py",
                                 "ünï/çødé.py"}


async def test_paths_outside_the_working_directory_are_absolute(tree: Path) -> None:
    ctx = ToolContext(cwd=tree / "sub")
    result = await grep(tree, {"pattern": "foo", "path": "..", "glob": "*.txt"}, ctx=ctx)
    lines = body(result)
    assert "anchored.txt" in lines
    assert str(tree / "crlf.txt") in lines
    assert f'in "{tree}"' in result.text


async def test_content_mode_line_numbers_context_and_separators(tree: Path) -> None:
    result = await grep(tree, {"pattern": "return", "output_mode": "content", "-C": 1})
    assert "a.py-3-def foo(x):" in body(result)
    assert "a.py:4:    return x  # foo" in body(result)
    assert "--" in body(result)
    plain = await grep(tree, {"pattern": "^class", "output_mode": "content", "-n": "false",
                              "path": "a.py"})
    assert body(plain) == ["a.py:class Foo:"]
    after = await grep(tree, {"pattern": "^from", "output_mode": "content", "-A": 1})
    assert body(after) == ["b.py:1:from a import foo", "b.py-2-foo(1)"]
    before = await grep(tree, {"pattern": "end'", "output_mode": "content", "-B": "2"})
    assert body(before) == ["b.py-4-", "b.py-5-", "b.py:6:print('end')"]


async def test_count_mode_and_case_insensitive(tree: Path) -> None:
    result = await grep(tree, {"pattern": "foo", "path": "a.py", "output_mode": "count",
                               "-i": True})
    assert body(result) == ["a.py:4"]
    assert "Found 4 matching line(s) in 1 file(s)" in result.text
    sensitive = await grep(tree, {"pattern": "foo", "path": "a.py", "output_mode": "count"})
    assert body(sensitive) == ["a.py:2"]


async def test_crlf_lines_are_shown_without_carriage_returns(tree: Path) -> None:
    result = await grep(tree, {"pattern": "foo", "path": "crlf.txt", "output_mode": "content"})
    assert body(result) == ["crlf.txt:1:first foo", "crlf.txt:3:foo$ end", "crlf.txt:4:foo"]


async def test_long_lines_are_cut_and_counted(tree: Path) -> None:
    result = await grep(tree, {"pattern": "foo", "path": "big.txt", "output_mode": "content"})
    first = body(result)[0]
    assert first.endswith("...")
    assert len(first) == len("big.txt:1:") + MAX_LINE_CHARS + 3
    assert f"3 line(s) longer than {MAX_LINE_CHARS} characters were cut" in result.text


async def test_head_limit_and_offset_page_through_results(tree: Path) -> None:
    every = body(await grep(tree, {"pattern": "foo", "head_limit": 0}))
    first = await grep(tree, {"pattern": "foo", "head_limit": 5})
    assert body(first) == every[:5]
    assert f"Showing files 1-5 of {len(every)}. Use offset=5 for the next page" in first.text
    second = await grep(tree, {"pattern": "foo", "head_limit": 5, "offset": 5})
    assert body(second) == every[5:10]
    last = await grep(tree, {"pattern": "foo", "offset": len(every) - 1})
    assert body(last) == every[-1:]
    beyond = await grep(tree, {"pattern": "foo", "offset": len(every) + 3})
    assert beyond.error is None
    assert f"the search found {len(every)} file(s)" in beyond.text


async def test_pages_end_before_the_character_budget(tmp_path: Path) -> None:
    for i in range(60):
        (tmp_path / f"f{i:02}.txt").write_text(("match " + "z" * 480 + "\n") * 3)
    result = await grep(tmp_path, {"pattern": "match", "output_mode": "content",
                                   "head_limit": 0})
    assert len(result.text) < GrepTool.max_output_chars
    shown = len(body(result))
    assert f"Showing lines 1-{shown} of 180. Use offset={shown}" in result.text
    rest = await grep(tmp_path, {"pattern": "match", "output_mode": "content", "head_limit": 0,
                                 "offset": shown})
    assert body(rest)[0] != body(result)[0]


async def test_no_match_is_not_an_error(tree: Path) -> None:
    result = await grep(tree, {"pattern": "zzz-not-there", "glob": "*.py"})
    assert result.error is None
    assert result.text.startswith('No matches found for pattern "zzz-not-there" in the working '
                                  'directory (glob "*.py").')


async def test_search_a_single_file_and_a_pattern_starting_with_a_dash(tree: Path) -> None:
    (tree / "opts.txt").write_text("use -v here\n")
    result = await grep(tree, {"pattern": "-v", "path": "opts.txt", "output_mode": "content"})
    assert body(result) == ["opts.txt:1:use -v here"]
    assert 'in "opts.txt"' in result.text


async def test_explicit_binary_file_is_reported_not_printed(tree: Path) -> None:
    result = await grep(tree, {"pattern": "foo", "path": "bin.dat", "output_mode": "content"})
    assert "Binary file(s) matched; their lines are not shown: bin.dat" in result.text


# --- errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize("engine", ["rg", "python"])
async def test_invalid_requests_are_parameter_errors(tree: Path, engine: str) -> None:
    if engine == "rg" and not HAVE_RG:
        pytest.skip("needs the rg binary")
    bad_regex = await grep(tree, {"pattern": "foo("}, engine=engine)
    assert bad_regex.error is not None
    assert bad_regex.error.code == ErrorCode.INVALID_TOOL_PARAMS
    assert "regex parse error" in bad_regex.text
    newline = await grep(tree, {"pattern": "a\\nb"}, engine=engine)
    assert newline.error is not None
    assert newline.error.code == ErrorCode.INVALID_TOOL_PARAMS
    assert "multiline=true" in newline.text
    bad_type = await grep(tree, {"pattern": "foo", "type": "nope"}, engine=engine)
    assert bad_type.error is not None
    assert "unrecognized file type: nope" in bad_type.text
    bad_glob = await grep(tree, {"pattern": "foo", "glob": "*.{py"}, engine=engine)
    assert bad_glob.error is not None
    assert bad_glob.error.code == ErrorCode.INVALID_TOOL_PARAMS


async def test_parameter_validation(tree: Path) -> None:
    missing = await grep(tree, {"pattern": "foo", "path": "nope/"})
    assert missing.error is not None
    assert missing.error.code == ErrorCode.INVALID_TOOL_PARAMS
    assert "does not exist" in missing.text
    as_glob = await grep(tree, {"pattern": "foo", "path": "src/*.py"})
    assert as_glob.error is not None
    assert "looks like a glob" in as_glob.text
    nulls = await grep(tree, {"pattern": "^import", "-A": None, "head_limit": None,
                              "output_mode": "content", "-n": None})
    assert body(nulls) == ["a.py:1:import os"]
    for args in ({"pattern": ""}, {"pattern": "x", "-A": -1}, {"pattern": "x", "head_limit": -1},
                 {"pattern": "x", "output_mode": "lines"}, {"pattern": "x", "bogus": 1}):
        result = await grep(tree, args)
        assert result.error is not None, args
        assert result.error.code == ErrorCode.INVALID_TOOL_PARAMS


def fake_rg(tmp_path: Path, script: str) -> str:
    path = tmp_path / "fake-rg"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.mark.skipif(os.name != "posix", reason="shell-script stand-in for rg")
async def test_rg_failure_is_a_grep_execution_error(tree: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    exe = fake_rg(tmp_path, "echo 'rg: something broke' >&2\nexit 2\n")
    monkeypatch.setattr(GrepTool, "rg_path", lambda self: exe)
    result = await grep(tree, {"pattern": "foo"})
    assert result.error is not None
    assert result.error.code == ErrorCode.GREP_EXECUTION_ERROR
    assert "something broke" in result.text


@pytest.mark.skipif(os.name != "posix", reason="shell-script stand-in for rg")
async def test_partial_scan_says_it_is_not_proof_of_absence(tree: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    exe = fake_rg(tmp_path, "printf 'a.py\\0'\n"
                            "echo 'rg: ./secret: Permission denied (os error 13)' >&2\nexit 2\n")
    monkeypatch.setattr(GrepTool, "rg_path", lambda self: exe)
    result = await grep(tree, {"pattern": "foo"})
    assert result.error is None
    assert body(result) == ["a.py"]
    assert "not proof of absence" in result.text
    assert "Permission denied" in result.text
    empty = fake_rg(tmp_path, "echo 'rg: ./x: Permission denied (os error 13)' >&2\nexit 2\n")
    monkeypatch.setattr(GrepTool, "rg_path", lambda self: empty)
    none = await grep(tree, {"pattern": "foo"})
    assert none.error is None
    assert none.text.startswith("No matches found")
    assert "not proof of absence" in none.text


@pytest.mark.skipif(os.name != "posix", reason="shell-script stand-in for rg")
async def test_timeout_and_cancel_stop_rg(tree: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    exe = fake_rg(tmp_path, "printf 'a.py\\0'\nexec sleep 30\n")
    monkeypatch.setattr(GrepTool, "rg_path", lambda self: exe)
    started = time.monotonic()
    result = await grep(tree, {"pattern": "foo"}, timeout=0.5)
    assert time.monotonic() - started < 10
    assert "timed out after 0.5s" in result.text
    assert body(result) == ["a.py"]
    control = ExecControl()
    asyncio.get_running_loop().call_later(0.3, control.cancelled.set)
    cancelled = await grep(tree, {"pattern": "foo"}, control=control)
    assert "cancelled" in cancelled.text


@pytest.mark.skipif(os.name != "posix", reason="shell-script stand-in for rg")
async def test_cancelling_the_task_kills_rg(tree: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    pid_file = tmp_path / "pid"
    exe = fake_rg(tmp_path, f"echo $$ > {pid_file}\nexec sleep 30\n")
    monkeypatch.setattr(GrepTool, "rg_path", lambda self: exe)
    task = asyncio.ensure_future(grep(tree, {"pattern": "foo"}))
    deadline = time.monotonic() + 10
    while not pid_file.exists() or not pid_file.read_text().strip():
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    pid = int(pid_file.read_text())
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        await asyncio.sleep(0.05)
    else:
        pytest.fail(f"rg (pid {pid}) still running after the task was cancelled")


async def test_global_git_excludes_apply_in_a_repository(tree: Path) -> None:
    home = Path.home()
    (home / ".config" / "git").mkdir(parents=True, exist_ok=True)
    (home / ".config" / "git" / "ignore").write_text("notes.md\n")
    (home / "extra-ignore").write_text("conf.*\n")
    (home / ".gitconfig").write_text("[user]\n  name = x\n[core]\n  excludesFile = ~/extra-ignore\n")
    for engine in ("rg", "python") if HAVE_RG else ("python",):
        files = body(await grep(tree, {"pattern": "foo"}, engine=engine))
        assert "conf.toml" not in files, engine
        assert "notes.md" in files, engine


async def test_python_engine_cancel(tree: Path) -> None:
    control = ExecControl()
    control.cancelled.set()
    result = await grep(tree, {"pattern": "foo"}, engine="python", control=control)
    assert "did not complete (it was cancelled)" in result.text


# --- sessions: read records, permissions, URLs ------------------------------------------------

async def test_hits_record_partial_reads_except_notebooks(tree: Path) -> None:
    ctx = ToolContext(cwd=tree)
    assert check_prior_read(ReadCache(), tree / "b.py", "editing").ok is False
    await grep(tree, {"pattern": "foo"}, ctx=ctx)
    cache = ctx.service(ReadCache)
    assert cache is not None
    entry = cache.entry(tree / "b.py")
    assert entry is not None
    assert entry.last_read_was_full is False
    assert entry.last_read_cacheable is True
    assert check_prior_read(cache, tree / "b.py", "editing").ok
    assert cache.entry(tree / "nb.ipynb") is None
    assert cache.entry(tree / "gen.py") is None


async def test_read_cache_records_only_the_page_shown(tree: Path) -> None:
    ctx = ToolContext(cwd=tree)
    cache = ReadCache()
    ctx.services[ReadCache] = cache
    result = await grep(tree, {"pattern": "foo", "head_limit": 2}, ctx=ctx)
    assert len(cache) == 2
    assert sorted(result.file_paths) == sorted(str(tree / p) for p in body(result))


async def test_permission_filter_hides_denied_directories(tree: Path) -> None:
    def denied(path: Path) -> bool:
        return (tree / "sub") in path.parents

    ctx = ToolContext(cwd=tree)
    ctx.services[ReadDenied] = denied
    result = await grep(tree, {"pattern": "foo"}, ctx=ctx)
    assert not any(line.startswith("sub/") for line in body(result))
    assert "hidden" not in result.text
    only = await grep(tree, {"pattern": "foo", "path": "sub"}, ctx=ctx)
    assert only.text.startswith("No matches found")
    none = await grep(tree, {"pattern": "no such text anywhere", "path": "sub"}, ctx=ctx)
    assert only.text.replace("foo", "P") == none.text.replace("no such text anywhere", "P")
    assert ctx.service(ReadCache) is not None
    assert ctx.service(ReadCache).entry(tree / "sub" / "keep.md") is None  # type: ignore[union-attr]


class _Scheme:
    name = "var"
    read_only = True

    async def resolve(self, url: ParsedURL, selector: object) -> Resolved:
        return Resolved(text="alpha\nfoo bar\nomega\n")

    def tier_for(self, url: ParsedURL) -> Tier:
        return Tier.READ


async def test_internal_urls(tree: Path) -> None:
    result = await grep(tree, {"pattern": "foo", "path": "var://df"})
    assert result.error is not None
    assert "grep cannot search var:// addresses" in result.text
    ctx = ToolContext(cwd=tree)
    ctx.services[URLRouter] = URLRouter([_Scheme()])
    found = await grep(tree, {"pattern": "foo", "path": "var://df", "output_mode": "content",
                              "-B": 1}, ctx=ctx)
    assert body(found) == ["var://df-1-alpha", "var://df:2:foo bar"]
    assert "in var://df" in found.text


# --- the tool's shape --------------------------------------------------------------------------

def test_declaration_and_invocation_shape(tree: Path) -> None:
    tool = GrepTool()
    props = tool.declaration().parameters["properties"]
    assert {"pattern", "path", "glob", "type", "output_mode", "-i", "-n", "-A", "-B", "-C",
            "multiline", "head_limit", "offset"} <= set(props)
    assert (tool.kind, tool.read_only, tool.concurrency_safe) == (Kind.SEARCH, True, True)
    assert tool.max_output_chars == 20_000
    assert not tool.problems()
    built = tool.build({"pattern": "x", "path": "sub", "-i": "true", "-C": "2"},
                       ToolContext(cwd=tree))
    assert isinstance(built, GrepInvocation)
    assert built.locations() == [tree / "sub"]
    assert built.tier() == Tier.READ
    assert built.query().ignore_case and built.query().before == 2


def test_engine_selection(monkeypatch: pytest.MonkeyPatch) -> None:
    if HAVE_RG:
        exe = find_rg()
        assert exe is not None
        assert os.access(exe, os.X_OK)
        assert GrepTool().rg_path() == exe
    monkeypatch.setenv("AGENT_EXT_GREP", "python")
    assert GrepTool().rg_path() is None
    assert GrepTool(engine="python").rg_path() is None


async def test_a_device_is_refused_at_once(tree: Path) -> None:
    result = await grep(tree, {"pattern": "a", "path": "/dev/zero"})
    assert result.error is not None and result.error.code == "invalid_tool_params"
    assert "not a file or a directory" in result.text


# --- the output cap: a cut result says so, in every mode ------------------------------------------

@pytest.mark.skipif(not HAVE_RG, reason="the output cap is rg's")
@pytest.mark.parametrize(("mode", "layout"), [
    ("content", "one file"), ("content", "many files"), ("files_with_matches", "many files"),
    ("count", "many files")])
async def test_a_search_cut_by_the_output_cap_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str, layout: str) -> None:
    import functools

    from agent_ext.tools import _rg
    if layout == "one file":
        (tmp_path / "one.txt").write_text("needle here\n" * 20_000)
    else:
        for i in range(3_000):
            (tmp_path / f"file_{i:04}_with_a_long_name.txt").write_text("needle\n")
    monkeypatch.setattr(_rg, "run_rg", functools.partial(_rg.run_rg, max_bytes=4_096))
    monkeypatch.setattr(_rg, "_READ_BYTES", 512)  # so the cap falls inside the output
    result = await grep(tmp_path, {"pattern": "needle", "output_mode": mode})
    text = result.text
    assert text.startswith("Found at least "), text[:200]
    assert "No matches" not in text
    assert "did not complete (it produced too much output)" in text
    assert "not proof of absence" in text
    shown = body(result)
    assert shown and all("needle" in line or line.endswith((".txt", ":1")) for line in shown)


async def test_a_long_pattern_is_shortened_in_the_result(tree: Path) -> None:
    pattern = "foo|" + "|".join(f"zz{i}" for i in range(2_000))
    result = await grep(tree, {"pattern": pattern})
    assert result.text.startswith("Found ")
    assert f"({len(pattern):,} characters)" in result.text
    assert len(result.text.split("\n")[0]) < 400


@pytest.mark.parametrize("stopped", ["output", "timeout", "cancelled"])
def test_a_stopped_search_with_nothing_complete_never_says_no_matches(
        tmp_path: Path, stopped: str) -> None:
    from agent_ext.tools.grep import Report
    from agent_ext.urls import parse_path_arg
    query = GrepQuery(pattern="needle", mode="content")
    report = Report(query, Found(stopped=stopped), cwd=tmp_path,
                    root=parse_path_arg(".", tmp_path), denied=None, timeout=5, numbers=True)
    text, shown = report.render(250, 0)
    assert not shown
    assert "No matches" not in text
    assert text.startswith('The search for pattern "needle" in the working directory stopped')
    assert "not proof of absence" in text

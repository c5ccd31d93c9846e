"""The selector grammar and the path parser every tool shares."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_ext.fs import LineRange, Selector, SelectorError, parse_selector
from agent_ext.urls import parse_path_arg


def _sel(text: str) -> Selector:
    selector = parse_selector(text)
    assert selector is not None, text
    return selector


@pytest.mark.parametrize(("text", "ranges"), [
    ("10-20", [(10, 20)]),
    ("10", [(10, None)]),
    ("10-", [(10, None)]),
    ("10+5", [(10, 14)]),
    ("10..20", [(10, 20)]),
    ("10..", [(10, None)]),
    ("L10-L20", [(10, 20)]),
    ("l10", [(10, None)]),
    ("L3+2", [(3, 4)]),
    ("1-5,3-8,20", [(1, 8), (20, 20)]),
    ("20,1-5", [(1, 5), (20, 20)]),
    ("1-5,6-9", [(1, 9)]),
    ("5,6,7", [(5, 7)]),
    ("1-3,10-,40-50", [(1, 3), (10, None)]),
    ("1-3, 7", [(1, 3), (7, 7)]),
])
def test_line_ranges(text: str, ranges: list[tuple[int, int | None]]) -> None:
    selector = _sel(text)
    assert [(r.start, r.end) for r in selector.ranges] == ranges
    assert not selector.raw and selector.tail is None and selector.text == text


def test_atoms() -> None:
    assert _sel("raw").raw and not _sel("raw").has_lines
    assert _sel("RAW").raw
    assert _sel("conflicts").conflicts
    assert _sel("img").image


def test_tail() -> None:
    selector = _sel("-20")
    assert selector.tail == 20 and selector.ranges == ()
    assert selector.resolve(100) == [(81, 100)]
    assert selector.resolve(5) == [(1, 5)]
    assert selector.resolve(0) == []


@pytest.mark.parametrize("text", ["raw:1-20", "1-20:raw", "Raw:1-20"])
def test_raw_with_a_range(text: str) -> None:
    selector = _sel(text)
    assert selector.raw and selector.ranges == (LineRange(1, 20),)


def test_raw_with_a_bare_line_is_that_line_and_with_a_tail() -> None:
    assert _sel("raw:7").ranges == (LineRange(7, 7),)
    tail = _sel("raw:-5")
    assert tail.raw and tail.tail == 5


@pytest.mark.parametrize(("text", "fragment"), [
    ("0", "line 0 does not exist"),
    ("0-5", "line 0 does not exist"),
    ("5-3", "ends before it starts; write 3-5"),
    ("-0", "-0 selects nothing"),
    ("4+0", "the count must be 1 or more"),
    ("4+", "needs a line count"),
    ("conflicts:1-5", "only a range or tail combined with raw"),
    ("raw:raw", "only a range or tail combined with raw"),
    ("1-2:3-4", "only a range or tail combined with raw"),
    ("raw:1-2:img", "only a range or tail combined with raw"),
    ("-3-4", "a tail is -N alone"),
    ("-3+4", "a tail is -N alone"),
    ("raw:-3+4", "only a range or tail combined with raw"),
])
def test_errors_explain_and_list_the_valid_forms(text: str, fragment: str) -> None:
    with pytest.raises(SelectorError) as info:
        parse_selector(text)
    message = str(info.value)
    assert fragment in message
    assert "Valid forms" in message and ":raw:50-100" in message
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("text", ["", "abc", "10-20x", "1-2:name", "name:raw", "sheet1",
                                  "10-20:"])
def test_non_selectors_are_left_alone(text: str) -> None:
    assert parse_selector(text) is None


@given(st.lists(st.tuples(st.integers(1, 60), st.integers(0, 15)), min_size=2, max_size=6),
       st.integers(0, 80))
def test_comma_lists_select_exactly_the_union(chunks: list[tuple[int, int]], total: int) -> None:
    text = ",".join(f"{start}-{start + span}" for start, span in chunks)
    resolved = _sel(text).resolve(total)
    lines = [n for a, b in resolved for n in range(a, b + 1)]
    expected = sorted({n for start, span in chunks for n in range(start, start + span + 1)
                       if n <= total})
    assert lines == expected
    assert all(b + 1 < c for (_, b), (c, _) in itertools.pairwise(resolved)), \
        "merged ranges neither overlap nor touch"


def test_resolve_clamps_and_drops_past_the_end() -> None:
    assert _sel("10").resolve(15) == [(10, 15)]
    assert _sel("1-5,20-30").resolve(25) == [(1, 5), (20, 25)]
    assert _sel("50-60").resolve(10) == []
    assert _sel("raw").resolve(3) == [(1, 3)]


def test_to_offset_limit() -> None:
    assert _sel("10-20").to_offset_limit() == (10, 11)
    assert _sel("10").to_offset_limit() == (10, None)
    assert _sel("10+5").to_offset_limit() == (10, 5)
    assert _sel("raw").to_offset_limit() == (None, None)
    assert _sel("-5").to_offset_limit(100) == (96, 5)
    with pytest.raises(ValueError, match="needs the line count"):
        _sel("-5").to_offset_limit()
    with pytest.raises(ValueError, match="2 ranges"):
        _sel("1-2,5-6").to_offset_limit()


# --- parse_path_arg -------------------------------------------------------------------------


def test_relative_absolute_and_home(tmp_path: Path) -> None:
    assert parse_path_arg("src/a.py", tmp_path).path == tmp_path / "src" / "a.py"
    assert parse_path_arg("  /etc/hosts ", tmp_path).path == Path("/etc/hosts")
    assert parse_path_arg("../x/./y.py", tmp_path).path == tmp_path.parent / "x" / "y.py"
    home = Path(os.environ["HOME"])
    assert parse_path_arg("~/notes.md", tmp_path).path == home / "notes.md"


def test_path_with_selector(tmp_path: Path) -> None:
    arg = parse_path_arg("a.py:10-20", tmp_path)
    assert arg.path == tmp_path / "a.py" and arg.url is None
    assert arg.selector is not None and arg.selector.ranges == (LineRange(10, 20),)
    assert not arg.raw and not arg.conflicts
    raw = parse_path_arg("a.py:raw:1-5", tmp_path)
    assert raw.raw and raw.path == tmp_path / "a.py"
    assert parse_path_arg("a.py:conflicts", tmp_path).conflicts
    assert parse_path_arg("Makefile:-20", tmp_path).selector == Selector(tail=20, text="-20")
    assert parse_path_arg("notes:raw:1-20", tmp_path).path == tmp_path / "notes"


def test_bad_selector_on_a_path_raises(tmp_path: Path) -> None:
    with pytest.raises(SelectorError, match="line 0"):
        parse_path_arg("a.py:0", tmp_path)


def test_a_real_file_with_a_colon_wins(tmp_path: Path) -> None:
    (tmp_path / "notes:raw").write_text("x")
    (tmp_path / "a.py:0").write_text("x")
    assert parse_path_arg("notes:raw", tmp_path).path == tmp_path / "notes:raw"
    arg = parse_path_arg("a.py:0", tmp_path)
    assert arg.path == tmp_path / "a.py:0" and arg.selector is None


def test_colons_inside_the_path(tmp_path: Path) -> None:
    arg = parse_path_arg("logs/12:30:00.txt:5-6", tmp_path)
    assert arg.path == tmp_path / "logs" / "12:30:00.txt"
    assert arg.selector is not None and arg.selector.ranges == (LineRange(5, 6),)


def test_shell_escapes(tmp_path: Path) -> None:
    assert parse_path_arg(r"my\ file.py", tmp_path).path == tmp_path / "my file.py"
    arg = parse_path_arg(r"dir\ (old)/a.py:3", tmp_path)
    assert arg.path == tmp_path / "dir (old)" / "a.py"
    (tmp_path / "odd\\ name").write_text("x")
    assert parse_path_arg(r"odd\ name", tmp_path).path == tmp_path / "odd\\ name"


def test_drive_letters_are_not_selectors_or_urls(tmp_path: Path) -> None:
    arg = parse_path_arg("C:/work/a.py:5", tmp_path)
    assert arg.url is None
    assert arg.path is not None and arg.path.name == "a.py"
    assert arg.selector is not None and arg.selector.ranges == (LineRange(5, None),)
    assert parse_path_arg("C:\\work\\a.py", tmp_path).url is None


def test_internal_urls(tmp_path: Path) -> None:
    arg = parse_path_arg("cell://abc:raw:1-5", tmp_path)
    assert arg.path is None and arg.url is not None
    assert (arg.url.scheme, arg.url.host, arg.url.href) == ("cell", "abc", "cell://abc")
    assert arg.raw and arg.selector is not None and arg.selector.ranges == (LineRange(1, 5),)
    skill = parse_path_arg("skill://plugin:name", tmp_path)
    assert skill.url is not None and skill.url.host == "plugin:name" and skill.selector is None
    local = parse_path_arg("local:/notes.md", tmp_path)
    assert local.url is not None and local.url.href == "local://notes.md"


def test_opaque_urls_follow_the_registered_schemes(tmp_path: Path) -> None:
    assert parse_path_arg("urn:isbn:123", tmp_path).url is not None
    limited = parse_path_arg("notes:intro", tmp_path, schemes=["var", "cell"])
    assert limited.url is None and limited.path == tmp_path / "notes:intro"
    assert parse_path_arg("var:df", tmp_path, schemes=["var"]).url is not None
    typo = parse_path_arg("vra://df", tmp_path, schemes=["var"])
    assert typo.url is not None and typo.url.scheme == "vra"


def test_unpeeled_schemes_keep_selector_shaped_tails(tmp_path: Path) -> None:
    arg = parse_path_arg("mcp://server/res:12", tmp_path, unpeeled=["mcp"])
    assert arg.url is not None and arg.url.path == "/res:12" and arg.selector is None
    peeled = parse_path_arg("mcp://server/res:12", tmp_path)
    assert peeled.url is not None and peeled.url.path == "/res" and peeled.selector is not None


def test_file_urls_become_paths(tmp_path: Path) -> None:
    arg = parse_path_arg("file:///tmp/my%20dir/a.py:3-4", tmp_path)
    assert arg.url is None and arg.path == Path("/tmp/my dir/a.py")
    assert arg.selector is not None and arg.selector.ranges == (LineRange(3, 4),)


@pytest.mark.parametrize("text", ["", "   ", ":10-20"])
def test_empty_paths_are_refused(tmp_path: Path, text: str) -> None:
    with pytest.raises(ValueError, match="path"):
        parse_path_arg(text, tmp_path)

"""The fuzzy edit matcher: the seed's rules, our extensions, ambiguity, and properties."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from agent_ext.fs._match_text import CHAR_MAP, normalize_chars, split_blanks
from agent_ext.fs.matching import (
    MatchResult,
    apply_edit,
    closest_lines,
    find_edit,
    snippet,
    suggest_edit,
    without_line_numbers,
)

LOOK_ALIKES = sorted(chr(c) for c in CHAR_MAP)


def edit(content: str, old: str, new: str, *, replace_all: bool = False) -> str:
    result = find_edit(content, old, new, replace_all=replace_all)
    assert result.ok, result.message
    return apply_edit(content, result)


def stage(content: str, old: str, new: str, **kw: bool) -> str:
    result = find_edit(content, old, new, **kw)
    assert result.ok, result.message
    return result.matches[0].stage


def refused(content: str, old: str, new: str, **kw: bool) -> MatchResult:
    result = find_edit(content, old, new, **kw)
    assert not result.ok, apply_edit(content, result)
    assert result.matches == ()
    return result


PY = """\
def area(w, h):
    return w * h


class Box:
    def __init__(self, w, h):
        self.w = w
        self.h = h

    def area(self):
        if self.w < 0:
            raise ValueError('negative width')
        return area(self.w, self.h)
"""


# --- seed rules --------------------------------------------------------------------------------


@pytest.mark.parametrize("char", LOOK_ALIKES)
def test_every_look_alike_in_old_string_matches_the_ascii_file(char: str) -> None:
    ascii_char = CHAR_MAP[ord(char)]
    content = f"x = a{ascii_char}b\ny = 2\n"
    result = find_edit(content, f"x = a{char}b", "x = z")
    assert result.ok
    assert result.matches[0].stage == "normalized"
    assert apply_edit(content, result) == "x = z\ny = 2\n"


@pytest.mark.parametrize("char", LOOK_ALIKES)
def test_every_look_alike_in_the_file_is_kept_where_not_replaced(char: str) -> None:
    ascii_char = CHAR_MAP[ord(char)]
    content = f"title = a{char}b\nkeep = c{char}d\n"
    assert edit(content, f"title = a{ascii_char}b", "title = new") == f"title = new\nkeep = c{char}d\n"


def test_the_map_is_one_to_one_and_leaves_other_characters() -> None:
    for char in LOOK_ALIKES:
        assert len(normalize_chars(char)) == 1
    for char in ("\u2000", "\u2001", "\u200b", "\u2026", "\u2032", "\t"):
        assert normalize_chars(char) == char


@pytest.mark.parametrize("char", ["\u2000", "\u2001", "\u200b", "\u2032"])
def test_unmapped_look_alikes_are_not_matched(char: str) -> None:
    content = "x = a b\n"
    result = refused(content, f"x = a{char}b", "y")
    assert result.error == "edit_no_occurrence_found"


def test_empty_old_string_is_an_error_not_a_crash() -> None:
    result = refused("abc\n", "", "x")
    assert result.error == "edit_no_occurrence_found"
    assert "empty" in result.message
    assert refused("", "", "").error == "edit_no_occurrence_found"


def test_literal_match_replaces_exactly_that_text() -> None:
    result = find_edit(PY, "self.h = h", "self.h = max(h, 0)")
    assert result.ok
    assert result.matches[0].stage == "literal"
    assert result.lines == (8,)
    assert apply_edit(PY, result) == PY.replace("self.h = h", "self.h = max(h, 0)")


def test_normalized_match_replaces_the_files_own_bytes() -> None:
    content = "msg = \u201chello\u201d  # greeting\nother = \u201chello\u201d\n"
    result = find_edit(content, 'msg = "hello"', 'msg = "bye"')
    assert result.ok
    match = result.matches[0]
    assert content[match.start:match.end] == "msg = \u201chello\u201d"
    assert apply_edit(content, result) == 'msg = "bye"  # greeting\nother = \u201chello\u201d\n'


def test_rtrim_pass_matches_when_the_file_has_trailing_blanks() -> None:
    content = "a = 1   \nb = 2\t\nc = 3\n"
    result = find_edit(content, "a = 1\nb = 2\n", "a = 10\nb = 20\n")
    assert result.ok
    assert result.matches[0].stage == "rtrim_lines"
    assert apply_edit(content, result) == "a = 10\nb = 20\nc = 3\n"


def test_rtrim_pass_matches_when_old_string_has_trailing_blanks() -> None:
    assert stage(PY, "        self.w = w  \n        self.h = h \n", "x\n") == "rtrim_lines"
    assert edit(PY, "        self.w = w  \n        self.h = h \n",
                "        self.w = w\n") == PY.replace("        self.h = h\n", "")


def test_normalized_and_rtrim_pass_combined() -> None:
    old = "        if self.w < 0:  \n            raise ValueError(\u2018negative width\u2019)\n"
    new = "        if self.w <= 0:\n            raise ValueError('bad width')\n"
    assert stage(PY, old, new) == "normalized+rtrim_lines"
    assert "raise ValueError('bad width')" in edit(PY, old, new)


def test_trailing_blanks_are_never_stripped_from_new_string() -> None:
    content = "# Title\nfirst line\nsecond line\n"
    out = edit(content, "first line\n", "first line  \n")
    assert out == "# Title\nfirst line  \nsecond line\n"


def test_final_empty_line_dropped_when_the_file_lacks_a_final_newline() -> None:
    content = "a = 1\nb = 2"
    result = find_edit(content, "b = 2\n", "b = 3\n")
    assert result.ok
    assert result.matches[0].stage == "drop_trailing_newline"
    assert result.matches[0].new_string == "b = 3"
    assert apply_edit(content, result) == "a = 1\nb = 3"


def test_deletion_takes_the_following_newline() -> None:
    content = "a = 1\nb = 2\nc = 3\n"
    assert edit(content, "b = 2", "") == "a = 1\nc = 3\n"
    assert edit(content, "a = 1\nb = 2", "") == "c = 3\n"


def test_deletion_inside_a_line_does_not_join_lines() -> None:
    # The seed would take the newline here and glue "x = 1" onto the next line.
    content = "x = 1  # note\ny = 2\n"
    assert edit(content, "  # note", "") == "x = 1\ny = 2\n"


def test_deletion_of_an_indented_line_removes_the_whole_line() -> None:
    content = "if a:\n    foo()\n    bar()\n"
    assert edit(content, "foo()\n", "") == "if a:\n    bar()\n"
    assert edit(content, "foo()", "") == "if a:\n    bar()\n"


@pytest.mark.parametrize("new", ["cost = '$1'", "cost = $&", "cost = $$", "x = r'\\1 \\g<0>'"])
def test_dollar_and_backslash_sequences_in_new_string_are_literal(new: str) -> None:
    content = "price = 1\nrest\n"
    assert edit(content, "price = 1", new) == f"{new}\nrest\n"


def test_occurrences_are_counted_without_overlap() -> None:
    assert edit("aaaa", "aa", "b", replace_all=True) == "bb"
    assert edit("aaa", "aa", "b", replace_all=True) == "ba"


def test_overlapping_placements_are_ambiguous() -> None:
    result = refused("aaa\n", "aa", "b")
    assert result.error == "edit_expected_occurrence_mismatch"


def test_several_exact_occurrences_need_replace_all_and_name_their_lines() -> None:
    result = refused(PY, "self.w", "self.width")
    assert result.error == "edit_expected_occurrence_mismatch"
    assert result.lines == (7, 11, 13)
    assert "lines 7, 11, 13" in result.message
    assert "replace_all" in result.message
    out = edit(PY, "self.w", "self.width", replace_all=True)
    assert out == PY.replace("self.w", "self.width")


def test_identical_old_and_new_is_no_change() -> None:
    assert refused(PY, "self.h = h", "self.h = h").error == "edit_no_change"
    content = "s = \u201cx\u201d\n"
    # Matched to the file, the model's straight quotes are the file's text again.
    assert refused(content, "s = \u201cx\u201d ", "s = \u201cx\u201d").error == "edit_no_change"


# --- snippet -----------------------------------------------------------------------------------


def test_snippet_shows_four_lines_around_the_change() -> None:
    old = "\n".join(f"line {i}" for i in range(1, 21))
    new = old.replace("line 10", "line ten")
    assert snippet(old, new) == (6, 14, "\n".join(new.split("\n")[5:14]))


def test_snippet_is_clamped_at_both_ends() -> None:
    old = "a\nb\nc"
    assert snippet(old, "A\nb\nc") == (1, 3, "A\nb\nc")
    assert snippet(old, "a\nb\nC") == (1, 3, "a\nb\nC")


def test_snippet_of_a_new_file_is_the_whole_file() -> None:
    assert snippet(None, "x\ny") == (1, 2, "x\ny")


def test_snippet_none_for_no_change_empty_result_or_huge_change() -> None:
    assert snippet("a\nb", "a\nb") is None
    assert snippet("a\nb", "") is None
    old = "\n".join(str(i) for i in range(1500))
    new = "\n".join(f"{i}!" for i in range(1500))
    assert snippet(old, new) is None
    assert snippet(old, "\n".join(f"{i}!" if i < 1001 else str(i) for i in range(1500))) is not None


def test_snippet_after_a_deletion() -> None:
    old = "\n".join(str(i) for i in range(1, 21))
    new = old.replace("10\n11\n", "")
    start, end, text = snippet(old, new) or (0, 0, "")
    assert (start, end) == (6, 13)
    assert text.split("\n")[0] == "6"


# --- indentation ---------------------------------------------------------------------------------


@pytest.mark.parametrize("width", [2, 4, 8])
def test_old_string_with_the_enclosing_indentation_dropped(width: int) -> None:
    content = "\n".join(" " * width + line if line else line for line in PY.split("\n"))
    old = "    def area(self):\n        if self.w < 0:\n"
    new = "    def area(self):\n        # checked\n        if self.w <= 0:\n"
    result = find_edit(content, old, new)
    assert result.ok, result.message
    assert result.matches[0].stage == "indent_shift"
    pad = " " * width
    assert apply_edit(content, result) == content.replace(
        f"{pad}    def area(self):\n{pad}        if self.w < 0:\n",
        f"{pad}    def area(self):\n{pad}        # checked\n{pad}        if self.w <= 0:\n")


def test_old_string_with_extra_indentation() -> None:
    old = "            self.w = w\n            self.h = h\n"
    new = "            self.w = w\n            self.h = h\n            self.d = 0\n"
    assert edit(PY, old, new) == PY.replace("        self.h = h\n",
                                            "        self.h = h\n        self.d = 0\n")


def test_new_string_that_cannot_be_shifted_left_is_refused() -> None:
    old = "            self.w = w\n            self.h = h\n"
    new = "            self.w = w\n  self.h = h\n"
    result = refused(PY, old, new)
    assert result.error == "edit_no_occurrence_found"
    assert "line 2 of new_string" in result.message
    assert "Re-read the file" in result.message


def test_relative_indentation_must_be_kept() -> None:
    old = "    def __init__(self, w, h):\n          self.w = w\n        self.h = h\n"
    assert refused(PY, old, "x").error == "edit_no_occurrence_found"


def test_first_line_copied_without_its_indentation() -> None:
    old = "def area(self):\n    if self.w < 0:  \n"
    new = "def area(self):\n    if self.w <= 0:\n"
    assert edit(PY, old, new) == PY.replace("if self.w < 0:", "if self.w <= 0:")


def test_single_line_found_inside_deeper_indentation_reindents_new_lines() -> None:
    old = "    self.h = h\n"
    new = "    self.h = h\n    self.d = 0\n"
    assert edit(PY, old, new) == PY.replace("        self.h = h\n",
                                            "        self.h = h\n        self.d = 0\n")


def test_first_line_at_the_margin_counts_for_relative_indentation() -> None:
    content = "namespace A\n{\n    class B\n    {\n    }\n}\n"
    assert refused(content, "{\n      class B\n", "{\n      class C\n").error == (
        "edit_no_occurrence_found")
    assert edit(content, "{ \n    class B\n", "{\n    class C\n") == content.replace("B", "C")


def test_exact_single_line_inside_deeper_indentation_says_so() -> None:
    result = find_edit(PY, "    self.h = h\n", "    self.h = h\n    self.d = 0\n")
    assert result.ok
    assert result.matches[0].stage == "indent_shift"
    assert "inside deeper indentation" in result.message


TABS = "func f() {\n\tif x {\n\t\treturn 1\n\t}\n\treturn 0\n}\n"


@pytest.mark.parametrize("width", [2, 4, 8])
def test_spaces_written_for_a_tab_indented_file(width: int) -> None:
    pad = " " * width
    old = f"{pad}if x {{\n{pad}{pad}return 1\n"
    new = f"{pad}if x {{\n{pad}{pad}log()\n{pad}{pad}return 2\n"
    result = find_edit(TABS, old, new)
    assert result.ok, result.message
    assert result.matches[0].stage == "tabs"
    assert apply_edit(TABS, result) == TABS.replace("\t\treturn 1\n", "\t\tlog()\n\t\treturn 2\n")


def test_tabs_written_for_a_space_indented_file() -> None:
    old = "\tdef __init__(self, w, h):\n\t\tself.w = w\n"
    new = "\tdef __init__(self, w, h):\n\t\tself.w = abs(w)\n"
    assert edit(PY, old, new) == PY.replace("self.w = w", "self.w = abs(w)")


def test_tab_conversion_refuses_a_line_it_cannot_shift_left() -> None:
    old = "        if x {\n            return 1\n"
    new = "        if x {\n  return 1\n"
    result = refused(TABS, old, new)
    assert "line 2 of new_string" in result.message


def test_tabs_and_a_shift_together() -> None:
    old = "if x {\n    return 1\n"
    new = "if y {\n    return 1\n"
    assert edit(TABS, old, new) == TABS.replace("if x", "if y")


# --- line ends and escapes -----------------------------------------------------------------------


def test_crlf_in_the_models_strings_for_an_lf_file() -> None:
    old = "        self.w = w\r\n        self.h = h\r\n"
    new = "        self.w = w\r\n        self.h = -h\r\n"
    result = find_edit(PY, old, new)
    assert result.ok
    assert result.matches[0].stage == "crlf"
    assert apply_edit(PY, result) == PY.replace("self.h = h", "self.h = -h")


def test_crlf_only_in_new_string_is_turned_into_lf() -> None:
    assert edit(PY, "self.h = h", "self.h = h\r\n        self.d = 0") == PY.replace(
        "self.h = h", "self.h = h\n        self.d = 0")


def test_lf_strings_for_a_crlf_text_keep_its_line_ends() -> None:
    content = PY.replace("\n", "\r\n")
    out = edit(content, "        self.w = w\n        self.h = h\n",
               "        self.w = w\n        self.h = 0\n")
    assert out == content.replace("self.h = h", "self.h = 0")


def test_doubly_escaped_newlines_are_decoded() -> None:
    old = "        self.w = w\\n        self.h = h\\n"
    new = "        self.w = w\\n        self.h = 2 * h\\n"
    result = find_edit(PY, old, new)
    assert result.ok
    assert result.matches[0].stage == "unescaped"
    assert apply_edit(PY, result) == PY.replace("self.h = h", "self.h = 2 * h")


def test_new_string_with_real_newlines_is_not_decoded() -> None:
    content = "a = 1\nb = 2\n"
    assert edit(content, "a = 1\\nb = 2", "a = 1\nb = '\\n'") == "a = 1\nb = '\\n'\n"


def test_escapes_inside_strings_are_told_from_escaped_newlines() -> None:
    content = "def f(xs):\n    return '\\n'.join(xs)\n"
    old = "def f(xs):\\n    return '\\n'.join(xs)\\n"
    new = "def f(xs):\\n    return '\\n'.join(sorted(xs))\\n"
    assert edit(content, old, new) == "def f(xs):\n    return '\\n'.join(sorted(xs))\n"


def test_fully_double_escaped_strings_are_decoded() -> None:
    content = 'print("a\\tb")\nx = 1\n'
    old = 'print(\\"a\\\\tb\\")\\nx = 1'
    new = 'print(\\"a\\\\tb\\")\\nx = 2'
    assert edit(content, old, new) == 'print("a\\tb")\nx = 2\n'


def test_escapes_added_in_new_string_follow_old_strings_spelling() -> None:
    content = "def f():\n    x = 1\n    return x\n"
    old = "def f():\\n    x = 1\\n"
    new = "def f():\\n    # don't log\\n    x = 1\\n"
    assert edit(content, old, new) == "def f():\n    # don't log\n    x = 1\n    return x\n"


def test_runs_of_escaped_backslashes_stay_fast() -> None:
    content = "\\" * 45 + "x\n"
    assert refused(content, "\\\\" * 30 + "y\\n", "z").error == "edit_no_occurrence_found"


def test_escaped_form_found_literally_wins() -> None:
    content = "s = 'a\\nb'\nt = 'a\nb'\n"
    assert stage(content, "'a\\nb'", "'c'") == "literal"


def test_ambiguous_unescaped_form_is_refused() -> None:
    content = "x = 1\ny = 2\nz\nx = 1\ny = 2\n"
    result = refused(content, "x = 1\\ny = 2", "x = 0\\ny = 0")
    assert result.lines == (1, 4)


# --- look-alikes beyond one character -----------------------------------------------------------


def test_em_dash_for_double_hyphen_and_back() -> None:
    content = "run --verbose --dry-run\nTitle \u2014 subtitle\n"
    assert edit(content, "run \u2014verbose", "run -v") == "run -v --dry-run\nTitle \u2014 subtitle\n"
    assert edit(content, "Title -- subtitle", "Title") == "run --verbose --dry-run\nTitle\n"


def test_ellipsis_for_three_dots() -> None:
    content = "def f(): ...\nwait...\n"
    assert edit(content, "wait\u2026", "done") == "def f(): ...\ndone\n"


def test_a_run_of_dashes_is_not_matched_by_its_tail() -> None:
    # Mapped, "——-" is "---": it must not land on the end of the nine-dash rule; the
    # respelled "-----" is the whole rule.
    content = "Functions\n---------\n\npformat()\n"
    assert edit(content, "————-\n\npformat()\n", "=========\n\npformat()\n") == (
        "Functions\n=========\n\npformat()\n")


def test_combined_perturbations() -> None:
    old = ("  def\u00a0area(self):  \r\n      if self.w < 0:\r\n"
           "          raise ValueError(\u2018negative width\u2019)\r\n")
    new = ("  def area(self):\r\n      if self.w < 0:\r\n"
           "          raise ValueError('width must be >= 0')\r\n")
    assert edit(PY, old, new) == PY.replace("'negative width'", "'width must be >= 0'")


# --- ambiguity and safety ------------------------------------------------------------------------


def test_fuzzy_ambiguity_lists_candidate_lines() -> None:
    content = "def f():\n    x = 'a'\n\ndef g():\n    x = 'a'\n"
    result = refused(content, "    x = \u2018a\u2019", "    x = 'b'")
    assert result.error == "edit_expected_occurrence_mismatch"
    assert result.lines == (2, 5)
    assert "lines 2, 5" in result.message
    assert "add surrounding lines" in result.message


def test_near_duplicates_differing_in_trailing_blanks_are_not_guessed() -> None:
    # The seed's right-trimmed pass would take the first block; the model meant the second.
    content = "a = 1 \nb = 2\n\nc\n\na = 1\nb = 2 \n"
    result = refused(content, "a = 1\nb = 2\n", "a = 9\nb = 9\n")
    assert result.lines == (1, 6)


def test_a_block_and_its_reindented_copy_are_ambiguous() -> None:
    content = "if a:\n    x = 1\n    y = 2\nif b:\n        x = 1\n        y = 2\n"
    result = refused(content, "    x = 1  \n    y = 2\n", "    x = 0\n    y = 0\n")
    assert result.lines == (2, 5)


def test_repeated_lines_are_ambiguous() -> None:
    content = "a\nb\na\nb\na\n"
    result = refused(content, "a \nb\na", "z")
    assert result.lines == (1, 3)


def test_exact_block_at_end_of_file_and_a_shifted_copy_are_ambiguous() -> None:
    content = "class A {\n    void f() {\n        }\n    }\n}"
    result = refused(content, "    }\n}\n", "    }\n}\n// end\n")
    assert result.error == "edit_expected_occurrence_mismatch"


def test_replace_all_fuzzy_when_every_place_matches_the_same_way() -> None:
    content = "a = \u2018x\u2019\nb = \u2018x\u2019\nc = 'y'\n"
    result = find_edit(content, "'x'", "'z'", replace_all=True)
    assert result.ok
    assert [m.stage for m in result.matches] == ["normalized", "normalized"]
    assert apply_edit(content, result) == "a = 'z'\nb = 'z'\nc = 'y'\n"


def test_replace_all_fuzzy_refused_when_places_match_differently() -> None:
    content = "if a:\n    x = 1  \nif b:\n        x = 1\n"
    result = refused(content, "    x = 1\t", "    x = 2", replace_all=True)
    assert result.error == "edit_expected_occurrence_mismatch"
    assert result.lines == (2, 4)


def test_replace_all_fuzzy_refused_when_places_overlap() -> None:
    result = refused("a\na\na\n", "a \na\n", "b\n", replace_all=True)
    assert result.error == "edit_expected_occurrence_mismatch"


def test_not_found_says_what_to_do_next() -> None:
    result = refused(PY, "nothing of the sort", "x")
    assert result.error == "edit_no_occurrence_found"
    assert "Re-read the file" in result.message


def test_not_found_shows_the_closest_lines_as_they_are() -> None:
    """A retyped old_string gets the file's real text near it, numbered, to copy next time."""
    result = refused(PY, "self.height = h", "self.h = 2 * h")
    assert "The closest text in the file is at line 8" in result.message
    assert "\n8|         self.h = h\n" in result.message
    two = refused(PY, "if self.width < 0:\n    raise ValueError('negative')", "x")
    assert "lines 11-12" in two.message
    assert "11|         if self.w < 0:\n12|             raise ValueError('negative width')" \
        in two.message


def test_lines_run_together_into_one_are_found_as_the_lines_they_were() -> None:
    text = 'def add(a, b):\n    """Sum."""\n    return a - b\n'
    assert closest_lines(text, "def add(a, b): return a - b") == (
        1, ["def add(a, b):", '    """Sum."""', "    return a - b"])


def test_a_missed_old_string_is_offered_its_change_on_the_line_that_fits() -> None:
    text = 'def add(a, b):\n    """Sum."""\n    return a - b\n'
    result = refused(text, "def add(a, b): return a - b", "def add(a, b): return a + b")
    assert result.message.endswith(
        'send: {"old_string": "    return a - b", "new_string": "    return a + b"}')
    assert suggest_edit(text, "return a - b - 0", "return a + b - 0") == (
        "    return a - b", "    return a + b")


@pytest.mark.parametrize(("text", "old", "new"), [
    ("x = 1\n", "y = 6", "y = 3"),  # the changed text is nowhere
    ("x = a - b\ny = a - b\n", "z = a - b", "z = a + b"),  # two lines fit alike
    ("x = a - b\nx = a - b\n", "x = a -- b", "x = a ++ b"),  # nowhere as such
    ("x = 1\n", "x = 2\ny = 2", "x = 3\ny = 3"),  # a change over several lines
    ("x = 1\n", "same", "same"),  # no change at all
])
def test_no_change_is_offered_when_its_place_is_not_clear(text: str, old: str, new: str) -> None:
    assert suggest_edit(text, old, new) is None


def test_closest_lines_is_the_most_alike_run() -> None:
    assert closest_lines(PY, "return w * hh") == (2, ["    return w * h"])
    assert closest_lines(PY, "zzzz qqqq") == (0, [])
    assert closest_lines("a\n", "\n\n") == (0, [])
    assert closest_lines("x = 1\n" * 10, "x = 2", limit=5) == (0, [])


@pytest.mark.parametrize("numbered", [
    "     2\t    return w * h",  # as read_file numbers lines
    "2|     return w * h",  # as the closest-lines hint shows them
])
def test_line_numbers_copied_from_a_read_are_dropped(numbered: str) -> None:
    result = find_edit(PY, numbered, "    return w * h * 1")
    assert result.ok, result.message
    assert apply_edit(PY, result).splitlines()[1] == "    return w * h * 1"
    assert "line numbers" in result.message
    assert result.matches[0].stage == "line_numbers"


def test_line_numbers_are_dropped_from_new_string_too() -> None:
    result = find_edit(PY, "     1\tdef area(w, h):\n     2\t    return w * h",
                       "     1\tdef area(w, h):\n     2\t    return h * w")
    assert apply_edit(PY, result).startswith("def area(w, h):\n    return h * w\n")
    assert without_line_numbers("1\tx\ny") is None  # not every line numbered: left as is
    assert without_line_numbers("  \n") is None


def test_apply_edit_refuses_a_failed_result() -> None:
    with pytest.raises(ValueError, match="edit_no_occurrence_found"):
        apply_edit(PY, find_edit(PY, "nothing like this", "x"))


def test_success_message_names_the_relaxation() -> None:
    result = find_edit(PY, "    def area(self):\n      if self.w < 0:\n", "x\n")
    assert not result.ok
    result = find_edit(PY, "        self.w = w  \n", "        self.w = 0\n")
    assert result.ok
    assert "trailing whitespace" in result.message
    assert result.lines == (7,)


# --- properties ----------------------------------------------------------------------------------

ALPHABET = "ab xy\n\t'\"-=\u2019\u201c\u00a0"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=ALPHABET, min_size=1, max_size=60), st.data())
def test_exact_substring_is_found_literally(text: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    old = text[start:end]
    new = data.draw(st.text(alphabet="XYZ $\\", min_size=1, max_size=5))
    result = find_edit(text, old, new)
    unique = text.count(old) == 1 and text.find(old, text.find(old) + 1) == -1
    if not unique:
        assert result.error == "edit_expected_occurrence_mismatch"
        return
    assume(new != old)
    assert result.ok, result.message
    assert [m.stage for m in result.matches] == ["literal"]
    assert apply_edit(text, result) == text.replace(old, new, 1)


def _canon(text: str) -> str:
    return "\n".join(split_blanks(normalize_chars(line))[1] for line in text.split("\n"))


LINES = st.lists(
    st.tuples(st.sampled_from(["", "  ", "    ", "\t"]),
              st.sampled_from(["foo()", "x = 'a'", 'say("hi")', "a - b", "}", "return x", "if y:"]),
              st.sampled_from(["", "", " ", "\t"])),
    min_size=1, max_size=12)


def _perturb(text: str, data: st.DataObject) -> str:
    lines = text.split("\n")
    out = []
    shift = data.draw(st.sampled_from(["", "  ", "    "]))
    for line in lines:
        typed = line.replace("'", data.draw(st.sampled_from(["'", "\u2019"])))
        typed = typed.replace("-", data.draw(st.sampled_from(["-", "\u2013"])))
        if typed.strip():
            typed = shift + typed + data.draw(st.sampled_from(["", " "]))
        out.append(typed)
    return "\n".join(out)


@settings(max_examples=300, deadline=None)
@given(LINES, st.data())
def test_fuzzy_matches_equal_old_string_up_to_the_relaxations(
        spec: list[tuple[str, str, str]], data: st.DataObject) -> None:
    content = "\n".join(lead + body + trail for lead, body, trail in spec) + "\n"
    lines = content.split("\n")[:-1]
    first = data.draw(st.integers(0, len(lines) - 1))
    last = data.draw(st.integers(first, len(lines) - 1))
    old = _perturb("\n".join(lines[first:last + 1]) + "\n", data)
    replace_all = data.draw(st.booleans())
    result = find_edit(content, old, "NEW\n", replace_all=replace_all)
    previous_end = 0
    for match in result.matches:
        assert match.start >= previous_end
        previous_end = match.end
        meant = old[:-1] if "drop_trailing_newline" in match.stage else old
        assert _canon(content[match.start:match.end]) == _canon(meant)
    if not replace_all:
        assert len(result.matches) <= 1


@settings(max_examples=200, deadline=None)
@given(LINES, st.text(alphabet=ALPHABET, min_size=1, max_size=12), st.booleans())
def test_matches_never_overlap(spec: list[tuple[str, str, str]], old: str, replace_all: bool
                               ) -> None:
    content = "\n".join(lead + body + trail for lead, body, trail in spec)
    result = find_edit(content, old, "Z", replace_all=replace_all)
    spans = [(m.start, m.end) for m in result.matches]
    assert spans == sorted(spans)
    assert all(a[1] <= b[0] for a, b in pairwise(spans))
    if result.ok:
        assert len(result.lines) == len(spans)


@pytest.mark.parametrize(("content", "old"), [
    ("  item\n" * 20_000, "item \n"),                # re-indented and a trailing blank
    ("say \u201chi\u201d\n" * 20_000, 'say "hi"\n'),  # look-alike quotes
    ("a\tb\n" * 20_000, "a\\tb\n"),                   # an escaped tab
])
def test_the_relaxed_search_gives_up_past_its_budget(content: str, old: str) -> None:
    result = find_edit(content, old, "Z")
    assert result.error == "edit_expected_occurrence_mismatch"
    assert "more than 10,000 places" in result.message


def test_the_relaxed_search_still_counts_up_to_its_budget() -> None:
    result = find_edit("  item\n" * 9_000, "item \n", "Z", replace_all=True)
    assert result.ok and len(result.matches) == 9_000

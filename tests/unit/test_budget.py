"""The output budget: per-result truncation, spill files, persisted stubs, batch and image budgets."""

from __future__ import annotations

import gc
import hashlib
import os
import re
import stat
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_ext.core.budget import (
    BATCH_CUT_PREFIX,
    DIGEST_LABEL,
    OUTPUT_TOO_LARGE_PREFIX,
    PERSISTED_CLOSE_TAG,
    PERSISTED_OPEN_TAG,
    SEPARATOR,
    TRUNCATED_PREFIX,
    TRUNCATION_MARKER,
    BudgetConfig,
    OutputBudget,
    SpillError,
    SpillStore,
    normalize_call_id,
    truncate_text,
    water_fill,
)
from agent_ext.core.errors import ErrorCode
from agent_ext.core.result import ImagePart, TextPart, ToolResult

INF = float("inf")


def rows(n: int, width: int = 9) -> str:
    """``n`` distinct lines of exactly ``width`` characters."""
    return "\n".join(f"row{i:0{width - 3}d}" for i in range(n))


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def saved_path(text: str) -> Path:
    found = re.search(r"saved to: (.+)$", text, re.MULTILINE)
    assert found, text[:300]
    return Path(found.group(1))


def make(tmp_path: Path, **overrides: int) -> OutputBudget:
    config = replace(BudgetConfig(), **overrides)  # type: ignore[arg-type]
    return OutputBudget(SpillStore(tmp_path / "session", config))


@pytest.fixture
def budget(tmp_path: Path) -> OutputBudget:
    """Small limits so the rules show on small inputs: threshold 1,000, gate at 4,000."""
    return make(tmp_path, threshold_chars=1_000, line_cap=50, gate_headroom=3_000,
                preview_chars=200, batch_chars=10_000)


# -- truncate_text ---------------------------------------------------------------------------


def test_within_both_limits_is_untouched() -> None:
    text = rows(10)
    assert truncate_text(text, max_chars=len(text), max_lines=10, keep="both") == (text, False)
    assert truncate_text(text, max_chars=len(text), max_lines=None, keep="head") == (text, False)


def test_both_splits_lines_one_fifth_head_rest_tail() -> None:
    lines = rows(100).split("\n")
    out, cut = truncate_text("\n".join(lines), max_chars=100_000, max_lines=10, keep="both")
    assert cut
    assert out == "\n".join(lines[:2]) + SEPARATOR + "\n".join(lines[-8:])


def test_both_gives_head_a_fifth_of_the_char_budget() -> None:
    lines = [chr(ord("a") + i) * 100 for i in range(10)]
    out, cut = truncate_text("\n".join(lines), max_chars=500, max_lines=None, keep="both")
    content = 500 - len(SEPARATOR)
    head_budget = content // 5
    tail_budget = content - head_budget
    # The first line does not fit the head budget: it is cut and marked, using all of it.
    head = lines[0][:head_budget - 3] + "..."
    # The tail takes whole lines from the end, then a marked slice of the next one.
    whole = lines[-3:]
    left = tail_budget - 3 * 101
    tail = ["..." + lines[6][-(left - 3):], *whole]
    assert cut
    assert out == head + SEPARATOR + "\n".join(tail)
    assert len(out) <= 500


def test_head_keeps_the_beginning_and_ends_with_the_separator() -> None:
    lines = rows(60).split("\n")
    out, cut = truncate_text("\n".join(lines), max_chars=100_000, max_lines=10, keep="head")
    assert cut
    assert out == "\n".join(lines[:10]) + SEPARATOR


def test_tail_keeps_the_end_and_starts_with_the_separator() -> None:
    lines = rows(60).split("\n")
    out, cut = truncate_text("\n".join(lines), max_chars=100_000, max_lines=10, keep="tail")
    assert cut
    assert out == SEPARATOR + "\n".join(lines[-10:])


def test_line_cap_alone_triggers_a_cut() -> None:
    text = rows(51)
    assert len(text) < 25_000
    out, cut = truncate_text(text, max_chars=25_000, max_lines=50, keep="both")
    assert cut
    assert out.count("row") == 50


def test_cut_line_gets_no_ellipsis_below_three_chars() -> None:
    # 11 characters after the separator: the head gets 2, too few for a marked slice, and the
    # tail gets 9: "end" whole, then a marked slice of the line before it.
    budget = len(SEPARATOR) + 11
    out, cut = truncate_text("abcdefghij\n" * 10 + "end", max_chars=budget, max_lines=None,
                             keep="both")
    assert cut
    assert out == SEPARATOR + "...ij\nend"


def test_separator_is_dropped_when_the_budget_cannot_hold_it() -> None:
    out, cut = truncate_text("x" * 1_000, max_chars=20, max_lines=None, keep="both")
    assert cut
    assert TRUNCATION_MARKER not in out
    assert len(out) <= 20


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet="ab\n", max_size=400), max_chars=st.integers(0, 300),
       max_lines=st.one_of(st.none(), st.integers(1, 30)),
       keep=st.sampled_from(["head", "tail", "both"]))
def test_truncate_never_exceeds_its_budget(text: str, max_chars: int, max_lines: int | None,
                                           keep: str) -> None:
    out, cut = truncate_text(text, max_chars=max_chars, max_lines=max_lines,
                             keep=keep)  # type: ignore[arg-type]
    if not cut:
        assert out == text
    else:
        assert len(out) <= max_chars


# -- water-fill ------------------------------------------------------------------------------


def test_water_fill_keeps_small_and_shares_the_rest() -> None:
    assert water_fill([10, 20, 1_000, 1_000], 1_030) == [10, 20, 500, 500]
    assert water_fill([100, 100, 100], 100) == [34, 33, 33]
    assert water_fill([5, 5], 100) == [5, 5]


@given(sizes=st.lists(st.integers(0, 1_000), max_size=12), budget=st.integers(0, 5_000))
def test_water_fill_is_max_min_fair(sizes: list[int], budget: int) -> None:
    alloc = water_fill(sizes, budget)
    assert sum(alloc) == min(budget, sum(sizes))
    assert all(a <= s for a, s in zip(alloc, sizes, strict=True))
    level = max(alloc, default=0)
    # Every result cut short sits at the shared level (give or take one leftover character).
    assert all(a >= level - 1 for a, s in zip(alloc, sizes, strict=True) if a < s)


# -- per-result truncation and spill files ---------------------------------------------------


def test_small_result_is_returned_as_is(budget: OutputBudget) -> None:
    result = ToolResult("hello")
    assert budget.apply(result, tool_name="shell") is result


def test_global_truncation_spills_the_full_output(budget: OutputBudget) -> None:
    text = "x" * 2_000  # over the threshold, under the gate
    result = ToolResult(text)
    out = budget.apply(result, tool_name="shell")

    assert result.llm_content == text
    assert not result.truncated
    assert out.truncated
    assert isinstance(out.llm_content, str)
    assert out.text.startswith(TRUNCATED_PREFIX)
    path = saved_path(out.text)
    assert re.fullmatch(r"shell_[0-9a-f]{12}\.output", path.name)
    assert path.parent == budget.store.session_dir
    assert path.read_text() == text
    assert mode(path) == 0o600
    assert mode(budget.store.session_dir) == 0o700
    assert sha(text) in out.text
    assert "2,000 characters, 2,000 bytes" in out.text
    assert "read_file" in out.text
    assert "offset/limit" in out.text
    body = out.text.split("Truncated part of the output:\n", 1)[1]
    assert len(body) <= 1_000
    assert len(out.text) < len(text)


def test_global_path_caps_lines(budget: OutputBudget) -> None:
    text = rows(200)  # 2,000 chars but 200 lines > 50
    out = budget.apply(ToolResult(text), tool_name="shell")
    body = out.text.split("Truncated part of the output:\n", 1)[1]
    assert body.count("row") == 50


def test_tool_budget_is_characters_only(budget: OutputBudget) -> None:
    many_lines = "\n".join(["a"] * 400)  # 799 chars, 400 lines
    assert budget.apply(ToolResult(many_lines), tool_name="t", max_output_chars=900).text \
        == many_lines
    assert budget.apply(ToolResult(many_lines), tool_name="t").truncated  # global line cap

    out = budget.apply(ToolResult("y" * 3_000), tool_name="t", max_output_chars=500,
                       truncate_keep="head")
    body = out.text.split("Truncated part of the output:\n", 1)[1]
    assert body == "y" * (500 - len(SEPARATOR) - 3) + "..." + SEPARATOR
    assert "shows the beginning of the content" in out.text


def test_inf_budget_is_untouched_below_the_gate(budget: OutputBudget) -> None:
    result = ToolResult(rows(300))  # 3,000 chars, 300 lines: over threshold and line cap
    assert budget.apply(result, tool_name="t", max_output_chars=INF) is result


def test_gate_applies_to_self_managed_tools_unless_exempt(budget: OutputBudget) -> None:
    text = "z" * 5_000
    out = budget.apply(ToolResult(text), tool_name="t", max_output_chars=INF)
    assert out.text.startswith(PERSISTED_OPEN_TAG)
    for exempt in ("read_file", "read_mcp_resource"):
        result = ToolResult(text)
        assert budget.apply(result, tool_name=exempt, max_output_chars=INF) is result


def test_read_file_is_not_persisted_by_the_gate(budget: OutputBudget) -> None:
    out = budget.apply(ToolResult("z" * 5_000), tool_name="read_file")
    assert out.text.startswith(TRUNCATED_PREFIX)  # the ordinary per-tool truncation
    assert not (budget.store.session_dir / "tool-results").exists()


def test_combined_pass_cuts_only_past_twice_the_budget(budget: OutputBudget) -> None:
    grown = ToolResult("w" * 1_900)
    assert budget.combined_pass(grown, tool_name="t", max_output_chars=1_000) is grown
    out = budget.combined_pass(ToolResult("w" * 2_500), tool_name="t", max_output_chars=1_000)
    assert out.truncated
    body = out.text.split("Truncated part of the output:\n", 1)[1]
    assert len(body) <= 2_000


def test_combined_pass_doubles_the_line_cap_on_the_global_path(tmp_path: Path) -> None:
    b = make(tmp_path, threshold_chars=100, line_cap=5)
    out = b.combined_pass(ToolResult(rows(500)), tool_name="t")  # 4,999 chars > 200
    body = out.text.split("Truncated part of the output:\n", 1)[1]
    assert body.count("row") == 10


def test_already_truncated_result_is_not_cut_again(budget: OutputBudget) -> None:
    result = ToolResult("q" * 1_500, truncated=True)
    assert budget.apply(result, tool_name="shell") is result
    huge = ToolResult("q" * 5_000, truncated=True)  # the 2x pass still bounds it
    assert budget.apply(huge, tool_name="shell").text.startswith(TRUNCATED_PREFIX)


def test_fixed_prefix_is_not_cut_again(budget: OutputBudget) -> None:
    result = ToolResult(f"{TRUNCATED_PREFIX}.\n" + "p" * 1_500)
    assert budget.apply(result, tool_name="shell") is result


def test_fixed_prefix_in_any_part_is_not_cut_again(budget: OutputBudget) -> None:
    result = ToolResult([TextPart("exit 0"), TextPart(f"{TRUNCATED_PREFIX}.\n" + "p" * 1_500)])
    assert budget.apply(result, tool_name="mcp") is result


def test_prefix_mid_output_does_not_bypass_the_budget(budget: OutputBudget) -> None:
    result = ToolResult("p" * 1_500 + TRUNCATED_PREFIX)
    assert budget.apply(result, tool_name="shell").truncated


@pytest.mark.parametrize("content", ["", "  \n ", []])
def test_empty_output_says_so(budget: OutputBudget, content: str | list[TextPart]) -> None:
    out = budget.apply(ToolResult(content), tool_name="shell")
    assert out.llm_content == "(shell completed with no output)"


def test_image_only_output_is_not_empty(budget: OutputBudget) -> None:
    result = ToolResult([ImagePart(b"png")])
    assert budget.apply(result, tool_name="screenshot") is result


def test_parts_merge_text_and_keep_media(budget: OutputBudget) -> None:
    image = ImagePart(b"\x89PNG")
    result = ToolResult([TextPart("a" * 800), image, TextPart("b" * 800)])
    out = budget.apply(result, tool_name="t")
    assert isinstance(out.llm_content, list)
    assert [type(p) for p in out.llm_content] == [TextPart, ImagePart]
    assert out.llm_content[1] is image
    assert saved_path(out.text).read_text() == "a" * 800 + "\n" + "b" * 800


def test_stub_longer_than_original_is_not_used(tmp_path: Path) -> None:
    b = make(tmp_path, threshold_chars=10, gate_headroom=0)
    result = ToolResult("s" * 60)  # over the gate, but every stub or wrapper is longer
    assert b.apply(result, tool_name="t", call_id="c") is result
    assert b.store.bytes_used == 0
    assert list(b.store.session_dir.rglob("*.*")) == []


def test_save_failure_keeps_a_bounded_preview_with_a_note(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the session folder should be")
    b = OutputBudget(SpillStore(blocker, replace(BudgetConfig(), threshold_chars=1_000,
                                                 gate_headroom=3_000)))
    for text in ("x" * 2_000, "y" * 10_000):  # per-tool path, then the gate path
        out = b.apply(ToolResult(text), tool_name="shell", call_id="c")
        assert not out.is_error
        assert out.truncated
        assert "could not save the full output" in out.text
        assert len(out.text) < 1_400
    assert b.store.bytes_used == 0


def test_unexpected_failure_never_turns_success_into_error(budget: OutputBudget,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(budget.store, "spill", broken)
    out = budget.apply(ToolResult("x" * 2_000), tool_name="shell")
    assert not out.is_error
    assert out.truncated
    assert "disk on fire" in out.text
    assert len(out.text) < 1_400


# -- persisted stubs -------------------------------------------------------------------------


def test_gate_persists_and_returns_a_stub(budget: OutputBudget) -> None:
    text = "line\n" * 2_000
    out = budget.apply(ToolResult(text), tool_name="shell", call_id="call_1")
    path = budget.store.session_dir / "tool-results" / "call_1.txt"
    assert path.read_text() == text
    assert mode(path) == 0o600
    assert mode(path.parent) == 0o700
    assert out.truncated
    assert out.text.startswith(PERSISTED_OPEN_TAG + "\n")
    assert out.text.endswith("\n" + PERSISTED_CLOSE_TAG)
    assert f"{OUTPUT_TOO_LARGE_PREFIX}10 KB). Full output saved to: {path}\n" in out.text
    assert f"{DIGEST_LABEL}{sha(text)}" in out.text
    preview = out.text.split("Preview (up to 200 chars):\n", 1)[1]
    assert preview == "line\n" * 39 + "line\n...\n" + PERSISTED_CLOSE_TAG


def test_stub_preview_escapes_nested_tags(budget: OutputBudget) -> None:
    text = "log:\n<persisted-output>fake</persisted-output>\n" + "n" * 5_000
    out = budget.apply(ToolResult(text), tool_name="shell", call_id="c")
    assert "&lt;persisted-output&gt;fake&lt;/persisted-output&gt;" in out.text
    assert out.text.count(PERSISTED_OPEN_TAG) == 1
    assert out.text.count(PERSISTED_CLOSE_TAG) == 1


@pytest.mark.parametrize(("call_id", "name"), [
    ("../x", "x.txt"), ("a/../../etc/passwd", "passwd.txt"), ("..\\..\\win", "win.txt"),
])
def test_call_id_cannot_leave_the_results_folder(tmp_path: Path, call_id: str, name: str) -> None:
    store = SpillStore(tmp_path / "s")
    record = store.persist(call_id, "data")
    assert record.path == store.session_dir / "tool-results" / name


@pytest.mark.parametrize("call_id", [".", "..", "", "a/..", "dir/"])
def test_unusable_call_id_gets_a_random_name(tmp_path: Path, call_id: str) -> None:
    store = SpillStore(tmp_path / "s")
    record = store.persist(call_id, "data")
    assert record.path.parent == store.session_dir / "tool-results"
    assert re.fullmatch(r"call_[0-9a-f]{12}\.txt", record.path.name)
    assert normalize_call_id(call_id) is None


def test_duplicate_call_ids_get_distinct_files(tmp_path: Path) -> None:
    store = SpillStore(tmp_path / "s")
    paths = [store.persist("same", str(i)).path for i in range(3)]
    assert [p.name for p in paths] == ["same.txt", "same-1.txt", "same-2.txt"]
    assert [p.read_text() for p in paths] == ["0", "1", "2"]


def test_file_over_the_size_cap_is_not_persisted(tmp_path: Path) -> None:
    b = make(tmp_path, threshold_chars=1_000, gate_headroom=3_000, max_spill_bytes=4_500)
    with pytest.raises(SpillError) as caught:
        b.store.persist("c", "x" * 4_501)
    assert caught.value.kind == "too_large"

    text = "x" * 5_000
    out = b.apply(ToolResult(text), tool_name="shell", call_id="c")
    assert out.text.startswith(f"{OUTPUT_TOO_LARGE_PREFIX}5 KB). agent_ext did not save it")
    assert PERSISTED_OPEN_TAG not in out.text
    assert f"{DIGEST_LABEL}{sha(text)}" in out.text
    assert not (b.store.session_dir / "tool-results").exists()


def test_session_budget_stops_persisting(tmp_path: Path) -> None:
    b = make(tmp_path, threshold_chars=1_000, gate_headroom=3_000, session_spill_bytes=9_000)
    first = b.apply(ToolResult("a" * 5_000), tool_name="t", call_id="one")
    assert first.text.startswith(PERSISTED_OPEN_TAG)
    second = b.apply(ToolResult("b" * 5_000), tool_name="t", call_id="two")
    assert second.text.startswith(OUTPUT_TOO_LARGE_PREFIX)
    assert "session" in second.text
    assert "limit" in second.text
    assert b.store.bytes_used == 5_000
    with pytest.raises(SpillError) as caught:
        b.store.spill("t", "c" * 4_001)
    assert caught.value.kind == "session_budget"


def test_discarded_files_give_their_bytes_back(tmp_path: Path) -> None:
    store = SpillStore(tmp_path / "s")
    record = store.spill("t", "abc")
    assert store.bytes_used == 3
    store.discard(record)
    assert store.bytes_used == 0
    assert not record.path.exists()


def test_large_error_messages_are_persisted(budget: OutputBudget) -> None:
    message = "Traceback line\n" * 400
    result = ToolResult.fail(ErrorCode.EXECUTION_FAILED, message)
    out = budget.apply(result, tool_name="shell", call_id="err")
    assert out.is_error
    assert out.error is not None
    assert out.error.code == ErrorCode.EXECUTION_FAILED
    assert out.text.startswith(PERSISTED_OPEN_TAG)
    assert out.error.message == out.text
    assert (budget.store.session_dir / "tool-results" / "err.txt").read_text() == message
    assert result.error is not None
    assert result.error.message == message


def test_errors_below_the_gate_are_kept_whole(budget: OutputBudget) -> None:
    result = ToolResult.fail(ErrorCode.EXECUTION_FAILED, "e" * 3_000)
    assert budget.apply(result, tool_name="shell") is result


# -- session folder --------------------------------------------------------------------------


def test_default_session_folder_is_private_and_cleaned_up(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    store = SpillStore()
    folder = store.session_dir
    assert folder.parent == tmp_path
    assert folder.name.startswith("agent_ext-")
    assert mode(folder) == 0o700
    store.spill("t", "data")
    store.cleanup()
    assert not folder.exists()


def test_session_folder_is_created_lazily(tmp_path: Path) -> None:
    b = make(tmp_path)
    b.apply(ToolResult("small"), tool_name="t")
    assert not (tmp_path / "session").exists()


def test_session_folder_goes_with_a_store_that_was_never_cleaned_up(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    store = SpillStore()
    folder = store.spill("t", "data").path.parent
    assert folder.exists()
    del store
    gc.collect()
    assert not folder.exists()


def test_cleanup_leaves_a_folder_it_did_not_create(tmp_path: Path) -> None:
    with SpillStore(tmp_path) as store:
        path = store.spill("t", "data").path
    assert tmp_path.exists()
    assert path.exists()


def test_tool_name_cannot_shape_the_spill_path(tmp_path: Path) -> None:
    store = SpillStore(tmp_path / "s")
    path = store.spill("../mcp/server:tool", "data").path
    assert path.parent == store.session_dir
    assert re.fullmatch(r"_mcp_server_tool_[0-9a-f]{12}\.output", path.name)


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
def test_spill_files_stay_private_under_a_permissive_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        store = SpillStore(tmp_path / "s")
        assert mode(store.spill("t", "data").path) == 0o600
        assert mode(store.session_dir) == 0o700
    finally:
        os.umask(old)


# -- images ----------------------------------------------------------------------------------


def test_images_over_the_per_result_budget_are_dropped_with_a_note(tmp_path: Path) -> None:
    b = make(tmp_path, max_images_per_result=4, max_image_bytes_per_result=1_000)
    images = [ImagePart(bytes(100)) for _ in range(6)]
    out = b.apply(ToolResult([TextPart("six plots"), *images]), tool_name="t")
    assert isinstance(out.llm_content, list)
    assert [p for p in out.llm_content if isinstance(p, ImagePart)] == images[:4]
    note = out.llm_content[-1]
    assert isinstance(note, TextPart)
    assert "left out 2 of 6 images" in note.text
    assert "image 5 (image/png, 100 B), image 6 (image/png, 100 B)" in note.text
    assert "one at a time" in note.text
    assert not out.truncated


def test_image_bytes_per_result(tmp_path: Path) -> None:
    b = make(tmp_path, max_image_bytes_per_result=100)
    images = [ImagePart(bytes(60)), ImagePart(bytes(60)), ImagePart(bytes(30))]
    out = b.apply(ToolResult(images), tool_name="t")
    assert isinstance(out.llm_content, list)
    kept = [p for p in out.llm_content if isinstance(p, ImagePart)]
    assert kept == [images[0], images[2]]
    assert "image 2 (image/png, 60 B)" in out.text


def test_images_do_not_count_toward_the_char_budget(tmp_path: Path) -> None:
    b = make(tmp_path, batch_chars=100)
    results = [ToolResult([TextPart("plot"), ImagePart(bytes(10_000))]) for _ in range(3)]
    out = b.apply_batch([(f"c{i}", "t", r) for i, r in enumerate(results)])
    assert all(o is r for o, r in zip(out, results, strict=True))


def test_images_over_the_batch_budget_are_dropped_in_later_results(tmp_path: Path) -> None:
    b = make(tmp_path, max_images_per_batch=8, max_image_bytes_per_batch=10_000)
    results = [ToolResult([ImagePart(bytes(10)) for _ in range(4)]) for _ in range(3)]
    out = b.apply_batch([(f"c{i}", "t", r) for i, r in enumerate(results)])
    assert out[0] is results[0]
    assert out[1] is results[1]
    assert "left out 4 of 4 images" in out[2].text
    assert "this turn's image budget" in out[2].text

    big = [ToolResult([ImagePart(bytes(6_000))]) for _ in range(2)]
    out = b.apply_batch([(f"d{i}", "t", r) for i, r in enumerate(big)])
    assert out[0] is big[0]
    assert "left out 1 of 1 images" in out[1].text


# -- batch budget ----------------------------------------------------------------------------


def batch(sizes: list[int]) -> list[tuple[str, str, ToolResult]]:
    return [(f"call{i}", "t", ToolResult(chr(ord("a") + i) * n)) for i, n in enumerate(sizes)]


def test_batch_within_budget_is_untouched(budget: OutputBudget) -> None:
    items = batch([3_000, 3_000, 3_000])
    out = budget.apply_batch(items)
    assert all(o is r for o, (_, _, r) in zip(out, items, strict=True))


def test_batch_budget_can_be_disabled(tmp_path: Path) -> None:
    b = make(tmp_path, batch_chars=0)
    items = batch([300_000, 300_000])
    assert all(o is r for o, (_, _, r) in zip(b.apply_batch(items), items, strict=True))


def test_batch_water_fill(budget: OutputBudget) -> None:
    items = batch([100, 200, 30_000, 20_000, 5_000])
    out = budget.apply_batch(items)
    shares = [100, 200, 3_234, 3_233, 3_233]

    assert out[0] is items[0][2]
    assert out[1] is items[1][2]
    assert sum(len(r.text) for r in out) <= 10_000
    for i in (2, 3, 4):
        text = out[i].text
        assert out[i].truncated
        assert text.startswith(BATCH_CUT_PREFIX)
        assert len(text) == shares[i]
        letter = chr(ord("a") + i)
        assert text.rstrip(letter).endswith("\n...\n")  # order preserved: its own tail
        path = saved_path(text)
        assert path == budget.store.session_dir / "tool-results" / f"call{i}.txt"
        assert path.read_text() == items[i][2].text


def test_batch_offloads_largest_first(tmp_path: Path) -> None:
    b = make(tmp_path, batch_chars=10_000, session_spill_bytes=30_000)
    out = b.apply_batch(batch([5_000, 30_000, 20_000]))
    assert saved_path(out[1].text).name == "call1.txt"
    assert "could not save" in out[0].text
    assert "could not save" in out[2].text
    assert sum(len(r.text) for r in out) <= 10_000


def test_batch_reuses_an_existing_spill_file(budget: OutputBudget) -> None:
    spilled = budget.apply(ToolResult("s" * 2_000), tool_name="shell")
    path = saved_path(spilled.text)
    out = budget.apply_batch([("c0", "shell", spilled), ("c1", "t", ToolResult("b" * 20_000))])
    assert saved_path(out[0].text) == path
    assert not (budget.store.session_dir / "tool-results" / "c0.txt").exists()


def test_batch_duplicate_call_ids_do_not_overwrite(budget: OutputBudget) -> None:
    items = [("dup", "t", ToolResult("a" * 8_000)), ("dup", "t", ToolResult("b" * 8_000))]
    out = budget.apply_batch(items)
    paths = [saved_path(r.text) for r in out]
    assert paths[0] != paths[1]
    assert [p.read_text() for p in paths] == ["a" * 8_000, "b" * 8_000]


def test_batch_cuts_errors_too(budget: OutputBudget) -> None:
    error = ToolResult.fail(ErrorCode.EXECUTION_FAILED, "e" * 20_000)
    out = budget.apply_batch([("c0", "t", error)])
    assert out[0].is_error
    assert out[0].error is not None
    assert len(out[0].text) == 10_000
    assert out[0].error.message == out[0].text

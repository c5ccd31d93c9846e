"""The read-before-write gate: each decision kind, its code, and what the message says to do."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_ext.core import ErrorCode
from agent_ext.fs import ReadCache, atomic_write, check_prior_read


@pytest.fixture
def cache() -> ReadCache:
    return ReadCache()


@pytest.fixture
def path(tmp_path: Path) -> Path:
    p = tmp_path / "a.py"
    p.write_text("x = 1\n")
    return p


def test_missing_file_is_a_creation(cache: ReadCache, tmp_path: Path) -> None:
    result = check_prior_read(cache, tmp_path / "new.py", "overwriting")
    assert result.ok and not result.exists and result.code is None


def test_missing_file_that_was_expected_changed_since_read(cache: ReadCache, path: Path) -> None:
    cache.record_read(path, full=True, cacheable=True)
    path.unlink()
    result = check_prior_read(cache, path, "editing", expect_existing=True)
    assert not result.ok
    assert result.code == ErrorCode.FILE_CHANGED_SINCE_READ
    assert "deleted or moved" in result.message


def test_other_stat_errors_fail_closed_naming_the_errno(cache: ReadCache, path: Path) -> None:
    result = check_prior_read(cache, path / "child.py", "editing")
    assert not result.ok
    assert result.code == ErrorCode.PRIOR_READ_VERIFICATION_FAILED
    assert "ENOTDIR" in result.message


def test_directory(cache: ReadCache, tmp_path: Path) -> None:
    result = check_prior_read(cache, tmp_path, "editing")
    assert result.code == ErrorCode.TARGET_IS_DIRECTORY
    assert "directory" in result.message


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_points_to_the_shell(cache: ReadCache, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result = check_prior_read(cache, fifo, "editing")
    assert result.code == ErrorCode.EDIT_REQUIRES_PRIOR_READ
    assert "shell" in result.message


def test_never_read_editing_says_a_partial_read_suffices(cache: ReadCache, path: Path) -> None:
    result = check_prior_read(cache, path, "editing")
    assert result.code == ErrorCode.EDIT_REQUIRES_PRIOR_READ
    assert "read_file" in result.message
    assert "partial read" in result.message


def test_never_read_overwriting_says_read_it_all(cache: ReadCache, path: Path) -> None:
    result = check_prior_read(cache, path, "overwriting")
    assert result.code == ErrorCode.EDIT_REQUIRES_PRIOR_READ
    assert "Read all of it" in result.message


def test_fresh_text_read_is_ok_even_when_partial(cache: ReadCache, path: Path) -> None:
    cache.record_read(path, full=False, cacheable=True)
    assert check_prior_read(cache, path, "editing").ok
    assert check_prior_read(cache, path, "overwriting").ok


def test_stale_says_read_again(cache: ReadCache, path: Path) -> None:
    cache.record_read(path, full=True, cacheable=True)
    path.write_text("x = 2  # changed by the user\n")
    result = check_prior_read(cache, path, "editing")
    assert result.code == ErrorCode.FILE_CHANGED_SINCE_READ
    assert "Read it again" in result.message


def test_non_text_read_says_rereading_will_not_help(cache: ReadCache, path: Path) -> None:
    cache.record_read(path, full=True, cacheable=False)
    result = check_prior_read(cache, path, "editing")
    assert result.code == ErrorCode.EDIT_REQUIRES_PRIOR_READ
    assert "re-reading won't help" in result.message


def test_require_full_refuses_a_partial_read_with_the_reason(cache: ReadCache, path: Path) -> None:
    cache.record_read(path, full=False, cacheable=True)
    result = check_prior_read(cache, path, "overwriting", require_full=True)
    assert result.code == ErrorCode.EDIT_REQUIRES_PRIOR_READ
    assert "only part" in result.message and "replaces every line" in result.message
    notebook = check_prior_read(cache, path, "editing", require_full=True)
    assert "needs the whole file" in notebook.message
    cache.record_read(path, full=True, cacheable=True)
    assert check_prior_read(cache, path, "overwriting", require_full=True).ok


def test_own_write_counts_as_a_full_read(cache: ReadCache, tmp_path: Path) -> None:
    path = tmp_path / "made.py"
    st = atomic_write(path, b"print(1)\n")
    cache.record_write(path, st)
    assert check_prior_read(cache, path, "overwriting", require_full=True).ok


def test_replaced_file_is_changed_since_read(cache: ReadCache, path: Path) -> None:
    cache.record_read(path, full=True, cacheable=True)
    atomic_write(path, b"x = 3\n")  # not recorded: someone else's atomic save
    assert check_prior_read(cache, path, "editing").code == ErrorCode.FILE_CHANGED_SINCE_READ

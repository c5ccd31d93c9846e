"""ScratchFolder: made on first use (0700), made again after a deletion, removed with its owner
only when it was made here."""

from __future__ import annotations

import gc
import stat
from pathlib import Path

from agent_ext.core.scratch import ScratchFolder


def test_a_temporary_folder_is_private_remade_and_removed() -> None:
    folder = ScratchFolder("agent_ext_test_")
    first = folder.path()
    assert first.name.startswith("agent_ext_test_") and folder.path() == first
    assert stat.S_IMODE(first.stat().st_mode) == 0o700
    first.rmdir()  # deleted behind its back: made again
    again = folder.path()
    assert again.is_dir()
    folder.remove()
    assert not again.exists()
    kept = folder.path()
    del folder
    gc.collect()
    assert not kept.exists()  # gone with its owner


def test_a_root_that_existed_is_never_removed(tmp_path: Path) -> None:
    existing = tmp_path / "mine"
    existing.mkdir()
    (existing / "keep.txt").write_text("x")
    folder = ScratchFolder("unused_", existing)
    assert folder.path() == existing
    folder.remove()
    assert (existing / "keep.txt").exists()
    made = ScratchFolder("unused_", tmp_path / "new")
    assert made.path().is_dir() and stat.S_IMODE(made.path().stat().st_mode) == 0o700
    made.remove()
    assert not (tmp_path / "new").exists()

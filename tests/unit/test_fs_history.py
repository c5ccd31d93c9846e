"""Edit history: undo restores only what the agent wrote, and memory stays bounded."""

from __future__ import annotations

import hashlib
import stat
from pathlib import Path

from agent_ext.fs import EditHistory, atomic_write


def _agent_write(history: EditHistory, path: Path, data: bytes, call_id: str,
                 tool: str = "edit") -> None:
    before = path.read_bytes() if path.exists() else None
    atomic_write(path, data)
    history.record(path, before, data, tool=tool, call_id=call_id)


def test_entries_record_what_was_written(tmp_path: Path) -> None:
    history = EditHistory()
    path = tmp_path / "a.py"
    _agent_write(history, path, b"v1\n", "c1", tool="write_file")
    _agent_write(history, path, b"v2\n", "c2")
    first, second = history.entries()
    assert (first.seq, first.tool, first.call_id, first.created) == (1, "write_file", "c1", True)
    assert first.before_sha256 is None
    assert second.before_sha256 == hashlib.sha256(b"v1\n").hexdigest()
    assert second.after_sha256 == hashlib.sha256(b"v2\n").hexdigest()
    assert second.path == path and not second.created and second.undoable
    assert second.time >= first.time


def test_undo_restores_the_previous_content_keeping_the_mode(tmp_path: Path) -> None:
    history = EditHistory()
    path = tmp_path / "run.sh"
    path.write_bytes(b"original\n")
    path.chmod(0o755)
    _agent_write(history, path, b"edited\n", "c1")
    result = history.undo()
    assert result.ok and [e.call_id for e in result.undone] == ["c1"]
    assert "Reverted 1 write" in result.message
    assert path.read_bytes() == b"original\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o755
    assert history.entries() == []


def test_undo_of_a_creation_deletes_the_file(tmp_path: Path) -> None:
    history = EditHistory()
    path = tmp_path / "new.py"
    _agent_write(history, path, b"x\n", "c1", tool="write_file")
    assert history.undo().ok
    assert not path.exists()


def test_undo_several_in_order(tmp_path: Path) -> None:
    history = EditHistory()
    path = tmp_path / "a.py"
    path.write_bytes(b"v0")
    for i in range(1, 4):
        _agent_write(history, path, f"v{i}".encode(), f"c{i}")
    result = history.undo(2)
    assert [e.call_id for e in result.undone] == ["c3", "c2"]
    assert path.read_bytes() == b"v1"
    assert history.undo(5).ok
    assert path.read_bytes() == b"v0"
    assert history.undo().message.startswith("Nothing to undo")


def test_undo_refuses_when_the_file_changed_since(tmp_path: Path) -> None:
    history = EditHistory()
    path = tmp_path / "a.py"
    path.write_bytes(b"original")
    _agent_write(history, path, b"agent", "c1")
    path.write_bytes(b"agent + user's own work")
    result = history.undo()
    assert not result.ok and result.refused is not None and result.refused.call_id == "c1"
    assert "changed since" in result.message and "lose" in result.message
    assert path.read_bytes() == b"agent + user's own work"
    assert len(history.entries()) == 1, "a refused entry stays for later"


def test_undo_stops_at_the_first_refusal(tmp_path: Path) -> None:
    history = EditHistory()
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"a0")
    b.write_bytes(b"b0")
    _agent_write(history, a, b"a1", "c1")
    _agent_write(history, b, b"b1", "c2")
    a.write_bytes(b"user edit")
    result = history.undo(2)
    assert [e.call_id for e in result.undone] == ["c2"]
    assert result.refused is not None and result.refused.call_id == "c1"
    assert b.read_bytes() == b"b0" and a.read_bytes() == b"user edit"


def test_undo_refuses_when_a_created_file_was_deleted(tmp_path: Path) -> None:
    history = EditHistory()
    path = tmp_path / "new"
    _agent_write(history, path, b"x", "c1")
    path.unlink()
    assert not history.undo().ok


def test_over_budget_without_a_folder_drops_the_oldest_with_a_note(tmp_path: Path) -> None:
    history = EditHistory(memory_budget=100)
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"A" * 80)
    b.write_bytes(b"B" * 80)
    _agent_write(history, a, b"a", "c1")
    _agent_write(history, b, b"b", "c2")
    old, new = history.entries()
    assert not old.undoable and "dropped to bound memory" in old.note
    assert new.undoable
    assert history.bytes_in_memory == 80
    assert history.undo().ok and b.read_bytes() == b"B" * 80
    refused = history.undo()
    assert not refused.ok and "dropped to bound memory" in refused.message
    assert a.read_bytes() == b"a"


def test_over_budget_spills_to_the_session_folder(tmp_path: Path) -> None:
    spill = tmp_path / "session"
    history = EditHistory(spill, memory_budget=100)
    work = tmp_path / "work"
    work.mkdir()
    paths = [work / f"f{i}" for i in range(3)]
    for i, p in enumerate(paths):
        p.write_bytes(bytes([65 + i]) * 60)
        _agent_write(history, p, b"new", f"c{i}")
    assert history.bytes_in_memory <= 100
    spilled = sorted(spill.rglob("*.before"))
    assert len(spilled) == 2
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in spilled)
    assert all(e.undoable for e in history.entries())
    assert history.undo(3).ok
    assert [p.read_bytes() for p in paths] == [b"A" * 60, b"B" * 60, b"C" * 60]
    assert list(spill.rglob("*.before")) == []


def test_a_folder_given_as_a_function_is_asked_for_only_when_spilling(tmp_path: Path) -> None:
    asked: list[Path] = []

    def folder() -> Path:
        asked.append(tmp_path / "session")
        return asked[-1]

    history = EditHistory(folder, memory_budget=100)
    path = tmp_path / "a"
    path.write_bytes(b"small")
    _agent_write(history, path, b"new", "c1")
    assert asked == []
    path.write_bytes(b"x" * 200)
    _agent_write(history, path, b"newer", "c2")
    assert asked == [tmp_path / "session"]
    assert len(list((tmp_path / "session").rglob("*.before"))) == 2


def test_damaged_spill_copy_is_refused(tmp_path: Path) -> None:
    history = EditHistory(tmp_path / "session", memory_budget=10)
    path = tmp_path / "a"
    path.write_bytes(b"original content")
    _agent_write(history, path, b"new", "c1")
    (spilled,) = (tmp_path / "session").rglob("*.before")
    spilled.write_bytes(b"tampered")
    result = history.undo()
    assert not result.ok and "damaged" in result.message
    assert path.read_bytes() == b"new"


def test_clear_removes_spill_files(tmp_path: Path) -> None:
    session = tmp_path / "session"
    history = EditHistory(session, memory_budget=0)
    path = tmp_path / "a"
    path.write_bytes(b"before")
    _agent_write(history, path, b"after", "c1")
    assert list(session.rglob("*.before"))
    history.clear()
    assert history.entries() == []
    assert list(session.iterdir()) == []


def test_max_entries_keeps_the_newest(tmp_path: Path) -> None:
    history = EditHistory(max_entries=3)
    path = tmp_path / "a"
    path.write_bytes(b"0")
    for i in range(1, 6):
        _agent_write(history, path, str(i).encode(), f"c{i}")
    assert [e.call_id for e in history.entries()] == ["c3", "c4", "c5"]
    assert history.bytes_in_memory == 3

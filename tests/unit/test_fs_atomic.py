"""Atomic writes: permissions kept, symlinks written through, failures leave the original."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_ext.fs import AtomicWriteError, atomic, atomic_write, remove_stale_temps
from agent_ext.fs.atomic import journal_dir, sweep_interrupted, temp_name


def _listing(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))


def test_creates_a_new_file_with_0644_masked_by_umask(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        assert atomic.current_umask() == 0o027
        target = tmp_path / "new.txt"
        st = atomic_write(target, b"hello")
    finally:
        os.umask(old)
    assert target.read_bytes() == b"hello"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert (st.st_ino, st.st_size, st.st_mtime_ns) == (
        target.stat().st_ino, 5, target.stat().st_mtime_ns)
    assert _listing(tmp_path) == ["new.txt"]


def test_keeps_the_permission_bits(tmp_path: Path) -> None:
    target = tmp_path / "run.sh"
    target.write_text("echo old\n")
    target.chmod(0o750)
    atomic_write(target, b"echo new\n")
    assert stat.S_IMODE(target.stat().st_mode) == 0o750
    assert target.read_bytes() == b"echo new\n"


def test_explicit_mode(tmp_path: Path) -> None:
    target = tmp_path / "secret"
    atomic_write(target, b"x", mode=0o600)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_symlink_is_written_through(tmp_path: Path) -> None:
    real_dir = tmp_path / "real"
    real_dir.mkdir()
    target = real_dir / "config.toml"
    target.write_text("old\n")
    link = tmp_path / "config.toml"
    link.symlink_to(Path("real") / "config.toml")
    chain = tmp_path / "chain"
    chain.symlink_to(link)
    atomic_write(chain, b"new\n")
    assert link.is_symlink() and chain.is_symlink()
    assert os.readlink(link) == os.path.join("real", "config.toml")
    assert target.read_bytes() == b"new\n"
    assert _listing(real_dir) == ["config.toml"]


def test_symlink_loop_is_refused(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.symlink_to(b)
    b.symlink_to(a)
    with pytest.raises(AtomicWriteError) as info:
        atomic_write(a, b"x")
    assert info.value.errno == errno.ELOOP
    assert a.is_symlink() and b.is_symlink()


def test_fsync_failure_leaves_the_original_and_no_temp(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "data.txt"
    target.write_bytes(b"original")

    def failing_fsync(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(AtomicWriteError) as info:
        atomic_write(target, b"replacement")
    err = info.value
    assert isinstance(err, OSError) and err.errno == errno.EIO
    assert "original file is unchanged" in str(err)
    assert err.filename == str(target)
    assert target.read_bytes() == b"original"
    assert _listing(tmp_path) == ["data.txt"]


def test_rename_failure_cleans_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "data.txt"
    target.write_bytes(b"original")

    def failing_replace(self: Path, other: Path) -> Path:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "replace", failing_replace)
    with pytest.raises(AtomicWriteError, match="the disk is full"):
        atomic_write(target, b"replacement")
    assert target.read_bytes() == b"original"
    assert _listing(tmp_path) == ["data.txt"]


def test_interrupt_mid_write_cleans_up_and_propagates(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "data.txt"
    target.write_bytes(b"original")

    def interrupted_write(fd: int, data: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "write", interrupted_write)
    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, b"replacement")
    assert target.read_bytes() == b"original"
    assert _listing(tmp_path) == ["data.txt"]


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="needs POSIX permissions that apply (not root)")
def test_read_only_folder(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    target = folder / "data.txt"
    target.write_bytes(b"original")
    target.chmod(0o666)
    folder.chmod(0o555)
    try:
        with pytest.raises(AtomicWriteError, match="must be writable") as info:
            atomic_write(target, b"replacement")
        assert info.value.errno == errno.EACCES
        assert target.read_bytes() == b"original"
        assert _listing(folder) == ["data.txt"]
    finally:
        folder.chmod(0o755)


def test_temp_file_creation_failure_is_explained(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "data.txt"
    target.write_bytes(b"original")
    real_open = os.open

    def refusing_open(path: str | os.PathLike[str], flags: int, mode: int = 0o777) -> int:
        if os.path.basename(path).endswith(".tmp"):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_open(path, flags, mode)

    monkeypatch.setattr(os, "open", refusing_open)
    with pytest.raises(AtomicWriteError, match="must be writable"):
        atomic_write(target, b"replacement")
    assert target.read_bytes() == b"original"


def test_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(AtomicWriteError, match=r"No file was created; create .* first") as info:
        atomic_write(tmp_path / "nope" / "a.txt", b"x")
    assert info.value.errno == errno.ENOENT


def test_directory_target_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AtomicWriteError, match="not a regular file") as info:
        atomic_write(tmp_path, b"x")
    assert info.value.errno == errno.EISDIR


def test_large_and_empty_payloads(tmp_path: Path) -> None:
    target = tmp_path / "big.bin"
    payload = os.urandom(3 * 1024 * 1024 + 7)
    atomic_write(target, payload)
    assert target.read_bytes() == payload
    atomic_write(target, b"")
    assert target.read_bytes() == b""


def test_temp_names_stay_under_name_max() -> None:
    name = "é" * 200
    temp = atomic.temp_name(name)
    assert len(os.fsencode(temp)) <= 255
    assert atomic.is_temp_name(temp)
    assert atomic.is_temp_name(atomic.temp_name("a.py"))
    assert not atomic.is_temp_name(".a.py.swp")


def test_remove_stale_temps(tmp_path: Path) -> None:
    old = tmp_path / atomic.temp_name("a.txt")
    fresh = tmp_path / atomic.temp_name("b.txt")
    keep = tmp_path / ".hidden.tmp"
    for p in (old, fresh, keep):
        p.write_bytes(b"partial")
    an_hour_ago = time.time() - 3600
    os.utime(old, (an_hour_ago, an_hour_ago))
    lookalike_link = tmp_path / atomic.temp_name("c.txt")
    lookalike_link.symlink_to(keep)
    assert remove_stale_temps(tmp_path) == [old]
    assert sorted(remove_stale_temps(tmp_path, older_than=0)) == [fresh]
    assert keep.exists() and lookalike_link.is_symlink()


def test_a_read_only_file_is_refused_not_replaced(tmp_path: Path) -> None:
    target = tmp_path / "locked.txt"
    target.write_text("keep")
    target.chmod(0o444)
    with pytest.raises(AtomicWriteError, match=r"read-only \(mode 0444\).*chmod u\+w"):
        atomic_write(target, b"new")
    assert target.read_text() == "keep"
    assert stat.S_IMODE(target.stat().st_mode) == 0o444
    assert os.listdir(tmp_path) == ["locked.txt"]


def test_a_hard_link_keeps_its_identity(tmp_path: Path) -> None:
    first = tmp_path / "a.txt"
    first.write_text("old content\n")
    second = tmp_path / "b.txt"
    os.link(first, second)
    inode = first.stat().st_ino
    atomic_write(first, b"new\n")
    assert second.read_bytes() == b"new\n" and first.read_bytes() == b"new\n"
    assert first.stat().st_ino == second.stat().st_ino == inode
    assert first.stat().st_nlink == 2
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "b.txt"]  # the backup is gone


def test_the_journal_of_a_killed_writer_is_swept(tmp_path: Path) -> None:
    stray = tmp_path / temp_name("x.txt")
    stray.write_bytes(b"half")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True, timeout=30)
    journal_dir().mkdir(mode=0o700, exist_ok=True)
    note = journal_dir() / f"{dead.stdout.strip()}.abcdef012345"
    note.write_text(str(stray))
    mine = journal_dir() / f"{os.getpid()}.abcdef012345"
    live = tmp_path / temp_name("y.txt")
    live.write_bytes(b"in progress")
    mine.write_text(str(live))
    try:
        assert stray in sweep_interrupted()
        assert not stray.exists() and not note.exists()
        assert live.exists() and mine.exists()  # a write of a live process is left alone
    finally:
        mine.unlink(missing_ok=True)

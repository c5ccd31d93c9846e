"""The session read cache: identity, fingerprints, sticky flags and the read fast path."""

from __future__ import annotations

import dataclasses
import os
import threading
from pathlib import Path

from agent_ext import Agent
from agent_ext.core import TextPart
from agent_ext.fs import ReadCache, atomic_write
from agent_ext.models import Message, ScriptedModel


def _file(tmp_path: Path, text: str = "one\ntwo\n", name: str = "a.txt") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _bump_mtime(path: Path, delta_ns: int = 5_000_000_000) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + delta_ns))


def test_unknown_then_fresh_then_stale_on_size(tmp_path: Path) -> None:
    cache = ReadCache()
    path = _file(tmp_path)
    assert cache.check(path) == "unknown"
    cache.record_read(path, full=True, cacheable=True)
    assert cache.check(path) == "fresh"
    path.write_text("one\ntwo\nthree\n")
    assert cache.check(path) == "stale"


def test_same_size_but_new_mtime_is_stale(tmp_path: Path) -> None:
    cache = ReadCache()
    path = _file(tmp_path)
    cache.record_read(path, full=True, cacheable=True)
    _bump_mtime(path)
    assert cache.check(path) == "stale"


def test_symlink_and_hardlink_share_the_entry(tmp_path: Path) -> None:
    cache = ReadCache()
    path = _file(tmp_path)
    link = tmp_path / "link.txt"
    link.symlink_to(path)
    hard = tmp_path / "hard.txt"
    os.link(path, hard)
    cache.record_read(link, full=False, cacheable=True)
    assert cache.check(path) == "fresh"
    assert cache.check(hard) == "fresh"
    assert len(cache) == 1


def test_flags_are_sticky_on_the_same_fingerprint(tmp_path: Path) -> None:
    cache = ReadCache()
    path = _file(tmp_path)
    cache.record_read(path, full=True, cacheable=True)
    entry = cache.record_read(path, full=False, cacheable=False)
    assert entry.last_read_was_full and entry.last_read_cacheable


def test_flags_reset_when_the_fingerprint_drifts(tmp_path: Path) -> None:
    cache = ReadCache()
    path = _file(tmp_path)
    cache.record_read(path, full=True, cacheable=True)
    path.write_text("changed outside\n")
    entry = cache.record_read(path, full=False, cacheable=True)
    assert not entry.last_read_was_full
    assert entry.last_read_cacheable


def test_record_write_marks_everything_read(tmp_path: Path) -> None:
    cache = ReadCache()
    path = _file(tmp_path)
    cache.record_read(path, full=False, cacheable=False)
    st = atomic_write(path, b"new content\n")
    entry = cache.record_write(path, st)
    assert entry.last_write_at == entry.last_read_at
    assert entry.last_read_was_full and entry.last_read_cacheable
    assert entry.read_resident_in_history
    assert cache.check(path) == "fresh"


def test_fast_path_needs_full_cacheable_resident_and_fresh(tmp_path: Path) -> None:
    cache = ReadCache()
    path = _file(tmp_path)
    assert not cache.unchanged_since_read(path)
    cache.record_read(path, full=True, cacheable=True)
    assert cache.unchanged_since_read(path)
    assert not cache.unchanged_since_read(path, full_request=False)
    cache.disarm_history()
    assert not cache.unchanged_since_read(path)
    assert cache.check(path) == "fresh", "compaction keeps read rights"
    cache.record_read(path, full=False, cacheable=True)
    assert not cache.unchanged_since_read(path), "a partial read does not re-arm"
    cache.record_read(path, full=True, cacheable=True)
    assert cache.unchanged_since_read(path)
    path.write_text("other\n")
    assert not cache.unchanged_since_read(path)


def test_fast_path_refuses_non_text_reads(tmp_path: Path) -> None:
    cache = ReadCache()
    path = _file(tmp_path)
    cache.record_read(path, full=True, cacheable=False)
    assert not cache.unchanged_since_read(path)


def test_disarm_one_path(tmp_path: Path) -> None:
    cache = ReadCache()
    a, b = _file(tmp_path, name="a"), _file(tmp_path, name="b")
    cache.record_read(a, full=True, cacheable=True)
    cache.record_read(b, full=True, cacheable=True)
    cache.disarm_history(a)
    assert not cache.unchanged_since_read(a)
    assert cache.unchanged_since_read(b)


def test_replaced_or_deleted_file_is_stale_not_unknown(tmp_path: Path) -> None:
    cache = ReadCache()
    path = _file(tmp_path)
    cache.record_read(path, full=True, cacheable=True)
    other = _file(tmp_path, "same size\n", name="other.txt")
    other.replace(path)  # an editor's atomic save: a new inode at the same path
    assert cache.check(path) == "stale"
    assert cache.entry(path) is None
    path.unlink()
    assert cache.check(path) == "stale"
    assert cache.check(tmp_path / "never.txt") == "unknown"


def test_stat_taken_before_reading_catches_a_change_during_the_read(tmp_path: Path) -> None:
    cache = ReadCache()
    path = _file(tmp_path)
    with path.open("rb") as f:
        st = os.fstat(f.fileno())
        f.read()
    path.write_text("written while we read\n")
    cache.record_read(path, full=True, cacheable=True, st=st)
    assert cache.check(path) == "stale"


def test_entry_fields_and_copy(tmp_path: Path) -> None:
    cache = ReadCache()
    path = _file(tmp_path)
    cache.record_read(path, full=True, cacheable=True)
    entry = cache.entry(path)
    assert entry is not None
    assert entry.path == path
    assert entry.size == path.stat().st_size
    assert entry.mtime_ns == path.stat().st_mtime_ns
    assert entry.verifiable
    entry.last_read_was_full = False
    again = cache.entry(path)
    assert again is not None and again.last_read_was_full, "entry() hands out copies"


def test_forget_and_clear(tmp_path: Path) -> None:
    cache = ReadCache()
    path = _file(tmp_path)
    cache.record_read(path, full=True, cacheable=True)
    assert cache.forget(path)
    assert cache.check(path) == "unknown"
    assert not cache.forget(path)
    cache.record_read(path, full=True, cacheable=True)
    path.unlink()
    assert cache.forget(path), "a deleted file is forgotten by its path"
    cache.record_read(_file(tmp_path), full=True, cacheable=True)
    cache.clear()
    assert len(cache) == 0


def test_inode_zero_is_unverifiable_and_keyed_by_path(tmp_path: Path) -> None:
    cache = ReadCache()
    a, b = _file(tmp_path, name="a"), _file(tmp_path, name="b")
    st_a, st_b = a.stat(), b.stat()
    fake_a = os.stat_result((st_a.st_mode, 0, st_a.st_dev, 1, 0, 0, st_a.st_size, 0,
                             st_a.st_mtime, st_a.st_ctime, 0, st_a.st_mtime_ns, 0))
    fake_b = os.stat_result((st_b.st_mode, 0, st_b.st_dev, 1, 0, 0, st_b.st_size, 0,
                             st_b.st_mtime, st_b.st_ctime, 0, st_b.st_mtime_ns, 0))
    entry = cache.record_read(a, full=True, cacheable=True, st=fake_a)
    assert not entry.verifiable
    assert cache.check(a, fake_a) == "fresh"
    assert cache.check(b, fake_b) == "unknown", "inode 0 must not make every file look read"


def test_concurrent_reads_and_writes(tmp_path: Path) -> None:
    cache = ReadCache()
    paths = [_file(tmp_path, name=f"f{i}") for i in range(8)]
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for n in range(200):
                path = paths[(i + n) % len(paths)]
                cache.record_read(path, full=n % 2 == 0, cacheable=True)
                cache.check(path)
                cache.unchanged_since_read(path)
                if n % 50 == 0:
                    cache.disarm_history()
        except BaseException as err:  # collected and reported by the main thread
            errors.append(err)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(cache) == len(paths)
    assert all(cache.check(p) == "fresh" for p in paths)


async def test_a_reset_a_load_or_a_compaction_disarms_the_unchanged_answer(
        tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    agent = Agent(ScriptedModel(["summary"] * 3), cwd=tmp_path, plugins=False, mcp=False)
    try:
        for forget in ("reset", "load", "compact"):
            await agent.call_tool("read_file", {"file_path": "a.txt"})
            again = await agent.call_tool("read_file", {"file_path": "a.txt"})
            assert "has not changed" in again.text and "hello" not in again.text
            if forget == "reset":
                agent.reset()
            elif forget == "load":
                agent.load(agent.save(tmp_path / "t.json"))
            else:
                agent.messages = [Message(role="user", parts=(TextPart(f"q{i}"),))
                                  for i in range(8)]
                agent.limits = dataclasses.replace(agent.limits, keep_recent_prompts=1)
                await agent.compact()
            after = await agent.call_tool("read_file", {"file_path": "a.txt"})
            assert "hello" in after.text, forget
    finally:
        await agent.aclose()

"""The strict read rule: full reads, pages that add up, changes in between, the agent's own edits,
and refusals that say what changed."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from agent_ext.core import ErrorCode, ToolContext
from agent_ext.fs import ReadCache
from agent_ext.notebook import NotebookReads, NotebookSnapshot, NotebookView, read_notebook
from agent_ext.notebook.document import CellData
from agent_ext.notebook.render import RenderLimits

from .test_notebook_file import sample

EDIT_REQUIRES_PRIOR_READ = ErrorCode.EDIT_REQUIRES_PRIOR_READ
CHANGED = ErrorCode.FILE_CHANGED_SINCE_READ


def snap(ids: list[str], sources: dict[str, str] | None = None, *, path: str = "/nb/a.ipynb",
         has_ids: bool = True) -> NotebookSnapshot:
    sources = sources or {}
    cells = tuple(CellData(i if has_ids else None, "code", sources.get(i, f"src {i}"))
                  for i in ids)
    return NotebookSnapshot(cells, {}, 4, 5 if has_ids else 4, path)


def test_never_read() -> None:
    problem = NotebookReads().check_edit(snap(["a"]), "a", address="nb://")
    assert problem is not None
    assert problem[0] == EDIT_REQUIRES_PRIOR_READ
    assert 'call the read_file tool with {"file_path": "nb://"}' in problem[1]


def test_full_read_licenses_edits() -> None:
    reads = NotebookReads()
    s = snap(["a", "b", "c"])
    state = reads.record_read(s, s.display_ids())
    assert state.full
    assert reads.check_edit(s, "b") is None
    assert reads.check_edit(s, None) is None


def test_a_capped_read_is_not_full() -> None:
    reads = NotebookReads()
    s = snap(["a", "b", "c", "d"])
    reads.record_read(s, ["a", "b"], capped=True)
    problem = reads.check_edit(s, "a", address="nb://")
    assert problem is not None and problem[0] == EDIT_REQUIRES_PRIOR_READ
    assert "seen 2 of 4 cells" in problem[1] and "size cap" in problem[1]
    assert "nb://:cells=2-3" in problem[1]


def test_pages_that_cover_every_cell_make_a_full_read() -> None:
    reads = NotebookReads()
    s = snap([f"c{i}" for i in range(6)])
    assert not reads.record_read(s, ["c0", "c1", "c2"]).full
    assert reads.check_edit(s, "c0") is not None
    assert reads.record_read(s, ["c3", "c4", "c5"]).full
    assert reads.check_edit(s, "c4") is None


def test_a_change_between_pages_starts_over() -> None:
    reads = NotebookReads()
    s = snap(["a", "b", "c", "d"])
    reads.record_read(s, ["a", "b"])
    changed = snap(["a", "b", "c", "d"], {"a": "edited by the user"})
    state = reads.record_read(changed, ["c", "d"])
    assert not state.full and state.covered == frozenset({"c", "d"})
    problem = reads.check_edit(changed, "c")
    assert problem is not None and "seen 2 of 4" in problem[1]
    assert "cells=0-1" in problem[1]


def test_changed_ids_are_named() -> None:
    reads = NotebookReads()
    s = snap(["a", "b", "c", "d"])
    reads.record_read(s, s.display_ids())
    now = snap(["d", "a", "x", "c", "y"])
    problem = reads.check_edit(now, "a", address="nb://")
    assert problem is not None and problem[0] == CHANGED
    text = problem[1]
    assert "cell(s) added: x, y" in text and "cell(s) removed: b" in text
    assert "cell(s) moved: d" in text
    assert "read_file nb://" in text


def test_changed_target_source_is_refused_other_cells_are_not() -> None:
    reads = NotebookReads()
    s = snap(["a", "b"])
    reads.record_read(s, ["a", "b"])
    now = snap(["a", "b"], {"b": "the user's new code"})
    problem = reads.check_edit(now, "b", address="nb://")
    assert problem is not None and problem[0] == CHANGED
    assert "Cell b" in problem[1] and "nb://:cells=b" in problem[1]
    assert reads.check_edit(now, "a") is None


def test_positional_ids_report_the_count() -> None:
    reads = NotebookReads()
    s = snap(["cell-0", "cell-1"], has_ids=False)
    reads.record_read(s, s.display_ids())
    now = NotebookSnapshot((*s.cells, CellData(None, "code", "x")), {}, 4, 4, s.path)
    problem = reads.check_edit(now, "cell-0")
    assert problem is not None and "now has 3 cells where you saw 2" in problem[1]


def test_own_edits_count_as_read() -> None:
    reads = NotebookReads()
    s = snap(["a", "b"])
    reads.record_read(s, ["a", "b"])
    reads.record_edit(s.path, ["a", "new", "b"], {"new": "inserted", "a": "rewritten"})
    after = snap(["a", "new", "b"], {"a": "rewritten", "new": "inserted"})
    assert reads.check_edit(after, "a") is None
    assert reads.check_edit(after, "new") is None
    reads.record_edit(s.path, ["new", "b"], {})
    gone = snap(["new", "b"], {"new": "inserted"})
    assert reads.check_edit(gone, "b") is None
    state = reads.state(s.path)
    assert state is not None and state.full and state.ids == ("new", "b")


def test_rekey_after_ids_are_made_persistent() -> None:
    reads = NotebookReads()
    s = snap(["cell-0", "cell-1"], has_ids=False)
    reads.record_read(s, s.display_ids())
    reads.rekey(s.path, {"cell-0": "aaaa1111", "cell-1": "bbbb2222"})
    now = NotebookSnapshot(tuple(replace(c, id=i) for c, i in zip(s.cells, ["aaaa1111", "bbbb2222"],
                                                                strict=True)),
                           {}, 4, 5, s.path)
    assert reads.check_edit(now, "bbbb2222") is None


def test_notebooks_are_kept_apart_and_forgotten() -> None:
    reads = NotebookReads()
    a, b = snap(["x"], path="/a.ipynb"), snap(["x"], path="/b.ipynb")
    reads.record_read(a, ["x"])
    assert reads.check_edit(b, "x") is not None
    reads.forget("/a.ipynb")
    assert reads.check_edit(a, "x") is not None
    reads.record_read(a, ["x"])
    reads.clear()
    assert reads.state("/a.ipynb") is None


async def test_read_notebook_records_reads_and_the_file_in_the_read_cache(tmp_path: Path) -> None:
    path = sample(tmp_path)
    ctx = ToolContext(cwd=tmp_path)
    ctx.services[ReadCache] = cache = ReadCache()
    first = await read_notebook(ctx, "nb.ipynb", NotebookView(("0-2",)))
    assert not first.full and not first.state.full
    entry = cache.entry(path)
    assert entry is not None and not entry.last_read_cacheable
    second = await read_notebook(ctx, "nb.ipynb", NotebookView(("3-",), sources_only=True))
    assert second.state.full
    capped = await read_notebook(ctx, "nb.ipynb", limits=RenderLimits(max_chars=200))
    assert capped.rendered.capped and not capped.full


def test_changes_since_the_last_read_leave_the_agents_own_edits_out() -> None:
    reads = NotebookReads()
    s = snap(["a", "b", "c", "d"])
    assert reads.changes(s) is None  # never read: nothing to compare with
    reads.record_read(s, s.display_ids())
    assert not reads.changes(s)
    reads.record_edit(s.path, ["a", "b", "c", "d"], {"b": "the agent's"})
    user = snap(["a", "b", "new", "d"], {"a": "the user's", "b": "the agent's"})
    found = reads.changes(user)
    assert found is not None
    assert found.changed == ((0, "a"),)
    assert found.added == ((2, "new"),)
    assert found.deleted == ((2, "c"),)

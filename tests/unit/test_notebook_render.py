"""The notebook render the model reads: pinned text, views, caps and the image budget.

Set AGENT_EXT_UPDATE_SNAPSHOTS=1 to rewrite the pinned render after an intended change.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_ext.core import ImagePart, TextPart
from agent_ext.notebook import (
    FileNotebook,
    NotebookSnapshot,
    NotebookView,
    RenderLimits,
    ViewError,
    parse_view,
    render_notebook,
    split_view,
    view_from_paging,
)
from agent_ext.notebook.document import CellData
from agent_ext.notebook.outputs import ImageBudget, outputs_text, strip_ansi

from .test_notebook_file import PNG, code, error, image, md, notebook, stream, write_nb

SNAPSHOT = Path(__file__).parent / "snapshots" / "notebook_render.txt"


def fixture(tmp_path: Path) -> Path:
    """Every kind of cell and output the render handles."""
    return write_nb(tmp_path / "analysis.ipynb", notebook([
        md(["# Sales analysis\n", "Load, clean, plot."], cid="title"),
        code(["import pandas as pd\n", "df = pd.read_csv('sales.csv')\n", "df.head()"],
             cid="load", count=12, outputs=[{
                 "output_type": "execute_result", "execution_count": 12, "metadata": {},
                 "data": {"text/plain": ["   a  b\n", "0  1  2"],
                          "text/html": ["<table></table>"]}}]),
        code("print('rows:', len(df))\nimport sys; print('warn', file=sys.stderr)", cid="count",
             count=13, outputs=[stream("rows: 2\n"), stream("warn\n", "stderr")]),
        code("df.plot()", cid="plot", count=14, outputs=[image()]),
        code("1/0", cid="boom", count=15, outputs=[error("ZeroDivisionError", "division by zero")]),
        code('s = """\n```\n"""', cid="fence"),
        {"cell_type": "raw", "id": "rawcell", "metadata": {}, "source": "raw text"},
        code("", cid="empty"),
        code("display(widget)", cid="widget", count=16, outputs=[{
            "output_type": "display_data", "metadata": {},
            "data": {"application/vnd.jupyter.widget-view+json": {"model_id": "x"}}}]),
    ]))


def as_text(parts: tuple[TextPart | ImagePart, ...]) -> str:
    return "".join(p.text if isinstance(p, TextPart)
                   else f"<image {p.mime_type} {len(p.data)} bytes>" for p in parts)


async def test_render_snapshot(tmp_path: Path) -> None:
    snap = await FileNotebook(fixture(tmp_path)).read()
    rendered = render_notebook(snap, address="nb://", current=True)
    text = as_text(rendered.parts).replace(str(tmp_path), "<tmp>")
    if os.environ.get("AGENT_EXT_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(text, encoding="utf-8")
    assert text == SNAPSHOT.read_text(encoding="utf-8")
    assert rendered.shown == tuple(snap.display_ids())
    assert not rendered.capped and rendered.images == 1


async def test_render_shapes(tmp_path: Path) -> None:
    snap = await FileNotebook(fixture(tmp_path)).read()
    text = render_notebook(snap, address="nb://", current=True).text
    assert text.startswith(f"Jupyter Notebook (python, 9 cells) {tmp_path}/analysis.ipynb\n")
    assert "--- Code Cell load [12] ---\n```python\nimport pandas as pd\n" in text
    assert "--- Markdown Cell title ---\n# Sales analysis\nLoad, clean, plot." in text
    assert "--- Raw Cell rawcell ---\nraw text" in text
    assert "\x1b" not in text
    assert "ZeroDivisionError: division by zero" in text
    assert "````python\ns = \"\"\"\n```\n\"\"\"\n````" in text
    assert "[non-text output: application/vnd.jupyter.widget-view+json]" in text
    assert "<table>" not in text


def test_empty_notebook() -> None:
    snap = NotebookSnapshot((), {}, 4, 5, None)
    rendered = render_notebook(snap, address="nb://", current=True)
    assert rendered.text == "Jupyter Notebook (python, 0 cells)\n(empty notebook)"
    assert rendered.shown == ()


def test_language_from_kernelspec_then_default() -> None:
    cells = (CellData("a", "code", "x"),)
    r = NotebookSnapshot(cells, {"kernelspec": {"language": "R"}}, 4, 5, None)
    assert "```R\n" in render_notebook(r, address="nb://", current=True).text
    assert NotebookSnapshot(cells, {}, 4, 5, None).language == "python"


def test_44_cells_render_with_positional_ids() -> None:
    snap = NotebookSnapshot((CellData(None, "code", "a", execution_count=3),
                             CellData(None, "markdown", "b")), {}, 4, 4, "/x.ipynb")
    text = render_notebook(snap, address="/x.ipynb", current=False).text
    assert "--- Code Cell cell-0 [3] ---" in text and "--- Markdown Cell cell-1 ---" in text


def test_cell_output_cap_with_a_note() -> None:
    big = stream("".join(f"line {i}\n" for i in range(5000)))
    snap = NotebookSnapshot((CellData("big", "code", "loop()", {}, [big], 1),), {}, 4, 5, "/n.ipynb")
    text = render_notebook(snap, address="nb://", current=True).text
    out = text.split("Output:\n", 1)[1]
    assert len(out) < 10_200
    assert "[output truncated: 48,889 characters in all. See all of it with read_file out://big]" in out
    other = render_notebook(snap, address="/n.ipynb", current=False).text
    assert "jq '.cells[0].outputs' /n.ipynb" in other


def test_render_cap_stops_at_a_cell_boundary_and_says_how_to_go_on() -> None:
    cells = tuple(CellData(f"c{i:03d}", "code", f"x{i} = {'9' * 900}") for i in range(200))
    snap = NotebookSnapshot(cells, {}, 4, 5, "/n.ipynb")
    rendered = render_notebook(snap, address="nb://", current=True)
    assert rendered.capped
    assert len(rendered.text) <= 100_000 + 400
    n = len(rendered.shown)
    assert 0 < n < 200 and rendered.shown == tuple(f"c{i:03d}" for i in range(n))
    assert f"[{200 - n} more cell(s) not shown" in rendered.text
    assert f"read_file nb://:cells={n}-{2 * n - 1}" in rendered.text
    assert "nb://:source" in rendered.text


def test_one_huge_cell_is_cut_and_not_counted_as_seen() -> None:
    snap = NotebookSnapshot((CellData("huge", "code", "y" * 300_000),), {}, 4, 5, "/n.ipynb")
    rendered = render_notebook(snap, address="nb://", current=True)
    assert rendered.capped and rendered.shown == ()
    assert "read_file cell://huge:1-2000" in rendered.text
    assert len(rendered.text) < 101_000


def test_image_budget_attaches_the_first_images_and_names_the_rest() -> None:
    cells = tuple(CellData(f"p{i}", "code", "plot()", {}, [image(PNG * (i + 1))], i)
                  for i in range(6))
    snap = NotebookSnapshot(cells, {}, 4, 5, "/n.ipynb")
    rendered = render_notebook(snap, address="nb://", current=True)
    assert rendered.images == 4
    assert rendered.text.count("attached]") == 4
    assert ("not attached, this read's image budget (4 images, 4 MB) is used up. See it with "
            "read_file out://p4.") in rendered.text
    small = RenderLimits(budget=ImageBudget(max_images=10, max_bytes=len(PNG) * 3))
    assert render_notebook(snap, address="nb://", current=True, limits=small).images == 2


def test_images_after_the_output_cap_are_dropped_and_refunded() -> None:
    outputs = [stream("z" * 200), image()]
    snap = NotebookSnapshot((CellData("a", "code", "x", {}, outputs, 1),
                             CellData("b", "code", "y", {}, [image()], 2)), {}, 4, 5, None)
    budget = ImageBudget(max_images=1)
    limits = RenderLimits(max_cell_output_chars=100, budget=budget)
    rendered = render_notebook(snap, address="nb://", current=True, limits=limits)
    assert rendered.images == 1
    assert "output truncated" in rendered.text


def test_invalid_base64_is_named_not_fatal() -> None:
    bad = {"output_type": "display_data", "metadata": {}, "data": {"image/png": "%%%"}}
    assert outputs_text([bad]) == "[image/png output that is not valid base64]"


def test_strip_ansi() -> None:
    assert strip_ansi("\x1b[0;31mred\x1b[0m \x1b]8;;http://x\x07link\x1b]8;;\x07") == "red link"


# -- views ------------------------------------------------------------------------------------------

def snap_of(n: int, *, ids: bool = True) -> NotebookSnapshot:
    cells = tuple(CellData(f"id{i}" if ids else None, "code", f"v{i}", {}, [stream(f"o{i}")], i)
                  for i in range(n))
    return NotebookSnapshot(cells, {}, 4, 5 if ids else 4, "/n.ipynb")


def test_parse_view_forms() -> None:
    assert parse_view("source") == NotebookView((), True, "source")
    assert parse_view("cells=0-9,20:source") == NotebookView(("0-9", "20"), True,
                                                             "cells=0-9,20:source")
    assert parse_view("10-20") is None
    assert parse_view("raw") is None
    with pytest.raises(ViewError):
        parse_view("cells=")
    with pytest.raises(ViewError):
        parse_view("cells=1,,2")


def test_split_view() -> None:
    assert split_view("nb://:cells=0-4") == ("nb://", NotebookView(("0-4",), False, "cells=0-4"))
    assert split_view("/a/b.ipynb:source")[0] == "/a/b.ipynb"
    assert split_view("sub/x.ipynb") == ("sub/x.ipynb", None)


def test_view_positions() -> None:
    snap = snap_of(10)
    assert NotebookView(("2-4", "8-")).positions(snap) == [2, 3, 4, 8, 9]
    assert NotebookView(("id3",)).positions(snap) == [3]
    assert NotebookView(("id2..id4", "0")).positions(snap) == [0, 2, 3, 4]
    assert NotebookView(("id7..",)).positions(snap) == [7, 8, 9]
    assert NotebookView(("5-50",)).positions(snap) == [5, 6, 7, 8, 9]
    for bad in ("10", "4-2", "nope", "id4..id2", "x..id2"):
        with pytest.raises(ViewError):
            NotebookView((bad,)).positions(snap)


def test_an_all_digit_id_wins_over_a_position() -> None:
    cells = (CellData("a", "code", "x"), CellData("0", "code", "y"))
    snap = NotebookSnapshot(cells, {}, 4, 5, None)
    assert NotebookView(("0",)).positions(snap) == [1]


def test_paging_view() -> None:
    assert view_from_paging(None, None).whole
    assert view_from_paging(10, 5).items == ("10-14",)
    assert view_from_paging(None, 3).items == ("0-2",)
    assert view_from_paging(7, None, sources_only=True) == NotebookView(("7-",), True,
                                                                        "cells=7-:source")


def test_paged_and_source_only_render() -> None:
    snap = snap_of(10)
    page = render_notebook(snap, NotebookView(("2-4",)), address="nb://", current=True)
    assert "[showing cells 2-4 of 10 (positions from 0)]" in page.text
    assert page.shown == ("id2", "id3", "id4")
    assert page.text.endswith("[Cells 5-9 come after this view. Read on with read_file "
                              "nb://:cells=5-7]")
    src = render_notebook(snap, NotebookView(sources_only=True), address="/n.ipynb",
                          current=False)
    assert "sources only: outputs left out" in src.text
    assert "Output:" not in src.text and len(src.shown) == 10

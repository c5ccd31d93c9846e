"""The kernel-native URL schemes with a fake kernel: nb://, cell:// (read and edit), out://,
var:// (hostile objects included) and history://."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_ext.core import ErrorCode, ExecControl, ImagePart, Tier, ToolContext, ToolResult
from agent_ext.core.kernel import KernelProvider
from agent_ext.fs import parse_selector
from agent_ext.notebook import NotebookProvider, NotebookReads
from agent_ext.notebook.document import CellData
from agent_ext.notebook.schemes import CellScheme, register_notebook_schemes
from agent_ext.tools.edit import EditTool
from agent_ext.tools.read_file import ReadFileTool
from agent_ext.urls import Resolved, URLError, URLRouter, WritableScheme
from agent_ext.urls.schemes import register_kernel_schemes

from .test_notebook_file import (
    FakeKernel,
    MemoryNotebook,
    Provider,
    error,
    image,
    md,
    notebook,
    stream,
    write_nb,
)

release = threading.Event()


@pytest.fixture(autouse=True)
def _release_sleepers() -> Iterator[None]:
    release.clear()
    yield
    release.set()


def sleepy() -> str:
    """User code that takes 10 s unless the test is over."""
    for _ in range(100):
        if release.wait(0.1):
            break
    return "finally"


class Hostile:
    def __repr__(self) -> str:
        return sleepy()

    def __len__(self) -> int:
        raise RuntimeError("no len for you")


class Raising:
    def __repr__(self) -> str:
        raise ValueError("repr exploded")


class FakeFrame:
    """Looks like a pandas DataFrame by type name and module, without pandas."""

    shape = (3, 2)

    class _Dtypes:
        def to_string(self) -> str:
            return "a    int64\nb    object"

    dtypes = _Dtypes()

    def head(self, n: int) -> Any:
        class Head:
            def to_string(self, max_cols: int = 0) -> str:
                return "   a  b\n0  1  x"
        return Head()


FakeFrame.__module__ = "pandas.core.frame"
FakeFrame.__name__ = FakeFrame.__qualname__ = "DataFrame"


class SlowFrame(FakeFrame):
    @property
    def shape(self) -> tuple[int, int]:  # type: ignore[override]
        sleepy()
        return (1, 1)


SlowFrame.__module__ = "pandas.core.frame"
SlowFrame.__name__ = SlowFrame.__qualname__ = "DataFrame"


def live_doc() -> MemoryNotebook:
    return MemoryNotebook([
        CellData("intro", "markdown", "# Title"),
        CellData("load", "code", "import math\nx = math.pi\ny = 2\nz = 3", {},
                 [stream("loaded\n")], 12),
        CellData("plot", "code", "plot()", {}, [stream("".join(f"l{i}\n" for i in range(20))),
                                                image(), error()], 13),
        CellData("quiet", "code", "pass", {}, [], None),
    ])


@pytest.fixture
def doc() -> MemoryNotebook:
    return live_doc()


@pytest.fixture
def kernel() -> FakeKernel:
    import json as json_module

    ns: dict[str, object] = {
        "x": 42, "name": "Ada Lovelace", "items": [1, 2, 3], "table": {"a": 1},
        "df": FakeFrame(), "hostile": Hostile(), "raising": Raising(),
        "_private": 1, "In": [], "Out": {}, "exit": object(), "quit": object(),
        "get_ipython": object(), "json": json_module, "Hostile": Hostile,
    }

    def double(v: int, *, times: int = 2) -> int:
        """Multiply v."""
        return v * times

    ns["double"] = double
    history = [(1, "import math"), (2, "x = 42"), (3, "print(x)"), (4, "%%agent\nfix it")]
    return FakeKernel(ns, history)


@pytest.fixture
def ctx(tmp_path: Path, doc: MemoryNotebook, kernel: FakeKernel) -> ToolContext:
    ctx = ToolContext(cwd=tmp_path)
    ctx.services[NotebookProvider] = Provider(doc, tmp_path)
    ctx.services[KernelProvider] = kernel
    router = URLRouter()
    register_notebook_schemes(router, ctx)
    register_kernel_schemes(router, ctx)
    ctx.services[URLRouter] = router
    return ctx


def router(ctx: ToolContext) -> URLRouter:
    found = ctx.services[URLRouter]
    assert isinstance(found, URLRouter)
    return found


async def resolve(ctx: ToolContext, url: str, selector: str | None = None) -> Resolved:
    return await router(ctx).resolve(url, parse_selector(selector) if selector else None)


async def read_file(ctx: ToolContext, path: str) -> ToolResult:
    built = ReadFileTool().build({"file_path": path}, ctx)
    assert not isinstance(built, ToolResult), built.text
    return await built.execute(ExecControl())


def test_registration_and_tiers(ctx: ToolContext) -> None:
    r = router(ctx)
    assert {"nb", "cell", "out", "var", "history"} <= set(r.names())
    for url in ("nb://", "cell://a", "out://a", "var://", "history://"):
        assert r.tier_for(url) == Tier.READ
    assert isinstance(r.get("cell"), WritableScheme)
    assert r.get("nb") is not None and r.get("nb").read_only  # type: ignore[union-attr]


# -- nb:// ------------------------------------------------------------------------------------------

async def test_nb_reads_the_current_notebook_and_licenses_edits(ctx: ToolContext) -> None:
    found = await resolve(ctx, "nb://")
    assert found.parts and not found.cacheable and found.full
    text = "".join(p.text for p in found.parts if not isinstance(p, ImagePart))
    assert text.startswith("Jupyter Notebook (python, 4 cells) /nb/live.ipynb")
    assert "--- Code Cell load [12] ---" in text
    assert sum(isinstance(p, ImagePart) for p in found.parts) == 1
    reads = ctx.services[NotebookReads]
    assert isinstance(reads, NotebookReads)
    state = reads.state("/nb/live.ipynb")
    assert state is not None and state.full


async def test_nb_views(ctx: ToolContext) -> None:
    page = await resolve(ctx, "nb://:cells=1-2:source")
    assert page.text is not None and not page.full
    assert "--- Code Cell load [12] ---" in page.text and "--- Markdown Cell intro" not in page.text
    assert "Output:" not in page.text
    assert "read_file nb://:cells=3-3" in page.text
    rest = await resolve(ctx, "nb://:cells=0,3")
    assert rest.text is not None and "You have now seen every cell" in rest.text
    with pytest.raises(URLError) as caught:
        await resolve(ctx, "nb://:cells=9")
    assert caught.value.code == ErrorCode.INVALID_TOOL_PARAMS
    with pytest.raises(URLError) as lines:
        await resolve(ctx, "nb://", "10-20")
    assert ":cells=" in str(lines.value)


async def test_nb_other_notebook_by_path(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    write_nb(tmp_path / "sub" / "other.ipynb", notebook([md("# Other", cid="o1")]))
    found = await resolve(ctx, "nb://sub/other.ipynb")
    assert found.text is not None and "--- Markdown Cell o1 ---" in found.text
    absolute = await resolve(ctx, f"nb://{tmp_path}/sub/other.ipynb:source")
    assert absolute.text is not None and "sources only" in absolute.text
    with pytest.raises(URLError) as caught:
        await resolve(ctx, "nb://missing.ipynb")
    assert caught.value.code == ErrorCode.FILE_NOT_FOUND


async def test_nb_without_a_notebook(ctx: ToolContext) -> None:
    ctx.services[NotebookProvider] = Provider(None, ctx.cwd)
    with pytest.raises(URLError) as caught:
        await resolve(ctx, "nb://")
    assert "notebook_path" in str(caught.value)


async def test_nb_through_read_file(ctx: ToolContext) -> None:
    result = await read_file(ctx, "nb://:source")
    assert not result.is_error, result.text
    assert "--- Code Cell plot [13] ---" in result.text


# -- cell:// ----------------------------------------------------------------------------------------

async def test_cell_source_and_line_selectors(ctx: ToolContext) -> None:
    whole = await resolve(ctx, "cell://load")
    assert whole.text == "import math\nx = math.pi\ny = 2\nz = 3"
    assert whole.full and whole.cacheable
    by_count = await resolve(ctx, "cell://[12]")
    assert by_count.text == whole.text
    part = await resolve(ctx, "cell://load", "2-3")
    assert part.text == "x = math.pi\ny = 2" and not part.full
    tail = await resolve(ctx, "cell://load", "-1")
    assert tail.text == "z = 3"
    with pytest.raises(URLError) as past:
        await resolve(ctx, "cell://load", "9-10")
    assert past.value.code == ErrorCode.INVALID_TOOL_PARAMS
    with pytest.raises(URLError) as unknown:
        await resolve(ctx, "cell://nope")
    assert unknown.value.code == ErrorCode.NOTEBOOK_CELL_NOT_FOUND
    with pytest.raises(URLError):
        await resolve(ctx, "cell://")


async def test_cell_write_follows_the_strict_rule(ctx: ToolContext, doc: MemoryNotebook) -> None:
    r = router(ctx)
    scheme = r.get("cell")
    assert isinstance(scheme, CellScheme)
    url, _ = r.lookup("cell://load")
    with pytest.raises(URLError) as unread:
        await scheme.check_write(url)
    assert unread.value.code == ErrorCode.EDIT_REQUIRES_PRIOR_READ
    with pytest.raises(URLError):
        await r.write("cell://load", "x = 1")
    assert doc.cells[1].source.startswith("import math")
    await resolve(ctx, "nb://")
    await scheme.check_write(url)
    await r.write("cell://load", "import math\nx = math.e\ny = 2\nz = 3")
    assert doc.cells[1].source == "import math\nx = math.e\ny = 2\nz = 3"
    assert doc.cells[1].outputs == [] and doc.cells[1].execution_count is None
    await r.write("cell://load", "x = 0")  # its own edit counts as read
    doc.cells[1] = CellData("load", "code", "user typed this")
    with pytest.raises(URLError) as changed:
        await r.write("cell://load", "x = 1")
    assert changed.value.code == ErrorCode.FILE_CHANGED_SINCE_READ


async def test_edit_tool_on_a_cell(ctx: ToolContext, doc: MemoryNotebook) -> None:
    await read_file(ctx, "nb://")
    built = EditTool().build({"file_path": "cell://load", "old_string": "x = math.pi",
                              "new_string": "x = math.tau"}, ctx)
    assert not isinstance(built, ToolResult), built.text
    details = await built.confirmation_details()
    assert details.kind == "edit" and details.diff is not None and "+x = math.tau" in details.diff
    result = await built.execute(ExecControl())
    assert not result.is_error, result.text
    assert doc.cells[1].source == "import math\nx = math.tau\ny = 2\nz = 3"


async def test_edit_tool_on_a_cell_needs_the_notebook_read(ctx: ToolContext,
                                                           doc: MemoryNotebook) -> None:
    built = EditTool().build({"file_path": "cell://load", "old_string": "y = 2",
                              "new_string": "y = 3"}, ctx)
    assert not isinstance(built, ToolResult)
    result = await built.execute(ExecControl())
    assert result.error is not None
    assert result.error.code == ErrorCode.EDIT_REQUIRES_PRIOR_READ
    assert "y = 2" in doc.cells[1].source


# -- out:// -----------------------------------------------------------------------------------------

async def test_out_text_images_and_lines(ctx: ToolContext) -> None:
    found = await resolve(ctx, "out://plot")
    assert found.parts and isinstance(found.parts[-1], ImagePart)
    text = found.parts[0].text  # type: ignore[union-attr]
    assert text.startswith("Outputs of cell plot [13]:\nl0\n")
    assert "ValueError: bad" in text and "\x1b" not in text
    lines = await resolve(ctx, "out://[13]", "2-3")
    assert lines.text == "Outputs of cell plot [13]:\nl1\nl2" and not lines.full
    none = await resolve(ctx, "out://quiet")
    assert none.text == "Outputs of cell quiet: none (the cell has no outputs)."
    md_cell = await resolve(ctx, "out://intro")
    assert md_cell.text is not None and "none" in md_cell.text


async def test_out_long_text_is_capped(ctx: ToolContext, doc: MemoryNotebook) -> None:
    doc.cells[3] = CellData("quiet", "code", "loop()", {},
                            [stream("".join(f"row {i}\n" for i in range(20_000)))], 5)
    found = await resolve(ctx, "out://quiet")
    assert found.text is not None and len(found.text) < 41_000 and not found.full
    assert "Read on with out://quiet:" in found.text


# -- var:// -----------------------------------------------------------------------------------------

async def test_var_listing_hides_internals(ctx: ToolContext) -> None:
    started = time.monotonic()
    found = await resolve(ctx, "var://")
    assert time.monotonic() - started < 3
    text = found.text
    assert text is not None
    names = [line.split()[0] for line in text.splitlines()[2:]]
    assert names == sorted(["x", "name", "items", "table", "df", "hostile", "raising", "double",
                            "Hostile"], key=str.lower)
    for hidden in ("_private", "In", "Out", "exit", "quit", "get_ipython", "json"):
        assert hidden not in names
    assert "\nx        int        42" in text
    assert "3 rows x 2 columns" in text
    assert "len 3" in text and "len 12: 'Ada Lovelace'" in text
    assert "def double(v: 'int', *, times: 'int' = 2) -> 'int'" in text


async def test_var_details(ctx: ToolContext) -> None:
    df = await resolve(ctx, "var://df")
    assert df.text is not None
    assert "type: pandas.core.frame.DataFrame" in df.text
    assert "shape: (3, 2)" in df.text and "a    int64" in df.text and "0  1  x" in df.text
    items = await resolve(ctx, "var://items")
    assert items.text == "items\ntype: list\nlen: 3\nrepr:\n[1, 2, 3]"
    fn = await resolve(ctx, "var://double")
    assert fn.text is not None and "doc: Multiply v." in fn.text
    attr = await resolve(ctx, "var://df.shape")
    assert attr.text is not None and attr.text.startswith("df.shape\ntype: tuple")
    lines = await resolve(ctx, "var://df", "1-2")
    assert lines.text == "df\ntype: pandas.core.frame.DataFrame"


async def test_var_hostile_repr_is_bounded(ctx: ToolContext) -> None:
    started = time.monotonic()
    found = await resolve(ctx, "var://hostile")
    assert time.monotonic() - started < 2.5
    assert found.text is not None
    assert "repr:\n<timed out after 0.5 s>" in found.text
    assert "len: <raised RuntimeError: no len for you>" in found.text
    raising = await resolve(ctx, "var://raising")
    assert raising.text is not None
    assert "repr:\n<raised ValueError: repr exploded>" in raising.text


async def test_var_listing_survives_a_hanging_summary(ctx: ToolContext,
                                                      kernel: FakeKernel) -> None:
    kernel.ns["slow"] = SlowFrame()
    started = time.monotonic()
    found = await resolve(ctx, "var://")
    assert time.monotonic() - started < 3
    assert found.text is not None
    slow = next(line for line in found.text.splitlines() if line.startswith("slow"))
    assert "timed out" in slow
    assert "len 3" in found.text  # rows after the hanging one are still there


async def test_var_unknown_name_suggests(ctx: ToolContext) -> None:
    with pytest.raises(URLError) as caught:
        await resolve(ctx, "var://dff")
    assert "Did you mean df" in str(caught.value)
    assert caught.value.code == ErrorCode.FILE_NOT_FOUND


async def test_var_long_repr_is_cut(ctx: ToolContext, kernel: FakeKernel) -> None:
    kernel.ns["big"] = list(range(100_000))
    found = await resolve(ctx, "var://big")
    assert found.text is not None and len(found.text) < 4_000
    assert "more characters]" in found.text


def test_var_completion(ctx: ToolContext) -> None:
    assert router(ctx).complete("var://it") == ["var://items"]


async def test_without_a_kernel(ctx: ToolContext) -> None:
    del ctx.services[KernelProvider]
    for url in ("var://", "history://"):
        with pytest.raises(URLError) as caught:
            await resolve(ctx, url)
        assert "needs a running kernel" in str(caught.value)


# -- history:// -------------------------------------------------------------------------------------

async def test_history(ctx: ToolContext) -> None:
    everything = await resolve(ctx, "history://")
    assert everything.text is not None
    assert everything.text.startswith("In [1]:\nimport math\n\nIn [2]:\nx = 42")
    assert "The last 4 inputs" in everything.text
    one = await resolve(ctx, "history://3")
    assert one.text == "In [3]:\nprint(x)"
    span = await resolve(ctx, "history://", "2-3")
    assert span.text == "In [2]:\nx = 42\n\nIn [3]:\nprint(x)"
    last = await resolve(ctx, "history://", "-1")
    assert last.text == "In [4]:\n%%agent\nfix it"
    none = await resolve(ctx, "history://", "40-50")
    assert none.text == "No inputs match."
    with pytest.raises(URLError):
        await resolve(ctx, "history://abc")


async def test_history_is_capped(ctx: ToolContext, kernel: FakeKernel) -> None:
    kernel.history = [(i, "x" * 1000) for i in range(1, 100)]
    found = await resolve(ctx, "history://", "1-99")
    assert found.text is not None and len(found.text) < 31_000 and not found.full
    assert "older input(s) left out" in found.text
    assert found.text.rstrip("]").endswith("-99")


def test_nb_paged_url_for_read_file_offset_and_limit(ctx: ToolContext) -> None:
    scheme = router(ctx).get("nb")
    pager = getattr(scheme, "paged_url", None)
    assert pager is not None
    assert pager("nb://", 50, 50) == "nb://:cells=50-99"
    assert pager("nb://x.ipynb:source", 0, 10) == "nb://x.ipynb:cells=0-9:source"
    assert pager("nb://", None, None) == "nb://"

"""run_cell with a fake kernel: a cell's outputs written back and returned, snippets, images,
long output, errors, and every refusal."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_ext.core import (
    ErrorCode,
    ExecControl,
    ImagePart,
    Kind,
    Permission,
    Tier,
    ToolContext,
    ToolResult,
)
from agent_ext.core.kernel import KernelProvider, RunOutput
from agent_ext.notebook import NotebookProvider
from agent_ext.notebook.document import CellData
from agent_ext.tools.run_cell import RunCellInvocation, RunCellTool

from .test_notebook_file import (
    PNG,
    FakeKernel,
    MemoryNotebook,
    Provider,
    error,
    image,
    sample,
    stream,
)


def setup(tmp_path: Path, doc: Any, kernel: FakeKernel | None) -> ToolContext:
    ctx = ToolContext(cwd=tmp_path)
    ctx.services[NotebookProvider] = Provider(doc, tmp_path)
    if kernel is not None:
        ctx.services[KernelProvider] = kernel
    return ctx


def live() -> MemoryNotebook:
    return MemoryNotebook([CellData("md", "markdown", "# Hi"),
                           CellData("calc", "code", "print(6 * 7)", {}, [stream("old\n")], 3)])


async def run(ctx: ToolContext, args: dict[str, Any], *,
              during: Callable[[], object] | None = None) -> ToolResult:
    built = RunCellTool().build(args, ctx)
    if isinstance(built, ToolResult):
        return built
    assert isinstance(built, RunCellInvocation)
    early = await built.preflight()
    if early is not None:
        return early
    await built.confirmation_details()
    if during is not None:
        during()
    return await built.execute(ExecControl())


def code_of(result: ToolResult) -> str | None:
    return result.error.code if result.error else None


def test_tool_shape(tmp_path: Path) -> None:
    tool = RunCellTool()
    assert tool.problems() == [] and tool.kind == Kind.EXECUTE
    built = tool.build({"code": "1+1"}, ToolContext(cwd=tmp_path))
    assert isinstance(built, RunCellInvocation)
    assert built.tier() == Tier.EXEC and built.default_permission() == Permission.ASK
    assert built.command() is None and built.classifier_input() == "1+1"
    for bad in ({}, {"code": "x", "cell_id": "a"}, {"code": "  "}):
        assert isinstance(tool.build(bad, ToolContext(cwd=tmp_path)), ToolResult)


async def test_run_a_live_cell(tmp_path: Path) -> None:
    doc = live()
    kernel = FakeKernel(results=[RunOutput([stream("42\n")], 7, None)])
    ctx = setup(tmp_path, doc, kernel)
    built = RunCellTool().build({"cell_id": "calc"}, ctx)
    assert isinstance(built, RunCellInvocation)
    assert built.locations() == [Path("/nb/live.ipynb")]
    details = await built.confirmation_details()
    assert details.kind == "exec" and details.command == "print(6 * 7)"
    assert details.title == "Run cell calc in /nb/live.ipynb"
    assert details.extra["cell_id"] == "calc"
    result = await built.execute(ExecControl())
    assert result.text == "Ran cell calc [7].\nOutput:\n42"
    assert kernel.ran == ["print(6 * 7)"]
    assert doc.cells[1].outputs == [stream("42\n")] and doc.cells[1].execution_count == 7
    assert doc.saves == 0


async def test_run_by_execution_count_into_a_file(tmp_path: Path) -> None:
    path = sample(tmp_path)
    from agent_ext.notebook.provider import FileNotebookProvider

    ctx = ToolContext(cwd=tmp_path)
    ctx.services[NotebookProvider] = FileNotebookProvider(tmp_path, environ={},
                                                          current_path=path)
    ctx.services[KernelProvider] = FakeKernel(results=[RunOutput([stream("3.14\n")], 9, None)])
    result = await run(ctx, {"cell_id": "[2]"})
    assert result.text == "Ran cell show [9].\nOutput:\n3.14"
    cell = json.loads(path.read_text())["cells"][2]
    assert cell["execution_count"] == 9 and cell["outputs"][0]["text"] == ["3.14\n"]
    assert result.file_paths == [str(path)]


async def test_snippets_go_into_no_cell(tmp_path: Path) -> None:
    doc = live()
    kernel = FakeKernel(results=[RunOutput([], 8, None)])
    ctx = setup(tmp_path, doc, kernel)
    result = await run(ctx, {"code": "y = 1"})
    assert result.text == "Ran the code [8]. It printed nothing."
    assert doc.cells[1].outputs == [stream("old\n")]


async def test_images_and_errors_come_back(tmp_path: Path) -> None:
    outputs = [stream("a\n"), image(), error("KeyError", "'k'")]
    kernel = FakeKernel(results=[RunOutput(outputs, 4, outputs[-1])])
    ctx = setup(tmp_path, live(), kernel)
    result = await run(ctx, {"cell_id": "calc"})
    parts = result.parts
    assert isinstance(parts[-1], ImagePart) and parts[-1].data == PNG
    assert result.text.startswith("Ran cell calc [4]; it raised KeyError: 'k'\nOutput:\na\n")
    assert "KeyError: 'k'" in result.text and not result.is_error


async def test_long_output_keeps_head_and_tail(tmp_path: Path) -> None:
    text = "".join(f"line {i}\n" for i in range(10_000))
    kernel = FakeKernel(results=[RunOutput([stream(text)], 1, None)])
    ctx = setup(tmp_path, live(), kernel)
    result = await run(ctx, {"cell_id": "calc"})
    assert len(result.text) < 21_000
    assert "line 0\n" in result.text and "line 9999" in result.text
    assert "characters of output left out. Read all of it with read_file out://calc." in \
        result.text


@pytest.mark.parametrize(("args", "code", "needle"), [
    ({"cell_id": "nope"}, ErrorCode.NOTEBOOK_CELL_NOT_FOUND, "No cell"),
    ({"cell_id": "md"}, ErrorCode.INVALID_TOOL_PARAMS, "markdown cell"),
])
async def test_bad_cells(tmp_path: Path, args: dict[str, Any], code: str, needle: str) -> None:
    kernel = FakeKernel()
    result = await run(setup(tmp_path, live(), kernel), args)
    assert code_of(result) == code and needle in result.text
    assert kernel.ran == []


async def test_no_kernel_or_no_notebook(tmp_path: Path) -> None:
    result = await run(setup(tmp_path, live(), None), {"code": "1"})
    assert code_of(result) == ErrorCode.EXECUTION_FAILED and "needs a kernel" in result.text
    nothing = await run(setup(tmp_path, None, FakeKernel()), {"cell_id": "calc"})
    assert code_of(nothing) == "notebook_not_open"


async def test_cell_changed_during_approval_does_not_run(tmp_path: Path) -> None:
    doc = live()
    kernel = FakeKernel()
    ctx = setup(tmp_path, doc, kernel)

    def user_edits() -> None:
        doc.cells[1] = CellData("calc", "code", "import os; os.remove('x')")

    result = await run(ctx, {"cell_id": "calc"}, during=user_edits)
    assert code_of(result) == ErrorCode.FILE_CHANGED_SINCE_READ
    assert kernel.ran == []


async def test_outputs_not_written_when_the_cell_changed_while_running(tmp_path: Path) -> None:
    doc = live()

    class Editing(FakeKernel):
        async def run_code(self, code: str) -> RunOutput:
            doc.cells[1] = CellData("calc", "code", "edited meanwhile")
            return RunOutput([stream("42\n")], 5, None)

    result = await run(setup(tmp_path, doc, Editing()), {"cell_id": "calc"})
    assert "were not written into the notebook" in result.text
    assert doc.cells[1].outputs == []

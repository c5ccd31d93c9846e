"""Benchmark of the notebook layer: a 500-cell notebook read and one cell replaced.

Run as ``python tests/bench/bench_notebook.py``. Prints medians for FileNotebook (cold and warm
reads, the render the model gets, a full read_file-style read with the strict-read record, one
replace_source written atomically) next to plain nbformat doing the same work in the same run.
The live-bridge figures (LiveNotebook over the labextension comm) belong in the same table.
"""

from __future__ import annotations

import asyncio
import base64
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import nbformat  # noqa: E402

from agent_ext.core import ToolContext  # noqa: E402
from agent_ext.notebook import (  # noqa: E402
    FileNotebook,
    FileNotebookProvider,
    NotebookProvider,
    read_notebook,
    render_notebook,
)

CELLS = 500
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8


def build(path: Path) -> int:
    """A 500-cell notebook with text outputs and a few small images; returns its size."""
    cells: list[dict[str, Any]] = []
    for i in range(CELLS):
        if i % 5 == 0:
            cells.append(nbformat.v4.new_markdown_cell(f"## Step {i}\nExplain step {i}."))
            continue
        cell = nbformat.v4.new_code_cell(f"x{i} = compute({i})\nprint(x{i})", execution_count=i)
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"{i * 3.14159}\n")]
        if i % 50 == 1:
            cell.outputs.append(nbformat.v4.new_output(
                "display_data", data={"image/png": base64.b64encode(PNG).decode(),
                                      "text/plain": "<Figure>"}))
        cells.append(cell)
    nb = nbformat.v4.new_notebook(cells=cells, metadata={"language_info": {"name": "python"}})
    nbformat.write(nb, str(path))
    return path.stat().st_size


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = folder / "big.ipynb"
        size = build(path)
        target = json.loads(path.read_text())["cells"][250]["id"]
        warm = FileNotebook(path)
        snapshot = warm.read_sync()
        ctx = ToolContext(cwd=folder)
        ctx.services[NotebookProvider] = FileNotebookProvider(folder, environ={})
        loop = asyncio.new_event_loop()

        def nbformat_replace() -> None:
            nb = nbformat.read(str(path), as_version=4)
            nb.cells[250].source = f"y = {time.perf_counter()}"
            nbformat.write(nb, str(path))

        def file_replace() -> None:
            doc = FileNotebook(path)
            doc.read_sync()
            loop.run_until_complete(doc.replace_source(target, f"y = {time.perf_counter()}",
                                                       clear_outputs=True))

        rows = [
            ("nbformat.read (validates)", median_ms(
                lambda: nbformat.read(str(path), as_version=4), 30)),
            ("FileNotebook read, cold", median_ms(lambda: FileNotebook(path).read_sync(), 30)),
            ("FileNotebook read, unchanged file", median_ms(warm.read_sync, 200)),
            ("render 500 cells for the model", median_ms(
                lambda: render_notebook(snapshot, address="nb://", current=True), 30)),
            ("read_notebook, cached doc (read+render+record)", median_ms(
                lambda: loop.run_until_complete(read_notebook(ctx, "big.ipynb")), 30)),
            ("nbformat read + replace + write", median_ms(nbformat_replace, 20)),
            ("FileNotebook read + replace_source (atomic, fsync)", median_ms(file_replace, 20)),
        ]
        loop.close()
    print(f"Notebook layer, {CELLS} cells, {size / 1024:.0f} KB on disk (medians)")
    width = max(len(name) for name, _ in rows)
    for name, ms in rows:
        print(f"  {name:<{width}}  {ms:9.3f} ms")


if __name__ == "__main__":
    main()

"""Benchmark: the live notebook bridge against nbformat on the .ipynb, in one kernel, one run.

A 500-cell notebook with outputs is open in JupyterLab (real server, Chromium). From an awaiting
cell, the kernel measures the round trip of a full read (cold: every cell serialised; warm:
unchanged cells come from the read cache) and of one cell replace through the bridge, and the
same operations on a copy of the file with nbformat (read; read + change + write). The page is
measured once JupyterLab has finished rendering the notebook (no long task for 3 s): while it
renders 500 cells in the background every message waits for the busy page.

Run: ``python tests/bench/bench_live_notebook.py`` (needs Chromium, Playwright and the built
labextension); the browser tests run it too.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import nbformat  # noqa: E402

from tests.browser.notebook_page import KERNELSPEC, cells, wait_file  # noqa: E402
from tests.browser.server import Server, jupyter_server  # noqa: E402

CELLS = 500
ROUNDS = 20

BENCH = '''\
import json, shutil, statistics, time
import nbformat
from agent_ext.jupyter.bridge import bridge_provider
from agent_ext.notebook.live import LiveNotebook

def _ms(xs):
    return round(statistics.median(xs) * 1000, 2)

async def _timed(op, n):
    out = []
    for i in range(n):
        t0 = time.perf_counter(); await op(i); out.append(time.perf_counter() - t0)
    return out

def _timed_sync(op, n):
    out = []
    for i in range(n):
        t0 = time.perf_counter(); op(i); out.append(time.perf_counter() - t0)
    return out

_doc = bridge_provider(get_ipython()).current()
_snap = await _doc.read()
_target = _snap.cells[7].id

async def _cold(i):
    await LiveNotebook(_doc.channel, _doc.path, _doc.client_id).read()

async def _replace(i):
    await _doc.replace_source(_target, f"y = {i}\\nprint(y)", clear_outputs=False)

_copy = "bench_copy.ipynb"
shutil.copy(_doc.path, _copy)

def _nb_replace(i):
    nb = nbformat.read(_copy, as_version=4)
    nb.cells[7].source = f"y = {i}\\nprint(y)"
    nbformat.write(nb, _copy)

_figures = {
    "cells": len(_snap.cells),
    "ping_ms": _ms(await _timed(lambda i: _doc.selection(), {rounds})),
    "cold_read_ms": _ms(await _timed(_cold, 7)),
    "read_ms": _ms(await _timed(lambda i: _doc.read(), {rounds})),
    "replace_ms": _ms(await _timed(_replace, {rounds})),
    "nbformat_read_ms": _ms(_timed_sync(lambda i: nbformat.read(_copy, as_version=4), 7)),
    "nbformat_replace_ms": _ms(_timed_sync(_nb_replace, 7)),
}
json.dump(_figures, open("bench.json", "w"))
'''

LONG_TASKS = """window.__lt = 0; new PerformanceObserver((l) => { for (const e of l.getEntries())
 window.__lt = Math.max(window.__lt, e.startTime + e.duration); })
 .observe({type: 'longtask', buffered: true});"""


def write_big(path: Path) -> None:
    """The bench cell and 499 code cells, each with a 200-character stream output."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = KERNELSPEC
    nb.cells.append(nbformat.v4.new_code_cell(BENCH.replace("{rounds}", str(ROUNDS))))
    for i in range(CELLS - 1):
        cell = nbformat.v4.new_code_cell(f"y = {i}\nprint(y)")
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="x" * 200 + "\n")]
        cell.execution_count = i + 1
        nb.cells.append(cell)
    nbformat.write(nb, path)


def wait_settled(page: Any, quiet_ms: float = 3000, timeout: float = 90) -> float:
    """Seconds until the page had no long task for ``quiet_ms``."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if page.evaluate("performance.now() - window.__lt") > quiet_ms:
            break
        time.sleep(0.25)
    return time.monotonic() - start


def measure(browser: Any, server: Server) -> dict[str, Any]:
    """Run the bench cell in ``server``'s JupyterLab with ``browser``; its figures."""
    name = "bench_live.ipynb"
    write_big(server.root / name)
    (server.root / "bench.json").unlink(missing_ok=True)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.add_init_script(LONG_TASKS)
        page.goto(server.notebook_url(name))
        page.wait_for_selector('.jp-Notebook-ExecutionIndicator[data-status="idle"]',
                               timeout=60_000)
        settle = wait_settled(page)
        cells(page).first.locator(".cm-content").first.click()
        page.keyboard.press("Control+Enter")
        figures: dict[str, Any] = wait_file(server.root / "bench.json", timeout=120)
    finally:
        page.close()
    figures["settle_s"] = round(settle, 1)
    return figures


def report(figures: dict[str, Any]) -> str:
    f = figures
    return "\n".join([
        (f"live notebook bridge, {f['cells']} cells with outputs, JupyterLab + Chromium, medians "
        f"(page settled after {f['settle_s']} s):"),
        f"  no-op round trip            {f['ping_ms']:8.2f} ms",
        f"  full read, cold             {f['cold_read_ms']:8.2f} ms",
        (f"  full read, warm             {f['read_ms']:8.2f} ms   nbformat.read "
        f"{f['nbformat_read_ms']:8.2f} ms"),
        (f"  one cell replace            {f['replace_ms']:8.2f} ms   nbformat read+write "
        f"{f['nbformat_replace_ms']:8.2f} ms"),
    ])


def main() -> None:
    from playwright.sync_api import sync_playwright

    from tests.browser.conftest import CHROMIUM_ARGS, chromium_path

    with tempfile.TemporaryDirectory() as base, jupyter_server("lab", Path(base)) as server, \
            sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            print(report(measure(browser, server)))
        finally:
            browser.close()


if __name__ == "__main__":
    main()

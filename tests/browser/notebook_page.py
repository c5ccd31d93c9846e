"""Driving a notebook page as a person would: open it, run cells, type, read the cells back.

Cells are found by position in the DOM (the test notebooks are small, so all are rendered);
what the notebook *holds* is checked through the kernel and the saved file, never the DOM alone.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import nbformat

from tests.browser.server import Server

KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
IDLE = '.jp-Notebook-ExecutionIndicator[data-status="idle"]'


def write_notebook(path: Path, cells: list[tuple[str, str, str]], *, minor: int = 5) -> None:
    """Write a notebook of ``(id, cell_type, source)`` cells (ids dropped for nbformat 4.4)."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = KERNELSPEC
    nb.metadata["language_info"] = {"name": "python"}
    make = {"code": nbformat.v4.new_code_cell, "markdown": nbformat.v4.new_markdown_cell,
            "raw": nbformat.v4.new_raw_cell}
    for cell_id, kind, source in cells:
        cell = make[kind](source)
        cell["id"] = cell_id
        nb.cells.append(cell)
    nb.nbformat_minor = minor
    if minor < 5:
        for cell in nb.cells:
            cell.pop("id", None)
    path.write_text(json.dumps(nb, indent=1) + "\n")


def dismiss_toasts(page: Any) -> None:
    """Close any notification toast (the news question) so it covers nothing."""
    for close in page.locator(".jp-Notification-Toast-Close, .Toastify__close-button").all():
        if close.is_visible():
            close.click()


def open_notebook(page: Any, server: Server, name: str, *, timeout: float = 60) -> None:
    """Open ``name`` and wait until its kernel is idle and its cells are rendered."""
    page.goto(server.notebook_url(name))
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=timeout * 1000)
    page.wait_for_selector(IDLE, timeout=timeout * 1000)
    time.sleep(1)
    dismiss_toasts(page)


def wait_kernel(page: Any, timeout: float = 60) -> None:
    """Wait until the kernel is connected and idle for a second (a cell run before that is
    dropped while the page still says it is connecting)."""
    deadline = time.monotonic() + timeout
    calm = 0
    while calm < 4:
        status = page.evaluate("""() => document.body.innerText.split('\\n')
            .filter(l => l.includes('ipykernel') || l.includes('Kernel')).join(' ')""")
        if time.monotonic() > deadline:
            raise TimeoutError(f"the notebook's kernel did not settle: {status!r}")
        busy = any(word in status for word in ("Connecting", "Starting", "Restarting", "Unknown"))
        calm = 0 if busy or not page.locator(IDLE).count() else calm + 1
        time.sleep(0.25)


def cells(page: Any) -> Any:
    return page.locator(".jp-Notebook .jp-Cell")


def run_from(page: Any, index: int, count: int) -> None:
    """Select cell ``index`` and press Shift+Enter ``count`` times (each runs and moves on)."""
    cell = cells(page).nth(index)
    deadline = time.monotonic() + 20
    while "jp-mod-active" not in (cell.get_attribute("class") or ""):
        if time.monotonic() > deadline:
            raise TimeoutError(f"cell {index} could not be selected")
        cell.locator(".jp-InputPrompt").click()
        time.sleep(0.2)
    cell.locator(".cm-content").first.click()
    for _ in range(count):
        page.keyboard.press("Shift+Enter")


def type_into(page: Any, index: int, text: str) -> None:
    """Append ``text`` to the source of cell ``index`` by typing in its editor."""
    editor = cells(page).nth(index).locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+End")
    page.keyboard.type(text)
    page.keyboard.press("Escape")


def dom_cells(page: Any) -> list[tuple[str, str]]:
    """Each rendered cell's type and visible text (editor text, or rendered markdown)."""
    found = []
    for cell in cells(page).all():
        classes = cell.get_attribute("class") or ""
        kind = ("markdown" if "jp-MarkdownCell" in classes
                else "raw" if "jp-RawCell" in classes else "code")
        rendered = cell.locator(".jp-RenderedMarkdown")
        if kind == "markdown" and rendered.count() and rendered.first.is_visible():
            text = rendered.first.inner_text()
        else:
            text = cell.locator(".cm-content").first.inner_text()
        found.append((kind, text.strip()))
    return found


def wait_file(path: Path, timeout: float = 60) -> Any:
    """The JSON a notebook cell wrote to ``path``, once it is there."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.is_file():
            try:
                return json.loads(path.read_text())
            except ValueError:
                pass
        time.sleep(0.2)
    raise TimeoutError(f"{path.name} was not written within {timeout} s")

"""Regenerate the screenshots in docs/images (JupyterLab, light and dark theme).

Run ``python -m tests.browser.screenshots`` from the repository root (needs Chromium,
Playwright and the built labextension, like the browser tests). A scripted agent proposes a
cell edit; the pending approval widget is captured before anyone clicks. The tour shot is the
quickstart notebook itself, run as a new user runs it: its failing cell, and the demo replay's
proposed fix waiting for approval.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.browser.agent_cells import READ, setup
from tests.browser.conftest import CHROMIUM_ARGS, chromium_path
from tests.browser.notebook_page import (
    IDLE,
    dismiss_toasts,
    open_notebook,
    run_from,
    wait_kernel,
    write_notebook,
)
from tests.browser.server import ROOT, Server, jupyter_server

THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}
EDIT = ('    call("notebook_edit", {"cell_id": "clean", "new_source": '
        '"df = df.dropna(subset=[\\"price\\"])\\ndf[\\"price\\"] = df[\\"price\\"].astype(float)\\n'
        'df.describe()"}),')


def capture(page: Any, server: Server, theme: str, out: Path) -> Path:
    """Open a notebook in ``theme``, run the agent up to its approval, save the widget."""
    server.set_theme(THEMES[theme])
    name = f"confirm_{theme}.ipynb"
    write_notebook(server.root / name, [
        ("setup", "code", setup(READ, EDIT)),
        ("clean", "code", "df = df.dropna()\ndf.describe()"),
        ("prompt", "code", "%%agent\nDrop only the rows without a price, and make price a float."),
    ])
    open_notebook(page, server, name)
    run_from(page, 0, 1)
    run_from(page, 2, 1)
    widget = page.locator(".ae-confirm").first
    page.get_by_role("button", name="Approve", exact=True).wait_for(timeout=60_000)
    dismiss_toasts(page)
    page.mouse.move(0, 0)
    target = out / f"confirm-diff-{theme}.png"
    widget.screenshot(path=str(target))
    return target


def capture_tour(page: Any, server: Server, theme: str, out: Path) -> Path:
    """Run the quickstart up to its cell fix's approval; save the failing cell and the card."""
    server.set_theme(THEMES[theme])
    name = f"{theme}/quickstart.ipynb"  # a folder per theme: each run keeps its kernel busy
    (server.root / theme).mkdir(exist_ok=True)
    shutil.copy(ROOT / "notebooks" / "quickstart.ipynb", server.root / name)
    open_notebook(page, server, name)
    wait_kernel(page)
    run_from(page, 1, 9)  # up to the cell that fails on purpose (the tenth)
    buggy = page.locator(".jp-Notebook .jp-Cell").nth(9)
    buggy.locator(".jp-OutputArea-output").first.wait_for(timeout=60_000)
    page.wait_for_selector(IDLE, timeout=60_000)
    run_from(page, 10, 1)
    card = page.locator(".ae-confirm").last
    card.get_by_role("button", name="Approve", exact=True).wait_for(timeout=60_000)
    dismiss_toasts(page)
    page.mouse.move(0, 0)
    buggy.scroll_into_view_if_needed()
    time.sleep(0.5)
    top, bottom = buggy.bounding_box(), card.bounding_box()
    area = page.locator(".jp-Notebook").first.bounding_box()
    assert top is not None and bottom is not None and area is not None
    target = out / f"tour-cell-fix-{theme}.png"
    page.screenshot(path=str(target), clip={
        "x": area["x"], "y": top["y"] - 8, "width": min(area["width"], 900),
        "height": bottom["y"] + bottom["height"] - top["y"] + 16})
    return target


def main(out: Path) -> list[Path]:
    """Every screenshot into ``out``."""
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    executable = chromium_path()
    if executable is None:
        raise SystemExit("Chromium is not installed: apt-get install chromium")
    saved = []
    with tempfile.TemporaryDirectory() as base, jupyter_server("lab", Path(base)) as server, \
            sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            for theme in THEMES:
                page = browser.new_page(viewport={"width": 1100, "height": 1000})
                saved.append(capture(page, server, theme, out))
                page.close()
                page = browser.new_page(viewport={"width": 1100, "height": 1600})
                saved.append(capture_tour(page, server, theme, out))
                page.close()
        finally:
            browser.close()
    return saved


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    for path in main(parser.parse_args().out):
        print(path)

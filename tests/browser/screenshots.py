"""Regenerate the confirm-diff screenshots in docs/images (JupyterLab, light and dark theme).

One card, and the card group of one step's three cell edits with the first card holding the
keyboard focus.

Run ``python -m tests.browser.screenshots`` from the repository root (needs Chromium,
Playwright and the built labextension, like the browser tests). A scripted agent proposes a
cell edit; the pending approval widget is captured before anyone clicks.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from tests.browser.agent_cells import READ, setup
from tests.browser.conftest import CHROMIUM_ARGS, chromium_path
from tests.browser.notebook_page import dismiss_toasts, open_notebook, run_from, write_notebook
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


GROUP = ('    ModelResponse(text="", tool_calls=tuple(ToolCall.of(f"edit_{n}", "notebook_edit", '
         '{"cell_id": n, "new_source": s}) for n, s in (("load", "df = pd.read_csv(\\"sales.csv\\", '
         'parse_dates=[\\"date\\"])"), ("clean", "df = df.dropna(subset=[\\"price\\"])"), '
         '("plot", "df.plot(x=\\"date\\", y=\\"price\\")")))),')


def capture_group(page: Any, server: Server, theme: str, out: Path) -> Path:
    """The card group of one step's three cell edits, the first card holding the keys."""
    server.set_theme(THEMES[theme])
    name = f"group_{theme}.ipynb"
    write_notebook(server.root / name, [
        ("setup", "code", setup(READ, GROUP)),
        ("load", "code", "df = pd.read_csv(\"sales.csv\")"),
        ("clean", "code", "df = df.dropna()"),
        ("plot", "code", "df.plot()"),
        ("prompt", "code", "%%agent\nParse the dates, drop only rows without a price, plot price."),
        ("next", "code", "df.describe()"),
    ])
    open_notebook(page, server, name)
    run_from(page, 0, 1)
    run_from(page, 4, 1)
    widget = page.locator(".ae-confirm").first
    widget.locator(".ae-card").first.wait_for(timeout=60_000)
    page.wait_for_function("document.activeElement && document.activeElement.closest('.ae-confirm')")
    dismiss_toasts(page)
    page.mouse.move(0, 0)
    target = out / f"confirm-group-{theme}.png"
    widget.screenshot(path=str(target))
    return target


def main(out: Path) -> list[Path]:
    """Both screenshots into ``out``."""
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
                page = browser.new_page(viewport={"width": 1100, "height": 1400})
                saved.append(capture_group(page, server, theme, out))
                page.close()
        finally:
            browser.close()
    return saved


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    for path in main(parser.parse_args().out):
        print(path)

"""Regenerates the widget screenshots in docs/images (each state, light and dark), so the
docs show the widgets as they are: run it after changing a widget, and look at the images."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.screenshots import IMAGES, STATES, capture, capture_tour
from tests.browser.server import Server


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_widget_screenshots(lab: Server, page: Any, theme: str) -> None:
    try:
        saved = capture(page, lab, theme, IMAGES)
    finally:
        lab.set_theme("JupyterLab Light")
    assert [p.name for p in saved] == [f"{state}-{theme}.png" for state in STATES]
    for path in saved:
        assert path.stat().st_size > 5_000, path


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_tour_screenshot_is_of_the_real_notebook(lab: Server, page: Any) -> None:
    page.set_viewport_size({"width": 1100, "height": 1600})
    saved = capture_tour(page, lab, "light", IMAGES)
    assert saved.stat().st_size > 20_000
    card = page.locator(".ae-confirm").last
    assert card.locator(".ae-target").inner_text().startswith("cell 10 · [5] · `prices")

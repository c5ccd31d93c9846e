"""Regenerates the widget screenshots in docs/images (each state, light and dark), so the
docs show the widgets as they are: run it after changing a widget, and look at the images."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.screenshots import IMAGES, STATES, capture
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

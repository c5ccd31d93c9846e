"""Where the widgets' JavaScript and CSS live: in the wheel, or in the repository's bundle.

The wheel ships ``widgets/bundle/*`` as ``agent_ext/_widgets/*``; an editable install finds the
same files in the checkout. If neither is there, the widget still renders a message saying what
is missing instead of failing to import.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

_REPO_BUNDLE = Path(__file__).resolve().parents[3] / "widgets" / "bundle"

_MISSING_ESM = """
export default {
  render({ el }) {
    el.textContent = "agent_ext cannot show this widget: its file %s is missing from this "
      + "installation. Reinstall agent_ext (the wheel ships it in agent_ext/_widgets).";
  },
};
"""


def asset(name: str) -> str:
    """The text of a bundled widget file (``confirm_diff.js``, ``transcript.css``...)."""
    shipped = resources.files("agent_ext").joinpath("_widgets").joinpath(name)
    if shipped.is_file():
        return shipped.read_text(encoding="utf-8")
    local = _REPO_BUNDLE / name
    if local.is_file():
        return local.read_text(encoding="utf-8")
    if name.endswith(".js"):
        return _MISSING_ESM % name
    return ""

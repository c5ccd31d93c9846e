"""File path arguments: ``~``, shell escapes, and the ``path:selector`` split.

``agent_ext.urls.paths`` builds the one path parser every tool uses on these, adding internal URLs.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .selectors import Selector, parse_selector

_SHELL_ESCAPE = re.compile(r"\\([ \t()\[\]{};|*?$`'\"#&<>!~])")
_IS_WINDOWS = os.name == "nt"


def unescape_shell(text: str) -> str:
    """``my\\ file`` → ``my file``: models copy paths from shell commands. No-op on Windows."""
    return text if _IS_WINDOWS else _SHELL_ESCAPE.sub(r"\1", text)


def resolve_path(text: str, cwd: Path) -> Path:
    """An absolute path: ``~`` expanded, relative paths taken from ``cwd``, ``..`` folded."""
    p = Path(text).expanduser()
    if not p.is_absolute():
        p = cwd / p
    return Path(os.path.normpath(p))


def split_selector(text: str) -> tuple[str, Selector | None]:
    """Split ``path:selector`` at the first colon whose suffix is a selector.

    A Windows drive colon (``C:\\x``) is never a split point. Raises SelectorError for a
    selector-shaped but malformed suffix (``a.py:0``).
    """
    start = 0
    while (i := text.find(":", start)) != -1:
        start = i + 1
        if i == 1 and text[0].isalpha() and (_IS_WINDOWS or text[2:3] in ("\\", "/")):
            continue
        selector = parse_selector(text[i + 1:])
        if selector is not None:
            return text[:i], selector
    return text, None

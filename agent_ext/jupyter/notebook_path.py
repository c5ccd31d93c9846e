"""Which notebook this kernel runs, when the frontend said so.

jupyter-server sets ``JPY_SESSION_NAME`` (and IPython copies it to ``__session__``): absolute
when JupyterLab created the session, else relative to the server root, while the kernel runs
in the notebook's folder. VS Code sets ``__vsc_ipynb_file__``. nbclient and papermill set
nothing, so the answer is None there.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def notebook_path(user_ns: Mapping[str, Any] | None = None,
                  environ: Mapping[str, str] | None = None,
                  cwd: Path | None = None) -> str | None:
    """The notebook's path, absolute when it can be found on disk; None when unknown."""
    ns = user_ns or {}
    env = os.environ if environ is None else environ
    here = cwd or Path.cwd()
    for value in (ns.get("__vsc_ipynb_file__"), ns.get("__session__"),
                  env.get("JPY_SESSION_NAME")):
        if isinstance(value, str) and value.strip().endswith(".ipynb"):
            return _locate(value.strip(), here)
    return None


def _locate(value: str, cwd: Path) -> str:
    path = Path(value)
    if path.is_absolute():
        return str(path)
    for candidate in (cwd / path, cwd / path.name):
        if candidate.is_file():
            return str(candidate)
    return value

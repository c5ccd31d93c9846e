"""The notebook provider used when the Jupyter host supplies none: files on disk only.

Tools ask a provider for "the notebook I run in" and "the notebook at this path". Without a
browser bridge both are FileNotebooks; the current one is found from what jupyter-server or VS
Code put in the environment and the user namespace. One document per path is kept, so repeated
reads of an unchanged file are not parsed again.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

from .file import FileNotebook, find_notebook_path


class FileNotebookProvider:
    """A NotebookProvider over files: ``current()`` from the session markers, ``open`` by path."""

    def __init__(self, cwd: str | os.PathLike[str] | None = None, *,
                 user_ns: Callable[[], Mapping[str, object]] | None = None,
                 environ: Mapping[str, str] | None = None,
                 current_path: str | os.PathLike[str] | None = None) -> None:
        self._cwd = Path(cwd) if cwd is not None else Path.cwd()
        self._user_ns = user_ns
        self._environ = environ
        self._explicit = current_path
        self._docs: dict[str, FileNotebook] = {}
        self._lock = threading.Lock()

    def current(self) -> FileNotebook | None:
        found = self.current_path()
        return self.open(found) if found is not None else None

    def current_path(self) -> str | None:
        ns = self._user_ns() if self._user_ns is not None else None
        env = os.environ if self._environ is None else self._environ
        return find_notebook_path(env, ns, cwd=self._cwd, explicit=self._explicit)

    def open(self, path: str) -> FileNotebook:
        key = os.path.realpath(self._cwd / path)
        with self._lock:
            doc = self._docs.get(key)
            if doc is None:
                doc = self._docs[key] = FileNotebook(os.path.normpath(self._cwd / path))
            return doc

"""A private folder for a session's files, made on first use and removed with its owner."""

from __future__ import annotations

import shutil
import tempfile
import threading
import weakref
from collections.abc import Callable
from pathlib import Path


class ScratchFolder:
    """A folder made (mode 0700) on first ``path()``, and made again if it was deleted since.

    Without ``root`` it is a fresh temporary folder named ``{prefix}…``; with one, that path
    (created if missing). A folder made here is removed by ``remove()``, or else when this
    object is garbage-collected or the interpreter exits (a kernel shut down without closing
    its session); a ``root`` that already existed is never removed.
    """

    def __init__(self, prefix: str, root: Path | None = None) -> None:
        self._prefix = prefix
        self._root = root
        self._dir: Path | None = None
        self._remover: Callable[[], object] | None = None
        self._lock = threading.Lock()

    def path(self) -> Path:
        """The folder, made now if it does not exist. Raises OSError on failure."""
        with self._lock:
            if self._dir is None or not self._dir.exists():
                self._forget()
                if self._root is None:
                    self._dir, owned = Path(tempfile.mkdtemp(prefix=self._prefix)), True
                else:
                    self._dir, owned = self._root, make_private_dir(self._root)
                if owned:
                    self._remover = weakref.finalize(self, shutil.rmtree, self._dir,
                                                     ignore_errors=True)
            return self._dir

    def remove(self) -> None:
        """Delete the folder if it was made here; the next ``path()`` makes a new one."""
        with self._lock:
            self._forget()

    def _forget(self) -> None:
        if self._remover is not None:
            self._remover()
            self._remover = None
        self._dir = None


def make_private_dir(path: Path) -> bool:
    """Create ``path`` with mode 0700; True if it was created here, False if it already existed."""
    try:
        path.mkdir(mode=0o700, parents=True)
    except FileExistsError:
        if not path.is_dir():
            raise NotADirectoryError(f"{path} exists and is not a folder") from None
        return False
    # mkdir's mode is filtered by the umask; set it exactly.
    path.chmod(0o700)
    return True

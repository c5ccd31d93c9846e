"""Where full outputs go when the model only gets part of them: one private folder per session."""

from __future__ import annotations

import os
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agent_ext.core.errors import AgentExtError
from agent_ext.core.scratch import ScratchFolder, make_private_dir

from .config import BudgetConfig
from .text import encode, format_bytes, sha256_hex

SpillFailure = Literal["too_large", "session_budget", "io"]
_MAX_NAME_CHARS = 200
_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
          | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))


@dataclass(frozen=True)
class SpillRecord:
    """A saved output: its path, size in characters and bytes, and the sha256 of the bytes."""

    path: Path
    chars: int
    bytes: int
    sha256: str


class SpillError(AgentExtError):
    """An output was not saved. ``reason`` is a clause the model can be shown."""

    def __init__(self, kind: SpillFailure, reason: str) -> None:
        super().__init__(reason)
        self.kind: SpillFailure = kind
        self.reason = reason


def normalize_call_id(call_id: str) -> str | None:
    """A call id usable as a file name (its last path component), or None for ``.``/``..``/empty."""
    name = call_id.replace("\\", "/").rsplit("/", 1)[-1].replace("\0", "_")[:_MAX_NAME_CHARS]
    return None if name in ("", ".", "..") else name


def _safe_tool_name(tool_name: str) -> str:
    name = "".join(c if c.isalnum() or c in "_-." else "_" for c in tool_name)
    return name.strip(".")[:_MAX_NAME_CHARS] or "tool"


class SpillStore:
    """A private session folder (0700) holding spilled and persisted outputs (0600 each).

    With ``root`` the folder is that path (created if missing); without, a fresh temporary folder.
    It is created on first use, so sessions that never overflow leave nothing behind. A folder
    the store created is removed by :meth:`cleanup`, or else when the store is garbage-collected
    or the interpreter exits (a kernel shut down without closing its session). Bytes are
    counted against ``config.session_spill_bytes`` before writing, so concurrent calls cannot
    overshoot the session budget together.
    """

    def __init__(self, root: Path | str | None = None, config: BudgetConfig | None = None) -> None:
        self.config = config if config is not None else BudgetConfig()
        self._folder = ScratchFolder("agent_ext-", Path(root) if root is not None else None)
        self._used = 0
        self._lock = threading.Lock()

    @property
    def bytes_used(self) -> int:
        """Bytes saved so far this session (what counts against the session budget)."""
        return self._used

    @property
    def session_dir(self) -> Path:
        """The session folder, created (mode 0700) on first access. Raises OSError on failure."""
        return self._folder.path()

    def spill(self, tool_name: str, text: str) -> SpillRecord:
        """Save ``text`` as ``{session_dir}/{tool}_{12 hex}.output``. Raises SpillError."""
        data = encode(text)
        self._reserve(len(data))
        try:
            path = self.session_dir / f"{_safe_tool_name(tool_name)}_{secrets.token_hex(6)}.output"
            _write_new(path, data)
        except OSError as exc:
            self._refund(len(data))
            raise SpillError("io", f"the session folder could not be written: {exc}") from exc
        return SpillRecord(path, len(text), len(data), sha256_hex(data))

    def persist(self, call_id: str, text: str) -> SpillRecord:
        """Save ``text`` as ``{session_dir}/tool-results/{callId}.txt``. Raises SpillError.

        The call id is reduced to its last path component, so it cannot leave the folder; an
        unusable id gets a random name and a taken one a ``-N`` suffix.
        """
        data = encode(text)
        self._reserve(len(data))
        name = normalize_call_id(call_id) or f"call_{secrets.token_hex(6)}"
        try:
            folder = self.session_dir / "tool-results"
            make_private_dir(folder)
            path = _write_unique(folder, name, data)
        except OSError as exc:
            self._refund(len(data))
            raise SpillError("io", f"the session folder could not be written: {exc}") from exc
        return SpillRecord(path, len(text), len(data), sha256_hex(data))

    def discard(self, record: SpillRecord) -> None:
        """Delete a saved output that ended up unused and give its bytes back to the budget."""
        try:
            record.path.unlink()
        except OSError:
            return
        self._refund(record.bytes)

    def cleanup(self) -> None:
        """Remove the session folder if this store created it, and reset the byte count."""
        self._folder.remove()
        with self._lock:
            self._used = 0

    def __enter__(self) -> SpillStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cleanup()

    def _reserve(self, size: int) -> None:
        cap = self.config.max_spill_bytes
        if size > cap:
            raise SpillError("too_large", f"it is {format_bytes(size)}, over the "
                                          f"{format_bytes(cap)} limit for one saved output")
        with self._lock:
            limit = self.config.session_spill_bytes
            if self._used + size > limit:
                raise SpillError("session_budget",
                                 f"this session already saved {format_bytes(self._used)} of tool "
                                 f"output and its {format_bytes(limit)} limit leaves no room for "
                                 f"{format_bytes(size)} more")
            self._used += size

    def _refund(self, size: int) -> None:
        with self._lock:
            self._used = max(0, self._used - size)


def _write_new(path: Path, data: bytes) -> None:
    """Write a new file that nobody else can read; fails if anything already exists at ``path``."""
    fd = os.open(path, _FLAGS, 0o600)
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as f:
            fd = -1
            f.write(data)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        path.unlink(missing_ok=True)
        raise


def _write_unique(folder: Path, name: str, data: bytes) -> Path:
    for n in range(100):
        path = folder / (f"{name}.txt" if n == 0 else f"{name}-{n}.txt")
        try:
            _write_new(path, data)
        except FileExistsError:
            continue
        return path
    path = folder / f"{name}-{secrets.token_hex(6)}.txt"
    _write_new(path, data)
    return path

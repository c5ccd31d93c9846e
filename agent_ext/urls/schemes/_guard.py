"""Calling user code (``__repr__``, ``__len__``, properties) with a time limit.

var:// shows the user's objects, and any of them may define a ``__repr__`` that sleeps, loops,
raises or returns a gigabyte. Such code runs in a daemon thread and the caller waits at most a
time budget; a call that overruns is abandoned (Python cannot kill a thread), and once a few are
stuck, no more are started. The kernel stays responsive either way.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")

MAX_STUCK = 8
_stuck = 0
_stuck_lock = threading.Lock()


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """A guarded call's value, or why there is none (``timed out``, ``raised ...``)."""

    value: T | None = None
    problem: str | None = None

    @property
    def ok(self) -> bool:
        return self.problem is None


def guarded(fn: Callable[[], T], timeout: float) -> Outcome[T]:
    """Run ``fn`` in a daemon thread for at most ``timeout`` seconds."""
    global _stuck  # noqa: PLW0603  one counter for the whole process, behind a lock
    with _stuck_lock:
        if _stuck >= MAX_STUCK:
            return Outcome(problem=f"skipped: {_stuck} earlier calls into user code are still "
                                   "running")
    box: list[Outcome[T]] = []

    def run() -> None:
        global _stuck  # noqa: PLW0603
        try:
            box.append(Outcome(value=fn()))
        except BaseException as err:  # noqa: BLE001  user code may raise anything, even SystemExit
            box.append(Outcome(problem=f"raised {type(err).__name__}: {_safe_str(err)}"))
        finally:
            with _stuck_lock:
                if getattr(thread, "abandoned", False):
                    _stuck -= 1

    thread = threading.Thread(target=run, name="agent_ext-guarded", daemon=True)
    thread.start()
    thread.join(timeout)
    with _stuck_lock:
        if not box:
            thread.abandoned = True  # type: ignore[attr-defined]
            _stuck += 1
            return Outcome(problem=f"timed out after {timeout:g} s")
    return box[0]


def guarded_text(fn: Callable[[], object], timeout: float, limit: int) -> str:
    """A guarded call's result as text cut to ``limit`` characters, or ``<why not>``.

    The result is checked and cut in the worker too: a str subclass is user code as well.
    """
    def text() -> str:
        value = fn()
        if not isinstance(value, str):
            return f"<returned {type(value).__name__}, not text>"
        return cut(str.__str__(value), limit)

    found = guarded(text, timeout)
    return found.value if found.value is not None else f"<{found.problem}>"


def cut(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with a count of the rest."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit:,} more characters]"


def _safe_str(err: BaseException) -> str:
    try:
        return cut(str(err), 200)
    except Exception:  # noqa: BLE001  an exception whose __str__ raises
        return "(no message)"

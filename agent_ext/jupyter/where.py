"""What the kernel knows of where a run starts: the running cell's id and the last error.

The frontend names the cell it runs in the execute_request's metadata (``cellId``, which
JupyterLab, Notebook 7 and VS Code send); the last error is recorded after every cell by a
``post_run_cell`` hook, with IPython's own traceback text, so the agent can be told "the error
above" without guessing. A cell that later runs without error clears its recorded error.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Mapping
from typing import Any

from agent_ext.core.kernel import KernelError, Place

#: Errors of agent_ext's own runs (a failed or interrupted run): not "the error above".
_OWN = ("AgentRunError", "RunInterrupted")


class ErrorLog:
    """The last error a cell of ``shell`` raised (see the module docstring)."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.last: KernelError | None = None
        #: Whether a cell ran since the log started (before that, ``sys.last_value`` counts).
        self.watched = False

    def post_run_cell(self, result: Any) -> None:
        self.watched = True
        info = getattr(result, "info", None)
        raw = getattr(info, "raw_cell", None) or ""
        if raw.lstrip().startswith(("%agent", "%%agent")):
            return  # agent_ext's own cells: their errors are answered where they show
        cell_id = getattr(info, "cell_id", None) or None
        exc = getattr(result, "error_in_exec", None) or getattr(result, "error_before_exec", None)
        if exc is None:
            if self.last is not None and cell_id and self.last.cell_id == cell_id:
                self.last = None
            return
        if type(exc).__name__ in _OWN:
            return
        stb = getattr(self.shell, "_last_traceback", None)
        text = "\n".join(str(line) for line in stb) if isinstance(stb, list) else _format(exc)
        self.last = KernelError(type(exc).__name__, str(exc), text, cell_id,
                                getattr(result, "execution_count", None))

    def error(self) -> KernelError | None:
        """The error to tell the model about, if any."""
        if self.last is not None or self.watched:
            return self.last
        exc = getattr(sys, "last_value", None)
        if isinstance(exc, BaseException) and type(exc).__name__ not in _OWN:
            return KernelError(type(exc).__name__, str(exc), _format(exc))
        return None


_logs: dict[int, ErrorLog] = {}


def watch(shell: Any) -> None:
    """Start recording ``shell``'s errors (``%load_ext``)."""
    if id(shell) in _logs or getattr(shell, "events", None) is None:
        return
    log = _logs[id(shell)] = ErrorLog(shell)
    shell.events.register("post_run_cell", log.post_run_cell)


def unwatch(shell: Any) -> None:
    """Stop recording (``%unload_ext``)."""
    log = _logs.pop(id(shell), None)
    if log is not None:
        shell.events.unregister("post_run_cell", log.post_run_cell)


def running_cell_id(shell: Any) -> str | None:
    """The id of the cell whose execute_request is running, when the frontend sent one."""
    get_parent = getattr(getattr(shell, "kernel", None), "get_parent", None)
    parent = get_parent() if callable(get_parent) else None
    if not isinstance(parent, Mapping):
        return None
    header = parent.get("header")
    if isinstance(header, Mapping) and header.get("msg_type") not in (None, "execute_request"):
        return None
    metadata = parent.get("metadata")
    found = metadata.get("cellId") if isinstance(metadata, Mapping) else None
    return found if isinstance(found, str) and found else None


def place(shell: Any) -> Place:
    """Where a run that starts now is: its cell and the kernel's last error."""
    log = _logs.get(id(shell))
    error = log.error() if log is not None else ErrorLog(shell).error()
    return Place(running_cell_id(shell), error)


def _format(exc: BaseException) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))

"""What tools need from the kernel, as a small interface the Jupyter host implements.

Tools never import IPython: ``var://`` needs the user namespace, ``history://`` the input
history, ``run_cell`` a way to run code. The host (``agent_ext.jupyter``) puts an implementation
in ``ctx.services[KernelProvider]``; tests use a fake. The host also says where a run starts
(``Place``: the running cell and the kernel's last error).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class RunOutput:
    """What running code produced: nbformat output dicts, its execution count, its error.

    ``error`` is the error output (``{"output_type": "error", "ename", "evalue", "traceback"}``)
    when the code raised, else None; it is also among ``outputs``.
    """

    outputs: list[dict[str, Any]] = field(default_factory=list)
    execution_count: int | None = None
    error: dict[str, Any] | None = None


@dataclass(frozen=True)
class KernelError:
    """The last error a cell raised in the kernel, with IPython's traceback text, and its cell."""

    ename: str
    evalue: str
    traceback: str = ""
    cell_id: str | None = None
    execution_count: int | None = None


@dataclass(frozen=True)
class Place:
    """What the host knows when a run starts: the running cell's id and the last error."""

    cell_id: str | None = None
    error: KernelError | None = None


@runtime_checkable
class KernelProvider(Protocol):
    """The kernel, as tools see it."""

    def user_namespace(self) -> Mapping[str, object]:
        """The user's variables (IPython's ``user_ns``); read it, never change it."""
        ...

    def input_history(self, last: int | None = None) -> list[tuple[int, str]]:
        """``(execution count, source)`` of this session's inputs, oldest first; the last
        ``last`` only when given."""
        ...

    async def run_code(self, code: str) -> RunOutput:
        """Run ``code`` in the user namespace, as a cell would, capturing everything it shows."""
        ...


def kernel_of(services: Mapping[type, object]) -> KernelProvider | None:
    """The session's KernelProvider, or None outside a kernel."""
    found = services.get(KernelProvider)
    return found if isinstance(found, KernelProvider) else None

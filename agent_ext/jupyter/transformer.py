"""Turn a ``%%agent`` cell into top-level ``await``, so the cell stays busy until the run ends.

IPython rewrites a cell magic into ``get_ipython().run_cell_magic('agent', line, body)``; this
``input_transformers_post`` hook puts ``await`` in front of that call, and in front of each
``%agent undo`` line in a kernel (undoing a cell change waits for the live notebook's answer).
IPython's ``should_run_async`` then runs the cell as a coroutine on the kernel's own event
loop, which (ipykernel ≥ 7.4) keeps delivering widget messages while the cell waits: approvals
work, Run All and nbclient wait for the run, and all output stays with the cell.
"""

from __future__ import annotations

import re
from typing import Any

from IPython.core.async_helpers import _asyncio_runner

CALL = "get_ipython().run_cell_magic('agent', "
#: ``%agent`` commands that may have to wait for the browser: their lines are awaited.
AWAITED = ("undo",)
AWAITED_LINE = re.compile(r"^get_ipython\(\)\.run_line_magic\('agent', '(?:"
                          + "|".join(AWAITED) + r")\b")


def awaits_line(shell: Any) -> bool:
    """Whether ``%agent undo`` lines of ``shell`` are awaited (a kernel running asyncio)."""
    return (getattr(shell, "kernel", None) is not None and bool(getattr(shell, "autoawait", False))
            and getattr(shell, "loop_runner", None) is _asyncio_runner)


class AwaitAgentCells:
    """The transformer; leaves cells alone while IPython's autoawait is off."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell

    def __call__(self, lines: list[str]) -> list[str]:
        if not lines or not getattr(self.shell, "autoawait", False):
            return lines
        if lines[0].startswith(CALL):
            return ["await " + lines[0], *lines[1:]]
        if awaits_line(self.shell):
            return ["await " + line if AWAITED_LINE.match(line) else line for line in lines]
        return lines

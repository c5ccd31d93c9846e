"""Turn a ``%%agent`` cell into top-level ``await``, so the cell stays busy until the run ends.

IPython rewrites a cell magic into ``get_ipython().run_cell_magic('agent', line, body)``; this
``input_transformers_post`` hook puts ``await`` in front of that call. IPython's
``should_run_async`` then runs the cell as a coroutine on the kernel's own event loop, which
(ipykernel ≥ 7.4) keeps delivering widget messages while the cell waits: approvals work, Run
All and nbclient wait for the run, and all output stays with the cell.
"""

from __future__ import annotations

from typing import Any

CALL = "get_ipython().run_cell_magic('agent', "


class AwaitAgentCells:
    """The transformer; leaves cells alone while IPython's autoawait is off."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell

    def __call__(self, lines: list[str]) -> list[str]:
        if not lines or not lines[0].startswith(CALL) or not getattr(self.shell, "autoawait",
                                                                     False):
            return lines
        return ["await " + lines[0], *lines[1:]]

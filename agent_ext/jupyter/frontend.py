"""Whether a widget frontend is attached to this kernel, learned from the widgets themselves.

Every widget's JavaScript sends ``{"type": "ready"}`` once rendered. A ready means a person can
see and click; no ready within ``AgentExt.ready_timeout`` means nothing renders widgets here
(nbclient, papermill, ``jupyter execute``), so the headless policy answers instead. Both
findings are kept for the session: later approvals neither wait again nor fall back when a
widget happens to render late.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from .waiting import SLICE

State = Literal["unknown", "present", "absent"]


class Frontend:
    """The session's knowledge of its frontend (see the module docstring)."""

    def __init__(self, shell: Any = None) -> None:
        # Outside a kernel (terminal IPython, plain Python) nothing can render a widget.
        self.state: State = "unknown" if getattr(shell, "kernel", None) is not None else "absent"

    @property
    def absent(self) -> bool:
        return self.state == "absent"

    @property
    def present(self) -> bool:
        return self.state == "present"

    def saw_ready(self) -> None:
        self.state = "present"

    async def wait_ready(self, ready: asyncio.Future[Any], timeout: float) -> bool:
        """Wait for one widget's ready; True when a frontend is (or already was) there.

        Stops early when another widget settles the question meanwhile.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self.state == "unknown":
            if ready.done() and not ready.cancelled():
                self.saw_ready()
                break
            step = min(SLICE, deadline - loop.time())
            if step <= 0:
                self.state = "absent"
                break
            await asyncio.wait({ready}, timeout=step)
        return self.present

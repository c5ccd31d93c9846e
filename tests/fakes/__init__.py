"""Fake model servers on 127.0.0.1 that speak real SSE, for tests of the real adapters.

Each fake takes a script (one reply per request: ``SSE``, ``Status`` or a function of the
``Recorded`` request), records every request in ``.requests`` and shuts down on leaving ``with``.
Builders for common replies live in ``openai_server`` and ``anthropic_server``.
"""

from ._server import SSE, FakeServer, Recorded, Reply, Status, free_port
from .anthropic_server import FakeAnthropic
from .openai_server import FakeOpenAI

__all__ = ["SSE", "FakeAnthropic", "FakeOpenAI", "FakeServer", "Recorded", "Reply", "Status",
           "free_port"]

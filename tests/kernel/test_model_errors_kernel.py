"""A model that fails, in a real kernel: the retries show in the cell, and the cell fails.

The model is a real OpenAIChatModel talking to a fake OpenAI-compatible server on 127.0.0.1
that answers 503 twice, then 401 (a key refused): Run All must stop at this cell.
"""

from __future__ import annotations

import pytest

from tests.fakes.openai_server import FakeOpenAI, error
from tests.kernel.harness import KernelSession

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

SETUP = '''\
%load_ext agent_ext
import agent_ext
from agent_ext.models.openai_chat import OpenAIChatModel
agent = agent_ext.get_agent(model=OpenAIChatModel(
    "fake-model", base_url={url!r}, api_key="test-key", max_retries=3, retry_base_delay=0.2))
'''


def test_retries_show_and_a_401_fails_the_cell(kernel: KernelSession) -> None:
    busy = error(503, "busy", type="server_error", headers={"retry-after": "1"})
    script = [busy, busy,
              error(401, "Incorrect API key provided", type="invalid_request_error")]
    with FakeOpenAI(script) as server:
        kernel.ok(SETUP.format(url=server.base_url))
        run = kernel.execute("%%agent\nhello", timeout=60)
        assert len(server.requests) == 3
    assert run.status == "error", run.text
    assert run.error.startswith("AgentRunError: ")
    assert "rejected the API key (HTTP 401" in run.error
    text = run.text
    assert "fake-model: retrying in 1 s after HTTP 503 (1/3)…" in text, text
    assert "fake-model: retrying in 1 s after HTTP 503 (2/3)…" in text
    assert "(3/3)" not in text  # a refused key is not retried
    # The next cell runs normally: the failure left the session usable.
    assert kernel.execute("1 + 1").status == "ok"

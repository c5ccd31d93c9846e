"""AnthropicModel: Claude through the Messages API, streamed, with optional extended thinking.

The ``anthropic`` SDK is an optional extra, imported when a model is made.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

from ._anthropic_convert import EventAssembler, to_messages, to_tools
from ._common import (
    PLACEHOLDER_KEY,
    Endpoint,
    RetryPolicy,
    classify,
    is_default_host,
    relay,
    with_retries,
)
from .base import ModelError, StreamItem
from .types import ModelRequest

DEFAULT_BASE_URL = "https://api.anthropic.com"


class AnthropicModel:
    """A Claude model.

    ``base_url`` and ``api_key`` default to ``ANTHROPIC_BASE_URL`` and ``ANTHROPIC_API_KEY`` (or
    ``ANTHROPIC_AUTH_TOKEN``), read at each request. ``thinking_budget`` turns extended thinking
    on with that many tokens; it must be below ``max_tokens``.
    """

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 max_tokens: int = 8192, thinking_budget: int | None = None,
                 max_retries: int = 4, retry_base_delay: float = 1.0, timeout: float = 120,
                 max_retry_wait: float = 30.0) -> None:
        try:
            import anthropic  # noqa: PLC0415  (an optional extra)
        except ImportError as exc:
            raise ModelError("The Anthropic SDK is not installed; run "
                             "pip install 'agent-ext[anthropic]' and restart the kernel.",
                             kind="bad_request") from exc
        if thinking_budget is not None and thinking_budget >= max_tokens:
            raise ModelError(f"thinking_budget ({thinking_budget}) must be below max_tokens "
                             f"({max_tokens}); raise max_tokens or lower the budget.",
                             kind="bad_request")
        self._sdk: Any = anthropic
        self.model = model
        self.base_url = base_url
        self.api_key = api_key
        self.max_tokens = max_tokens
        self.thinking_budget = thinking_budget
        self.timeout = float(timeout)
        self.retry = RetryPolicy(max_retries, retry_base_delay, max_retry_wait)

    @property
    def name(self) -> str:
        return f"anthropic:{self.model}"

    def __repr__(self) -> str:
        return f"AnthropicModel({self.model!r}, base_url={self.base_url!r})"

    def _endpoint(self) -> tuple[Endpoint, str | None]:
        """Where to send and with which key (None: the SDK's own ``ANTHROPIC_AUTH_TOKEN``)."""
        url = self.base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL
        official = is_default_host(url, "api.anthropic.com")
        key = self.api_key or os.environ.get("ANTHROPIC_API_KEY") or ""
        token = os.environ.get("ANTHROPIC_AUTH_TOKEN") or ""
        if not key and not token and official:
            raise ModelError("No API key for Anthropic: set ANTHROPIC_API_KEY or pass api_key= "
                             "to AnthropicModel.", kind="auth")
        ep = Endpoint("Anthropic" if official else "the model server", self.model, url,
                      "ANTHROPIC_API_KEY", self.timeout, keyless=not key and not token)
        if key:
            return ep, key
        return ep, None if token else PLACEHOLDER_KEY

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        """Stream one step; retried (before any output) on rate limits, overload, 5xx and lost
        connections."""
        ep, key = self._endpoint()
        system, messages = to_messages(request)
        body: dict[str, Any] = {"model": self.model,
                                "max_tokens": request.max_output_tokens or self.max_tokens,
                                "messages": messages, "stream": True}
        if system:
            body["system"] = system
        if request.tools:
            body["tools"] = to_tools(request.tools)
        if self.thinking_budget is not None:
            body["thinking"] = {"type": "enabled", "budget_tokens": self.thinking_budget}
        async for item in with_retries(lambda: self._attempt(body, ep, key), self.retry,
                                       lambda exc, n: classify(exc, self._sdk, ep, n)):
            yield item

    async def _attempt(self, body: dict[str, Any], ep: Endpoint,
                       key: str | None) -> AsyncIterator[StreamItem]:
        sdk = self._sdk
        timeout = sdk.Timeout(self.timeout, connect=min(self.timeout, 10.0))
        async with sdk.AsyncAnthropic(api_key=key, base_url=ep.url, max_retries=0,
                                      timeout=timeout) as client:
            stream = await client.messages.create(**body)
            assembler = EventAssembler(self.model)
            async for item in relay(stream, assembler.feed):
                yield item
            yield assembler.finish()

"""OpenAIChatModel: any OpenAI-compatible Chat Completions endpoint, streamed.

Works with OpenAI itself and with compatible servers (vLLM, llama.cpp, Ollama, LM Studio,
DeepSeek, OpenRouter ...). Reasoning text those servers stream (``reasoning_content`` or
``reasoning``) is shown as reasoning and sent back on the next turn, as some of them require.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

from ._common import (
    PLACEHOLDER_KEY,
    Endpoint,
    RetryPolicy,
    classify,
    is_default_host,
    relay,
    server_message,
    with_retries,
)
from ._openai_convert import ChunkAssembler, to_messages, to_tools
from .base import ModelError, StreamItem
from .types import ModelRequest

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAIChatModel:
    """A chat model behind a Chat Completions endpoint.

    ``base_url`` and ``api_key`` default to ``OPENAI_BASE_URL`` and the variable named by
    ``api_key_env`` (``OPENAI_API_KEY``; None reads none), at each request. A server other than
    OpenAI's may be keyless: a placeholder key is sent then. ``provider`` names the service in
    messages. ``extra_body`` is merged into every request (e.g. ``{"max_tokens": 4096}`` or a
    server's own options).
    """

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 provider: str = "openai", max_retries: int = 4, timeout: float = 120,
                 extra_body: dict[str, Any] | None = None, retry_base_delay: float = 1.0,
                 max_retry_wait: float = 30.0,
                 api_key_env: str | None = "OPENAI_API_KEY") -> None:
        import openai  # noqa: PLC0415  (deferred: a large import the agent may never need)

        self._sdk: Any = openai
        self.model = model
        self.base_url = base_url
        self.api_key = api_key
        self.provider = provider
        self.api_key_env = api_key_env
        self.timeout = float(timeout)
        self.extra_body = dict(extra_body or {})
        self.retry = RetryPolicy(max_retries, retry_base_delay, max_retry_wait)
        self._stream_options = True

    @property
    def name(self) -> str:
        return f"{self.provider}:{self.model}"

    def __repr__(self) -> str:
        return f"OpenAIChatModel({self.model!r}, base_url={self.base_url!r})"

    def _endpoint(self) -> tuple[Endpoint, str]:
        """Where to send and with which key, from the arguments or the environment."""
        url = self.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        key_env = self.api_key_env or "OPENAI_API_KEY"
        key = self.api_key or (os.environ.get(self.api_key_env) if self.api_key_env else "") or ""
        official = is_default_host(url, "api.openai.com")
        label = self.provider if self.provider != "openai" else (
            "OpenAI" if official else "the model server")
        if not key and official:
            raise ModelError(f"No API key for {label}: set {key_env} or pass api_key= to "
                             "OpenAIChatModel.", kind="auth")
        ep = Endpoint(label, self.model, url, key_env, self.timeout, keyless=not key)
        return ep, key or PLACEHOLDER_KEY

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        """Stream one step; retried (before any output) on rate limits, 5xx and lost connections."""
        ep, key = self._endpoint()
        body: dict[str, Any] = {"model": self.model, "messages": to_messages(request, ep.url),
                                "stream": True}
        if request.tools:
            body["tools"] = to_tools(request.tools)
        async for item in with_retries(lambda: self._attempt(body, ep, key), self.retry,
                                       lambda exc, n: classify(exc, self._sdk, ep, n)):
            yield item

    async def _attempt(self, body: dict[str, Any], ep: Endpoint,
                       key: str) -> AsyncIterator[StreamItem]:
        sdk = self._sdk
        timeout = sdk.Timeout(self.timeout, connect=min(self.timeout, 10.0))
        async with sdk.AsyncOpenAI(api_key=key, base_url=ep.url, max_retries=0,
                                   timeout=timeout) as client:
            stream = await self._open(client, body)
            assembler = ChunkAssembler(self.model, ep.url)
            async for item in relay(stream, assembler.feed):
                yield item
            yield assembler.finish()

    async def _open(self, client: Any, body: dict[str, Any]) -> Any:
        """Start the stream, asking for usage unless this server rejected that option before."""
        if self._stream_options:
            try:
                return await client.chat.completions.create(
                    **body, stream_options={"include_usage": True}, extra_body=self.extra_body)
            except self._sdk.APIStatusError as exc:
                message = server_message(exc)
                if exc.status_code not in (400, 422) or not (
                        "stream_options" in message or "include_usage" in message):
                    raise
                self._stream_options = False
        return await client.chat.completions.create(**body, extra_body=self.extra_body)

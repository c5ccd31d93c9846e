"""OpenAIChatModel: any OpenAI-compatible Chat Completions endpoint, streamed.

Works with OpenAI itself and with compatible servers (vLLM, llama.cpp, Ollama, LM Studio,
DeepSeek, OpenRouter ...). Reasoning text those servers stream (``reasoning_content`` or
``reasoning``) is shown as reasoning and sent back on the next turn, as some of them require.
Local servers get an output cap by default (a small model can otherwise write for minutes), and
their context window is asked rather than assumed (``window.context_window``).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

from . import window
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
from .inband import IN_BAND_MODES, InBandMode
from .types import ModelRequest

DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: Seconds without a byte from the server before a request fails (and is retried).
CLOUD_TIMEOUT = 120.0
LOCAL_TIMEOUT = 600.0
#: The output cap sent to local servers when none is configured.
LOCAL_MAX_OUTPUT_TOKENS = 2048
_CAP_KEYS = ("max_tokens", "max_completion_tokens", "n_predict")
#: Sampling sent to local servers unless extra_body sets it: greedy and seeded, so a small
#: model's tool calls are as well-formed as it can make them and a run can be repeated.
LOCAL_SAMPLING: dict[str, Any] = {"temperature": 0, "seed": 1}


class OpenAIChatModel:
    """A chat model behind a Chat Completions endpoint.

    ``base_url`` and ``api_key`` default to ``OPENAI_BASE_URL`` and the variable named by
    ``api_key_env`` (``OPENAI_API_KEY``; None reads none), at each request. A server other than
    OpenAI's may be keyless: a placeholder key is sent then. ``provider`` names the service in
    messages. ``extra_body`` is merged into every request (e.g. a server's own options).

    ``max_output_tokens`` caps each answer (``max_tokens``); local servers get
    ``LOCAL_MAX_OUTPUT_TOKENS`` when it is None, cloud providers no cap. ``context_window``
    overrides the window a local server reports. ``in_band_tools`` says whether tool calls
    written as text are read as calls: ``auto`` (local servers only), ``always`` or ``never``.
    ``temperature`` is sent when given; local servers are otherwise sent ``LOCAL_SAMPLING``
    (temperature 0, a fixed seed) for each key ``extra_body`` does not set, except for a step
    that asks to be sampled (``ModelRequest.resample_temperature``).
    """

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 provider: str = "openai", max_retries: int = 4, timeout: float | None = None,
                 extra_body: dict[str, Any] | None = None, retry_base_delay: float = 1.0,
                 max_retry_wait: float = 30.0,
                 api_key_env: str | None = "OPENAI_API_KEY",
                 max_output_tokens: int | None = None, context_window: int | None = None,
                 in_band_tools: InBandMode = "auto", temperature: float | None = None) -> None:
        import openai  # noqa: PLC0415  (deferred: a large import the agent may never need)

        self._sdk: Any = openai
        self.model = model
        self.base_url = base_url
        self.api_key = api_key
        self.provider = provider
        self.api_key_env = api_key_env
        self._timeout = None if timeout is None else float(timeout)
        self.extra_body = dict(extra_body or {})
        self.retry = RetryPolicy(max_retries, retry_base_delay, max_retry_wait)
        self._stream_options = True
        if in_band_tools not in IN_BAND_MODES:
            raise ValueError(f"in_band_tools={in_band_tools!r}: use one of "
                             f"{', '.join(IN_BAND_MODES)}")
        self.in_band_tools: InBandMode = in_band_tools
        self._max_output_tokens = max_output_tokens
        self._context_window = context_window
        self.temperature = temperature

    @property
    def url(self) -> str:
        """The endpoint requests go to now."""
        return self.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL

    @property
    def local(self) -> bool:
        """Whether the server runs on this machine or is a self-hosted local kind."""
        return window.is_local(self.provider, self.url)

    @property
    def greedy(self) -> bool:
        """Whether answers are decoded greedily by default (a local server, no temperature
        configured): a step may ask for sampling instead (``resample_temperature``)."""
        return self.local and self.temperature is None and "temperature" not in self.extra_body

    @property
    def timeout(self) -> float:
        """Seconds to wait for the server to send anything: ``LOCAL_TIMEOUT`` for a local server
        (its first answer waits for the whole prompt to be processed on this machine's CPU),
        else ``CLOUD_TIMEOUT``, unless given."""
        if self._timeout is not None:
            return self._timeout
        return LOCAL_TIMEOUT if self.local else CLOUD_TIMEOUT

    @timeout.setter
    def timeout(self, seconds: float) -> None:
        self._timeout = float(seconds)

    @property
    def max_output_tokens(self) -> int | None:
        """The output cap sent with each request (None: the server's own)."""
        if self._max_output_tokens is not None:
            return self._max_output_tokens
        if any(k in self.extra_body for k in _CAP_KEYS):
            return next(int(self.extra_body[k]) for k in _CAP_KEYS if k in self.extra_body)
        return LOCAL_MAX_OUTPUT_TOKENS if self.local else None

    @property
    def context_window(self) -> int | None:
        """The configured window; None means ask the server (``probe_context_window``)."""
        return self._context_window

    def probe_context_window(self) -> int | None:
        """The window the local server reports (cached per URL and model); None for cloud
        providers and servers that do not say. Blocks for at most a few short requests."""
        if self._context_window is not None:
            return self._context_window
        if not self.local:
            return None
        return window.context_window(self.url, self.model, self.provider)

    @property
    def name(self) -> str:
        return f"{self.provider}:{self.model}"

    def __repr__(self) -> str:
        return f"OpenAIChatModel({self.model!r}, base_url={self.base_url!r})"

    def _endpoint(self) -> tuple[Endpoint, str]:
        """Where to send and with which key, from the arguments or the environment."""
        url = self.url
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
            # Some servers (llama-cpp-python's function calling) ignore tools without it.
            body["tool_choice"] = "auto"
        extra = self.extra_body
        if request.max_output_tokens is not None:
            # A raised cap for this step wins over a cap in extra_body.
            extra = {k: v for k, v in extra.items() if k not in _CAP_KEYS}
            body["max_tokens"] = request.max_output_tokens
        elif self.max_output_tokens is not None and not any(k in extra for k in _CAP_KEYS):
            body["max_tokens"] = self.max_output_tokens
        if self.temperature is not None:
            body["temperature"] = self.temperature
        elif self.greedy and request.resample_temperature is not None:
            body["temperature"] = request.resample_temperature
        if self.local:
            body.update({k: v for k, v in LOCAL_SAMPLING.items() if k not in extra | body})
        async for item in with_retries(lambda: self._attempt(body, extra, ep, key), self.retry,
                                       lambda exc, n: classify(exc, self._sdk, ep, n)):
            yield item

    async def _attempt(self, body: dict[str, Any], extra: dict[str, Any], ep: Endpoint,
                       key: str) -> AsyncIterator[StreamItem]:
        sdk = self._sdk
        timeout = sdk.Timeout(self.timeout, connect=min(self.timeout, 10.0))
        async with sdk.AsyncOpenAI(api_key=key, base_url=ep.url, max_retries=0,
                                   timeout=timeout) as client:
            stream = await self._open(client, body, extra)
            assembler = ChunkAssembler(self.model, ep.url)
            async for item in relay(stream, assembler.feed):
                yield item
            yield assembler.finish()

    async def _open(self, client: Any, body: dict[str, Any], extra: dict[str, Any]) -> Any:
        """Start the stream, asking for usage unless this server rejected that option before."""
        if self._stream_options:
            try:
                return await client.chat.completions.create(
                    **body, stream_options={"include_usage": True}, extra_body=extra)
            except self._sdk.APIStatusError as exc:
                message = server_message(exc)
                if exc.status_code not in (400, 422) or not (
                        "stream_options" in message or "include_usage" in message):
                    raise
                self._stream_options = False
        return await client.chat.completions.create(**body, extra_body=extra)

"""What the provider adapters share: retries with backoff, and SDK errors as one clear sentence.

The SDKs' own retries are off: they would replay a request after part of its answer was already
shown. Here a failure is retried only while nothing has been yielded.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import math
import random
import re
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

from .base import ModelError, Retrying, StreamItem

PLACEHOLDER_KEY = "agent-ext-no-key"

_CONTEXT = re.compile(
    r"context[ _-]?(length|window|size|limit)|maximum context|prompt is too long|too long to fit"
    r"|too many tokens|reduce the length of the (messages|prompt)|input token count.*exceeds"
    r"|exceeds? the (available |maximum )?context", re.IGNORECASE)
_CONTEXT_CODES = {"context_length_exceeded", "exceed_context_size_error"}
_NO_MODEL = re.compile(r"model.{0,80}(not found|does not exist|not exist)|unknown model"
                       r"|invalid model|no such model", re.IGNORECASE)
_RETRYABLE = {"rate_limit", "server", "network", "stream"}


class StreamInterruptedError(Exception):
    """An error raised by the SDK while reading a streamed answer (wraps the cause)."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


async def relay(stream: Any, feed: Callable[[Any], Iterable[StreamItem]]
                ) -> AsyncIterator[StreamItem]:
    """Feed each event of an SDK stream to ``feed`` and yield what it makes of them.

    A failure while reading becomes ``StreamInterruptedError``, so the caller can tell a cut
    stream from a refused request.
    """
    async with stream:
        while True:
            try:
                event = await anext(stream)
            except StopAsyncIteration:
                break
            except Exception as exc:
                raise StreamInterruptedError(exc) from exc
            for item in feed(event):
                yield item


@dataclass(frozen=True)
class Endpoint:
    """Who a request went to, for error messages."""

    provider: str
    model: str
    url: str
    key_env: str
    timeout: float
    keyless: bool = False

    @property
    def title(self) -> str:
        """The provider's name at the start of a sentence."""
        return self.provider[:1].upper() + self.provider[1:]


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait: exponential backoff with jitter, Retry-After honoured."""

    max_retries: int = 4
    base_delay: float = 1.0
    max_wait: float = 30.0

    def delay(self, retry: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(self.max_wait, max(0.0, retry_after))
        ceiling = min(self.max_wait, self.base_delay * 2.0 ** retry)
        return ceiling * (0.5 + random.random() / 2)  # noqa: S311  jitter, not security


def is_default_host(url: str, host: str) -> bool:
    """Whether ``url`` points at the provider's own API (where a key is always required)."""
    return (urlsplit(url).hostname or "").lower() == host


def plain(value: Any) -> Any:
    """``value`` with every mapping turned into a dict and every tuple into a list, unchanged
    otherwise (declarations are sent as given, but JSON needs plain containers)."""
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def field(obj: Any, name: str) -> Any:
    """``obj[name]`` or ``obj.name`` (SDK objects keep fields they do not know as attributes)."""
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


@functools.cache
def transport_errors() -> tuple[type[BaseException], ...]:
    """The HTTP library's transport errors, which some SDK versions let escape mid-stream."""
    found: list[type[BaseException]] = []
    for name in ("httpx2", "httpx"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        found.append(module.TransportError)
    return tuple(found)


def retry_after(exc: BaseException) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms`` or ``retry-after``), if any."""
    headers = field(field(exc, "response"), "headers")
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        raw = headers.get(name)
        if not raw:
            continue
        try:
            value = float(raw) / scale
        except ValueError:
            try:
                value = parsedate_to_datetime(raw).timestamp() - time.time()
            except (TypeError, ValueError):
                continue
        if math.isfinite(value):
            return max(0.0, value)
    return None


def _error_body(body: Any) -> Mapping[str, Any]:
    if isinstance(body, Mapping):
        inner = body.get("error")
        return inner if isinstance(inner, Mapping) else body
    return {}


def server_message(exc: BaseException) -> str:
    """The server's own explanation, short."""
    body = field(exc, "body")
    err = _error_body(body)
    text = err.get("message") or err.get("detail") or (body if isinstance(body, str) else "")
    if not text:
        text = str(field(exc, "message") or exc)
        text = re.sub(r"^Error code: \d+ - ", "", text)
    text = " ".join(str(text).split())
    return text if len(text) <= 300 else text[:297] + "..."


def _is_context_error(exc: BaseException, message: str) -> bool:
    err = _error_body(field(exc, "body"))
    return str(err.get("code") or "") in _CONTEXT_CODES or bool(_CONTEXT.search(message))


def _has_cause(exc: BaseException, names: tuple[str, ...]) -> bool:
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if any(cls.__name__ in names for cls in type(seen).__mro__):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def classify(exc: BaseException, sdk: Any, ep: Endpoint, retries: int) -> ModelError | None:
    """``exc`` (an SDK or transport error) as a ModelError that says what to do next; None for
    anything else raised before the answer started (a bug, best seen as it is)."""
    if isinstance(exc, ModelError):
        return exc
    streaming = isinstance(exc, StreamInterruptedError)
    cause = exc.cause if isinstance(exc, StreamInterruptedError) else exc
    after = f" after {retries} retr{'y' if retries == 1 else 'ies'}" if retries else ""
    status = field(cause, "status_code")
    status = status if isinstance(status, int) and status >= 400 else None

    if isinstance(cause, sdk.APITimeoutError) or _has_cause(cause, ("TimeoutException",)):
        return ModelError(f"{ep.title} at {ep.url} sent nothing for {ep.timeout:g} s{after}; "
                          "try again, or raise the model's timeout.",
                          kind="stream" if streaming else "network")
    if isinstance(cause, (sdk.APIConnectionError, *transport_errors())):
        if streaming:
            return ModelError(f"The connection to {ep.url} dropped in the middle of "
                              f"{ep.provider}'s answer{after}; try again.", kind="stream")
        return ModelError(f"Cannot reach {ep.url}{after}; is the server running? Check the base "
                          "URL and the network.", kind="network")
    if not isinstance(cause, sdk.APIError):
        if not streaming:
            return None
        return ModelError(f"{ep.title} sent an answer agent_ext could not read "
                          f"({type(cause).__name__}: {cause}){after}; try again.", kind="stream")

    message = server_message(cause)
    err_type = str(_error_body(field(cause, "body")).get("type") or "")
    code = str(_error_body(field(cause, "body")).get("code") or "")
    if _is_context_error(cause, message):
        return ModelError(f"The conversation is too long for {ep.model}'s context window "
                          f"({message}); compact or clear the history, then try again.",
                          kind="context_length", status=status)
    if status == 401 or err_type == "authentication_error":
        if ep.keyless:
            return ModelError(f"The server at {ep.url} needs an API key; set {ep.key_env} or "
                              "pass api_key=.", kind="auth", status=status)
        return ModelError(f"{ep.title} rejected the API key (HTTP 401: {message}); check "
                          f"{ep.key_env} or the api_key you passed.", kind="auth", status=status)
    if status == 403 or err_type == "permission_error":
        return ModelError(f"{ep.title} refused access (HTTP 403: {message}); check that your "
                          f"API key may use {ep.model}.", kind="auth", status=status)
    if status == 404 or code == "model_not_found" or (status in (400, 422)
                                                       and _NO_MODEL.search(message)):
        return ModelError(f"Model {ep.model!r} is not served at {ep.url} ({message}); check the "
                          "model name and the base URL.", kind="not_found", status=status)
    if code == "insufficient_quota":
        return ModelError(f"{ep.title} says the account is out of credit or quota ({message}); "
                          "check its billing, then try again.", kind="auth", status=status)
    if status == 429 or err_type == "rate_limit_error":
        return ModelError(f"{ep.title} is rate limiting requests{after} ({message}); wait a "
                          "minute and try again.", kind="rate_limit", status=status)
    if status == 408:
        return ModelError(f"{ep.title} timed out on the request{after}; try again.",
                          kind="network", status=status)
    if status == 529 or err_type == "overloaded_error":
        return ModelError(f"{ep.title} is overloaded{after}; try again in a few minutes.",
                          kind="server", status=status)
    if status is None or status < 400 or status >= 500:
        where = f"HTTP {status}: " if status and status >= 500 else ""
        return ModelError(f"{ep.title} had a server error{after} ({where}{message}); try "
                          "again later.", kind="server", status=status)
    return ModelError(f"{ep.title} rejected the request for {ep.model} (HTTP {status}: "
                      f"{message}); check the model supports what was sent.",
                      kind="bad_request", status=status)


def _reason(error: ModelError) -> str:
    """What failed, in a few words: ``HTTP 503``, ``a network error``."""
    if error.status:
        return f"HTTP {error.status}"
    return {"network": "a network error", "stream": "a dropped stream",
            "rate_limit": "a rate limit", "server": "a server error"}.get(error.kind, error.kind)


async def with_retries(attempt: Callable[[], AsyncIterator[StreamItem]], policy: RetryPolicy,
                       fail: Callable[[BaseException, int], ModelError | None]
                       ) -> AsyncIterator[StreamItem]:
    """Run ``attempt`` and retry retryable failures, but only while nothing was yielded.

    ``attempt`` wraps errors met while reading the stream in ``StreamInterruptedError``.
    """
    retries = 0
    while True:
        yielded = False
        try:
            async for item in attempt():
                yielded = True
                yield item
        except Exception as exc:
            error = fail(exc, retries)
            if error is None:
                raise
            if yielded or error.kind not in _RETRYABLE or retries >= policy.max_retries \
                    or isinstance(exc, ModelError):
                if error is exc:
                    raise
                raise error from exc
            delay = policy.delay(retries, retry_after(exc.cause if isinstance(
                exc, StreamInterruptedError) else exc))
            retries += 1
            yield Retrying(delay, retries, policy.max_retries, _reason(error))
            await asyncio.sleep(delay)
        else:
            return

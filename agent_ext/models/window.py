"""A local server's context window, asked rather than assumed, and what to raise when it is small.

llama.cpp reports ``n_ctx`` (``/props``, and ``meta`` in ``/v1/models``), Ollama its model's
``num_ctx`` and ``context_length`` (``/api/show``, ``/api/ps``), LM Studio the loaded context
length (``/api/v0/models``), vLLM ``max_model_len`` (``/v1/models``). Each question has a short
timeout; the answer is cached per (base URL, model).
"""

from __future__ import annotations

import http.client
import json
import math
import re
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import quote, urlsplit

PROBE_TIMEOUT = 1.5
#: Ollama's context when neither the model nor the server sets ``num_ctx``.
OLLAMA_DEFAULT_CTX = 4096
LOCAL_PROVIDERS = frozenset({"ollama", "lmstudio", "llamacpp", "vllm"})
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "0.0.0.0"})  # noqa: S104  a name, not a bind

_cache: dict[tuple[str, str], int | None] = {}
_lock = threading.Lock()


def is_local(provider: str, base_url: str) -> bool:
    """A local server: one of the local providers, or any endpoint on this machine."""
    host = (urlsplit(base_url).hostname or "").lower()
    return provider in LOCAL_PROVIDERS or host in _LOOPBACK or host.startswith("127.")


def clear_cache() -> None:
    """Forget every window asked so far (tests, or after restarting a server with a new size)."""
    with _lock:
        _cache.clear()


def context_window(base_url: str, model: str, provider: str = "", *,
                   timeout: float = PROBE_TIMEOUT) -> int | None:
    """The context window in tokens the server at ``base_url`` gives ``model``, or None when
    it does not say. Asked once per (base URL, model); later calls use the answer."""
    key = (base_url.rstrip("/"), model)
    with _lock:
        if key in _cache:
            return _cache[key]
    found = _ask(key[0], model, provider, timeout)
    with _lock:
        _cache[key] = found
    return found


def _ask(base_url: str, model: str, provider: str, timeout: float) -> int | None:
    root = re.sub(r"/v1$", "", base_url)
    probes: dict[str, Callable[[], int | None]] = {
        "llamacpp": lambda: _llamacpp(root, model, timeout),
        "ollama": lambda: _ollama(root, model, timeout),
        "lmstudio": lambda: _lmstudio(root, model, timeout),
        "vllm": lambda: _openai_models(root, model, timeout),
    }
    order = [provider] if provider in probes else list(probes)
    for name in order:
        found = probes[name]()
        if found:
            return found
    return None


def _llamacpp(root: str, model: str, timeout: float) -> int | None:
    props = _get(root + "/props", timeout)
    settings = props.get("default_generation_settings") if isinstance(props, dict) else None
    n_ctx = _int(settings.get("n_ctx")) if isinstance(settings, dict) else None
    if n_ctx is None and isinstance(props, dict):
        n_ctx = _int(props.get("n_ctx"))
    return n_ctx or _openai_models(root, model, timeout)


def _openai_models(root: str, model: str, timeout: float) -> int | None:
    """``/v1/models``: vLLM's ``max_model_len``, llama.cpp's ``meta.n_ctx`` (else
    ``n_ctx_train``, the most a server could give)."""
    for entry in _entries(_get(root + "/v1/models", timeout), model):
        meta = entry.get("meta")
        meta = meta if isinstance(meta, dict) else {}
        for value in (entry.get("max_model_len"), meta.get("n_ctx"), meta.get("n_ctx_train")):
            if _int(value):
                return _int(value)
    return None


def _ollama(root: str, model: str, timeout: float) -> int | None:
    shown = _post(root + "/api/show", {"model": model}, timeout)
    if not isinstance(shown, dict):
        return None
    params = shown.get("parameters")
    if isinstance(params, str):
        m = re.search(r"(?m)^\s*num_ctx\s+(\d+)", params)
        if m:
            return int(m.group(1))
    running = _get(root + "/api/ps", timeout)
    for entry in (running.get("models") if isinstance(running, dict) else None) or ():
        if isinstance(entry, dict) and model in (entry.get("name"), entry.get("model")) \
                and _int(entry.get("context_length")):
            return _int(entry.get("context_length"))
    info = shown.get("model_info")
    trained = next((_int(v) for k, v in info.items() if k.endswith(".context_length")), None) \
        if isinstance(info, dict) else None
    return min(trained, OLLAMA_DEFAULT_CTX) if trained else None


def _lmstudio(root: str, model: str, timeout: float) -> int | None:
    for entry in _entries(_get(root + "/api/v0/models", timeout), model):
        for key in ("loaded_context_length", "max_context_length"):
            if _int(entry.get(key)):
                return _int(entry.get(key))
    single = _get(f"{root}/api/v0/models/{quote(model, safe='')}", timeout)
    if isinstance(single, dict):
        for key in ("loaded_context_length", "max_context_length"):
            if _int(single.get(key)):
                return _int(single.get(key))
    return None


def _entries(listing: Any, model: str) -> Iterable[dict[str, Any]]:
    """The listing's entry for ``model`` first, then the only entry when there is one."""
    entries = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(entries, list):
        return []
    entries = [e for e in entries if isinstance(e, dict)]
    named = [e for e in entries if model in (e.get("id"), e.get("name"), e.get("model"))]
    return named or (entries if len(entries) == 1 else [])


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _get(url: str, timeout: float) -> Any:
    return _fetch(urllib.request.Request(url, headers={"Accept": "application/json"}),  # noqa: S310
                  timeout)


def _post(url: str, body: dict[str, Any], timeout: float) -> Any:
    return _fetch(urllib.request.Request(  # noqa: S310  (http(s) only, checked in _fetch)
        url, data=json.dumps(body).encode(), method="POST",
        headers={"Content-Type": "application/json", "Accept": "application/json"}), timeout)


def _fetch(request: urllib.request.Request, timeout: float) -> Any:
    """The JSON answer, or None for anything else (no server, an error, not JSON)."""
    if not request.full_url.startswith(("http://", "https://")):
        return None
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=timeout) as response:
            return json.loads(response.read(1 << 22))
    except urllib.error.HTTPError as exc:
        exc.close()
    except (OSError, ValueError, http.client.HTTPException):
        pass
    return None


def suggested_window(needed_tokens: int) -> int:
    """A window that fits a request of ``needed_tokens`` with room for an answer: the next
    power of two at or above it (servers and users think in those)."""
    return 1 << max(11, math.ceil(math.log2(max(1, needed_tokens))))


def raise_advice(provider: str, size: int) -> str:
    """How to give the model a window of ``size`` tokens, in the provider's own terms."""
    if provider == "llamacpp":
        return f"restart llama-server with -c {size} (or larger)"
    if provider == "ollama":
        return (f"set num_ctx to {size} (PARAMETER num_ctx {size} in a Modelfile, or "
                f"OLLAMA_CONTEXT_LENGTH={size} for the server)")
    if provider == "lmstudio":
        return f"load the model in LM Studio with a context length of {size} (or larger)"
    if provider == "vllm":
        return f"start vLLM with --max-model-len {size} (or larger)"
    return f"use a server or model with a context window of at least {size} tokens"

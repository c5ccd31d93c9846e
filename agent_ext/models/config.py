"""Which model to use: an argument, ``AGENT_EXT_MODEL``, settings, a local server, or the demo.

Model strings are ``provider:model`` (``openai:gpt-4o``, ``ollama:qwen3``, ``demo``); a name
without a provider is an OpenAI model. Provider adapters are imported only when one is built.
Local servers are found by asking each standard loopback port for its model list, all at once
and briefly, so a missing server costs at most half a second.
"""

from __future__ import annotations

import http.client
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agent_ext.settings import Settings, load_settings, model_options

from .base import Model, ModelError

Source = Literal["argument", "env", "project settings", "user settings", "detected", "demo"]
MODEL_ENV = "AGENT_EXT_MODEL"
#: How to choose a real model from a notebook, then from the environment.
CHOOSE_MODEL = ("In a notebook type `%agent key openai` (a hidden prompt; the key stays in this "
                "kernel), then `%agent model openai:gpt-4o`; `%agent model` lists every choice. "
                f"Elsewhere set {MODEL_ENV}=openai:gpt-4o and OPENAI_API_KEY.")


@dataclass(frozen=True)
class Provider:
    """How to reach one provider: its API dialect, default endpoint and environment variables.

    ``key_env`` is required when the default endpoint is used (cloud providers only); with the
    endpoint overridden through ``base_url_env`` the key is optional, for self-hosted servers.
    """

    name: str
    base_url: str
    base_url_env: str
    key_env: str | None = None
    dialect: Literal["openai", "anthropic"] = "openai"

    @property
    def local(self) -> bool:
        return self.key_env is None


PROVIDERS: dict[str, Provider] = {p.name: p for p in (
    Provider("openai", "https://api.openai.com/v1", "OPENAI_BASE_URL", "OPENAI_API_KEY"),
    Provider("anthropic", "https://api.anthropic.com", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY",
             "anthropic"),
    Provider("deepseek", "https://api.deepseek.com/v1", "DEEPSEEK_BASE_URL", "DEEPSEEK_API_KEY"),
    Provider("dashscope", "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
             "DASHSCOPE_BASE_URL", "DASHSCOPE_API_KEY"),
    Provider("openrouter", "https://openrouter.ai/api/v1", "OPENROUTER_BASE_URL",
             "OPENROUTER_API_KEY"),
    Provider("gemini", "https://generativelanguage.googleapis.com/v1beta/openai/",
             "GEMINI_BASE_URL", "GEMINI_API_KEY"),
    Provider("ollama", "http://127.0.0.1:11434/v1", "OLLAMA_BASE_URL"),
    Provider("lmstudio", "http://127.0.0.1:1234/v1", "LMSTUDIO_BASE_URL"),
    Provider("llamacpp", "http://127.0.0.1:8080/v1", "LLAMACPP_BASE_URL"),
    Provider("vllm", "http://127.0.0.1:8000/v1", "VLLM_BASE_URL"),
)}
KNOWN = (*PROVIDERS, "demo")

#: Local servers probed when nothing is configured: (provider, root URL), in order of preference.
LOCAL_SERVERS: tuple[tuple[str, str], ...] = (
    ("ollama", "http://127.0.0.1:11434"),
    ("lmstudio", "http://127.0.0.1:1234"),
    ("llamacpp", "http://127.0.0.1:8080"),
    ("vllm", "http://127.0.0.1:8000"),
)
PROBE_TIMEOUT = 0.3
DETECT_DEADLINE = 0.5


@dataclass(frozen=True)
class ResolvedModel:
    """The model to use, where the choice came from, and a line to show the user (or None).

    ``problems`` are the settings files' problems (when settings were read: an argument or
    ``AGENT_EXT_MODEL`` skips them), for the caller to show as well.
    """

    model: Model
    source: Source
    notice: str | None = None
    spec: str = ""
    problems: tuple[str, ...] = ()


def parse_model_spec(spec: str) -> tuple[str, str]:
    """``provider:model`` split in two; a bare model name is OpenAI's. Raises ValueError."""
    text = spec.strip()
    provider, sep, name = text.partition(":")
    provider = provider.strip().lower()
    if not sep and provider not in ("demo", "scripted"):
        provider, name = "openai", text
    if provider == "scripted":
        raise ValueError("scripted models are built in code (ScriptedModel), not from a model "
                         f"string; choose one of {', '.join(KNOWN)}.")
    if provider not in KNOWN:
        raise ValueError(f"unknown model provider {provider!r} in {text!r}; use one of "
                         f"{', '.join(KNOWN)} (as provider:model, e.g. openai:gpt-4o).")
    name = name.strip()
    if not name and provider != "demo":
        raise ValueError(f"{text!r} names no model; write {provider}:<model>.")
    return provider, name


def model_from_spec(spec: str, *, environ: Mapping[str, str] | None = None,
                    options: Mapping[str, Any] | None = None) -> Model:
    """Build the model a ``provider:model`` string names, reading keys from ``environ``.

    ``options`` are per-model settings (``inBandTools``, ``contextWindow``,
    ``maxOutputTokens``, ``temperature``) for OpenAI-compatible models.

    Raises ValueError for a malformed string and ModelError(kind="auth") when a cloud
    provider's key is missing.
    """
    env = os.environ if environ is None else environ
    provider_name, name = parse_model_spec(spec)
    if provider_name == "demo":
        from .demo import DemoModel  # noqa: PLC0415  (built only when chosen)

        return DemoModel(name or None)
    provider = PROVIDERS[provider_name]
    custom_url = env.get(provider.base_url_env, "").strip()
    key = env.get(provider.key_env, "").strip() if provider.key_env else ""
    has_token = provider.dialect == "anthropic" and bool(env.get("ANTHROPIC_AUTH_TOKEN"))
    if provider.key_env and not custom_url and not key and not has_token:
        raise ModelError(f"{provider_name}:{name} needs an API key: type `%agent key "
                         f"{provider_name}` in the notebook (or set {provider.key_env}), then "
                         "try again.", kind="auth")
    base_url = custom_url or provider.base_url
    if provider.dialect == "anthropic":
        from .anthropic_messages import AnthropicModel  # noqa: PLC0415

        return AnthropicModel(name, base_url=base_url, api_key=key or None)
    from .openai_chat import OpenAIChatModel  # noqa: PLC0415

    # Each provider reads its own key variable, so an OpenAI key never goes to another server.
    return OpenAIChatModel(name, base_url=base_url, api_key=key or None, provider=provider_name,
                           api_key_env=provider.key_env or _key_env(provider_name),
                           **_model_kwargs(options or {}))


def resolve_model(spec: str | Model | None = None, *, cwd: Path | str = ".",
                  environ: Mapping[str, str] | None = None, detect: bool = True,
                  local_servers: Sequence[tuple[str, str]] = LOCAL_SERVERS,
                  settings: Settings | None = None) -> ResolvedModel:
    """Choose the model: argument > AGENT_EXT_MODEL > project settings > user settings >
    a local server found on its standard port > the demo replay.

    ``local_servers`` lists (provider, root URL) to probe, in order of preference;
    ``settings`` replaces the settings files of ``cwd`` (project trust passes those in force).
    Raises
    ValueError for a malformed model string (naming the settings file it came from) and
    ModelError(kind="auth") when the chosen cloud provider has no key.
    """
    env = os.environ if environ is None else environ
    if spec is not None and not isinstance(spec, str):
        return ResolvedModel(spec, "argument", spec=spec.name)
    settings = settings if settings is not None else load_settings(cwd, environ=env)
    if spec is not None and spec.strip():
        return ResolvedModel(model_from_spec(spec, environ=env,
                                             options=_options(settings, spec)),
                             "argument", spec=spec.strip())
    from_env = env.get(MODEL_ENV, "").strip()
    if from_env:
        return ResolvedModel(model_from_spec(from_env, environ=env,
                                             options=_options(settings, from_env)),
                             "env", spec=from_env)
    found = settings.first("model", str)
    if found is not None:
        value, file = found
        source: Source = "user settings" if file.scope == "user" else "project settings"
        try:
            model = model_from_spec(value, environ=env, options=_options(settings, value))
        except ValueError as exc:
            raise ValueError(f"{file.path}: {exc}") from exc
        return ResolvedModel(model, source, spec=value.strip(), problems=settings.problems)
    server = detect_local_server(local_servers) if detect else None
    if server is not None and server.models:
        from .openai_chat import OpenAIChatModel  # noqa: PLC0415

        name = server.models[0]
        spec_text = f"{server.provider}:{name}"
        notice = (f"agent_ext: using {spec_text} found at {server.url} (`%agent model` lists "
                  f"the other choices; `%agent model PROVIDER:MODEL` or {MODEL_ENV} picks one)")
        model = OpenAIChatModel(name, base_url=server.url.rstrip("/") + "/v1",
                                provider=server.provider, api_key_env=_key_env(server.provider),
                                **_model_kwargs(_options(settings, spec_text)))
        return ResolvedModel(model, "detected", notice, spec_text, settings.problems)
    from .demo import DemoModel  # noqa: PLC0415

    notice = demo_notice(server if detect else None, local_servers if detect else ())
    return ResolvedModel(DemoModel(), "demo", notice, "demo", settings.problems)


#: What the local servers are called where users meet them.
SERVER_NAMES = {"ollama": "Ollama", "lmstudio": "LM Studio", "llamacpp": "llama.cpp",
                "vllm": "vLLM"}


def _ports(servers: Sequence[tuple[str, str]]) -> str:
    return ", ".join(f"{SERVER_NAMES.get(p, p)} {url.rstrip('/').rsplit(':', 1)[-1]}"
                     for p, url in servers)


def demo_notice(server: LocalServer | None,
                probed: Sequence[tuple[str, str]] = LOCAL_SERVERS) -> str:
    """Why the demo replay answers, and how to choose a real model: in the notebook first."""
    head = "agent_ext: no model is configured, so the demo replays recorded answers. "
    if server is not None:
        local = (f"{SERVER_NAMES.get(server.provider, server.provider)} answers at {server.url} "
                 "but lists no models; load one there and run `%agent model` again.")
    elif probed:
        local = (f"No local model server answered on 127.0.0.1 ({_ports(probed)}); start one "
                 "and it is found.")
    else:
        local = ""
    return head + CHOOSE_MODEL + (" " + local if local else "")


@dataclass(frozen=True)
class ModelChoices:
    """What ``%agent model`` can offer: keys present per provider (never their values), the
    local servers that answered and what they list, and the demo."""

    keys: tuple[tuple[str, str, bool], ...]
    servers: tuple[tuple[str, str, tuple[str, ...] | None], ...]

    def lines(self, current: str) -> list[str]:
        """The listing under the current model's line."""
        lines = [f"model: {current}", "choices:"]
        for provider, env, present in self.keys:
            state = (f"key set ({env}): `%agent model {provider}:<model>`" if present
                     else f"no key: `%agent key {provider}` first")
            lines.append(f"  {provider}: {state}")
        for provider, url, models in self.servers:
            if models is None:
                continue
            listed = (", ".join(f"`%agent model {provider}:{m}`" for m in models[:5])
                      + (f" and {len(models) - 5} more" if len(models) > 5 else "")
                      if models else "no models loaded")
            lines.append(f"  {SERVER_NAMES.get(provider, provider)} at {url}: {listed}")
        silent = [(p, u) for p, u, m in self.servers if m is None]
        if silent:
            lines.append(f"  no answer on 127.0.0.1 from {_ports(silent)}")
        lines.append("  demo: `%agent model demo` replays recorded sessions (no model needed)")
        return lines


def model_choices(environ: Mapping[str, str] | None = None,
                  servers: Sequence[tuple[str, str]] = LOCAL_SERVERS, *,
                  timeout: float = PROBE_TIMEOUT, deadline: float = DETECT_DEADLINE
                  ) -> ModelChoices:
    """The choices ``%agent model`` lists (see ``ModelChoices``); servers probed in parallel."""
    env = os.environ if environ is None else environ
    keys = tuple((p.name, p.key_env, bool(env.get(p.key_env, "").strip()))
                 for p in PROVIDERS.values() if p.key_env)
    return ModelChoices(keys, tuple(probe_servers(servers, timeout=timeout, deadline=deadline)))


def probe_servers(servers: Sequence[tuple[str, str]], *, timeout: float = PROBE_TIMEOUT,
                  deadline: float = DETECT_DEADLINE
                  ) -> list[tuple[str, str, tuple[str, ...] | None]]:
    """Each server with the models it lists ((): answered with none; None: no answer)."""
    if not servers:
        return []
    probes = [(i, url.rstrip("/") + path) for i, (provider, url) in enumerate(servers)
              for path in (("/api/tags", "/v1/models") if provider == "ollama"
                           else ("/v1/models",))]
    end = time.monotonic() + deadline
    pool = ThreadPoolExecutor(max_workers=len(probes), thread_name_prefix="agent_ext-detect")
    try:
        futures = [(i, pool.submit(_probe, url, timeout)) for i, url in probes]
        found = []
        for i, (provider, url) in enumerate(servers):
            names = _first_answer([f for j, f in futures if j == i], end)
            found.append((provider, url.rstrip("/"), tuple(names) if names is not None else None))
        return found
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


@dataclass(frozen=True)
class LocalServer:
    """A local model server that answered, and the models it lists (chat models first)."""

    provider: str
    url: str
    models: tuple[str, ...]


def detect_local_server(servers: Sequence[tuple[str, str]] = LOCAL_SERVERS, *,
                        timeout: float = PROBE_TIMEOUT,
                        deadline: float = DETECT_DEADLINE) -> LocalServer | None:
    """The first server in ``servers`` that lists a model, probing all of them in parallel.

    Ollama is asked ``/api/tags`` and ``/v1/models``, the others ``/v1/models``. A server that
    answers with no models is returned only when none lists any; None when none answers within
    ``deadline`` seconds.
    """
    probes = [(i, url.rstrip("/") + path) for i, (provider, url) in enumerate(servers)
              for path in (("/api/tags", "/v1/models") if provider == "ollama"
                           else ("/v1/models",))]
    if not probes:
        return None
    end = time.monotonic() + deadline
    pool = ThreadPoolExecutor(max_workers=len(probes), thread_name_prefix="agent_ext-detect")
    try:
        futures = [(i, pool.submit(_probe, url, timeout)) for i, url in probes]
        empty: LocalServer | None = None
        for i, (provider, url) in enumerate(servers):
            names = _first_answer([f for j, f in futures if j == i], end)
            if names:
                return LocalServer(provider, url.rstrip("/"), tuple(names))
            if names is not None and empty is None:
                empty = LocalServer(provider, url.rstrip("/"), ())
        return empty
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _first_answer(futures: Iterable[Future[list[str] | None]], end: float) -> list[str] | None:
    """The first non-empty model list among ``futures`` by ``end``; [] if only empty ones came."""
    pending = set(futures)
    answered: list[str] | None = None
    while pending:
        done, pending = wait(pending, timeout=max(0.0, end - time.monotonic()),
                             return_when=FIRST_COMPLETED)
        if not done:
            break
        for future in done:
            names = future.result()
            if names:
                return names
            if names is not None:
                answered = []
    return answered


def _probe(url: str, timeout: float) -> list[str] | None:
    """The model names a server lists at ``url``; None when nothing usable answers."""
    if not url.startswith(("http://", "https://")):
        return None
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: no proxy
    request = urllib.request.Request(url, headers={"Accept": "application/json"})  # noqa: S310
    try:
        with opener.open(request, timeout=timeout) as response:
            data = json.loads(response.read(1 << 20))
    except urllib.error.HTTPError as exc:
        exc.close()
        return None
    except (OSError, ValueError, http.client.HTTPException):
        return None
    return _model_names(data)


def _model_names(data: Any) -> list[str] | None:
    """Names from an OpenAI ``{"data": [{"id"}]}`` or Ollama ``{"models": [{"name"}]}`` list,
    embedding models last (they cannot chat)."""
    if not isinstance(data, dict):
        return None
    entries = data.get("data") if "data" in data else data.get("models")
    if not isinstance(entries, list):
        return None
    names = [str(e.get("id") or e.get("name") or e.get("model") or "") for e in entries
             if isinstance(e, dict)]
    names = [n for n in names if n]
    return sorted(names, key=lambda n: "embed" in n.lower())


def _options(settings: Any, spec: str) -> dict[str, Any]:
    """Per-model settings for ``spec``, with a bare model name read as OpenAI's."""
    text = spec.strip()
    return model_options(settings, text if ":" in text else f"openai:{text}")


def _model_kwargs(options: Mapping[str, Any]) -> dict[str, Any]:
    """Per-model settings as OpenAIChatModel arguments (only those set)."""
    names = {"inBandTools": "in_band_tools", "contextWindow": "context_window",
             "maxOutputTokens": "max_output_tokens", "temperature": "temperature"}
    return {names[k]: v for k, v in options.items() if k in names}


def _key_env(provider: str) -> str:
    """The key variable of a keyless local server (rarely set; a placeholder is sent otherwise)."""
    return f"{provider.upper()}_API_KEY"

"""resolve_model: precedence, provider strings, keys, and detection against real local servers."""

from __future__ import annotations

import importlib
import json
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from agent_ext.models import ScriptedModel
from agent_ext.models.base import ModelError
from agent_ext.models.config import (
    PROVIDERS,
    demo_notice,
    detect_local_server,
    model_from_spec,
    parse_model_spec,
    resolve_model,
)
from agent_ext.models.demo import DemoModel

# -- a tiny model server on 127.0.0.1 ---------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    routes: Mapping[str, Any] = {}
    delay = 0.0
    seen: list[str]

    def log_message(self, format: str, *args: Any) -> None:
        """Silent."""

    def do_GET(self) -> None:
        self.seen.append(self.path)
        time.sleep(self.delay)
        body = self.routes.get(self.path)
        payload = json.dumps(body).encode() if body is not None else b"not found"
        self.send_response(200 if body is not None else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(payload)


@contextmanager
def model_server(routes: Mapping[str, Any], delay: float = 0.0) -> Iterator[tuple[str, list[str]]]:
    """Serve ``routes`` (path -> JSON body; others 404); yields (root URL, paths requested)."""
    seen: list[str] = []
    handler = type("H", (_Handler,), {"routes": routes, "delay": delay, "seen": seen})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02})
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", seen
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def closed_url() -> str:
    """A loopback URL nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def openai_models(*ids: str) -> dict[str, Any]:
    return {"object": "list", "data": [{"id": i, "object": "model"} for i in ids]}


def ollama_tags(*names: str) -> dict[str, Any]:
    return {"models": [{"name": n, "model": n} for n in names]}


# -- recording the adapters' constructor calls --------------------------------------------------


class Built:
    """Stands in for an adapter class and records how it was constructed."""

    calls: ClassVar[list[tuple[str, str, dict[str, Any]]]] = []

    def __init__(self, model: str, **kwargs: Any) -> None:
        self.model, self.kwargs = model, kwargs
        Built.calls.append((type(self).__name__, model, kwargs))

    @property
    def name(self) -> str:
        return f"{self.kwargs.get('provider', 'anthropic')}:{self.model}"


def adapter_module(name: str) -> Any:
    return importlib.import_module(f"agent_ext.models.{name}")


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, dict[str, Any]]]:
    """Replace both adapter classes with recorders; yields the recorded constructions."""
    Built.calls = []
    monkeypatch.setattr(adapter_module("openai_chat"), "OpenAIChatModel",
                        type("OpenAIChatModel", (Built,), {}))
    monkeypatch.setattr(adapter_module("anthropic_messages"), "AnthropicModel",
                        type("AnthropicModel", (Built,), {}))
    return Built.calls


# -- precedence ---------------------------------------------------------------------------------

LAYERS = ("argument", "env", "project settings", "user settings", "detected", "demo")


@pytest.mark.parametrize("top", LAYERS)
def test_precedence_table(top: str, tmp_path: Path, built: list[Any]) -> None:
    """Every layer below ``top`` is present too; ``top`` wins."""
    below = LAYERS[LAYERS.index(top):]
    project, config = tmp_path / "project", tmp_path / "config"
    env = {"HOME": str(tmp_path / "home"), "AGENT_EXT_CONFIG_DIR": str(config)}
    if "env" in below:
        env["AGENT_EXT_MODEL"] = "ollama:from-env"
    if "project settings" in below:
        (project / ".agent_ext").mkdir(parents=True)
        (project / ".agent_ext/settings.json").write_text('{"model": "ollama:from-project"}')
    if "user settings" in below:
        config.mkdir()
        (config / "settings.json").write_text('{"model": "ollama:from-user"}')
    spec = "ollama:from-argument" if top == "argument" else None
    routes = {"/api/tags": ollama_tags("from-detection")} if "detected" in below else {}
    with model_server(routes) as (url, _):
        r = resolve_model(spec, cwd=project, environ=env, local_servers=[("ollama", url)])
    assert r.source == top
    if top == "demo":
        assert isinstance(r.model, DemoModel)
        assert r.notice == demo_notice(None, [("ollama", url)])
        return
    expected = {"argument": "from-argument", "env": "from-env", "project settings":
                "from-project", "user settings": "from-user", "detected": "from-detection"}[top]
    assert r.model.name == f"ollama:{expected}"
    assert r.spec == f"ollama:{expected}"
    assert (r.notice is not None) == (top == "detected")


def test_local_project_settings_count_as_project(tmp_path: Path, built: list[Any]) -> None:
    (tmp_path / ".agent_ext").mkdir()
    (tmp_path / ".agent_ext/settings.json").write_text('{"model": "ollama:shared"}')
    (tmp_path / ".agent_ext/settings.local.json").write_text('{"model": "ollama:mine"}')
    r = resolve_model(cwd=tmp_path, environ={"HOME": str(tmp_path)}, detect=False)
    assert (r.source, r.model.name) == ("project settings", "ollama:mine")


def test_a_model_object_is_used_as_given() -> None:
    model = ScriptedModel(label="mine")
    r = resolve_model(model, environ={"AGENT_EXT_MODEL": "demo"})
    assert r.model is model
    assert (r.source, r.spec, r.notice) == ("argument", "mine", None)


def test_blank_values_fall_through(tmp_path: Path) -> None:
    r = resolve_model("  ", cwd=tmp_path, environ={"AGENT_EXT_MODEL": " ", "HOME": str(tmp_path)},
                      detect=False)
    assert r.source == "demo"


def test_settings_problems_travel_with_the_choice(tmp_path: Path) -> None:
    (tmp_path / ".agent_ext").mkdir()
    (tmp_path / ".agent_ext/settings.json").write_text('{"model": ')
    r = resolve_model(cwd=tmp_path, environ={"HOME": str(tmp_path / "h")}, detect=False)
    assert r.source == "demo"
    assert len(r.problems) == 1
    assert "settings.json:1:" in r.problems[0]


def test_a_bad_model_in_settings_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / ".agent_ext/settings.json"
    path.parent.mkdir()
    path.write_text('{"model": "nowhere:thing"}')
    with pytest.raises(ValueError, match="unknown model provider 'nowhere'") as info:
        resolve_model(cwd=tmp_path, environ={"HOME": str(tmp_path / "h")})
    assert str(info.value).startswith(str(path))


def test_detect_false_probes_nothing(tmp_path: Path) -> None:
    with model_server({"/api/tags": ollama_tags("m")}) as (url, seen):
        r = resolve_model(cwd=tmp_path, environ={"HOME": str(tmp_path)}, detect=False,
                          local_servers=[("ollama", url)])
    assert r.source == "demo"
    assert seen == []


# -- provider strings ---------------------------------------------------------------------------

KEYS = {p.key_env: f"key-{p.name}" for p in PROVIDERS.values() if p.key_env}

PROVIDER_CASES = [
    ("openai:gpt-4o", "OpenAIChatModel", "gpt-4o", "openai", "https://api.openai.com/v1",
     "key-openai"),
    ("gpt-4o", "OpenAIChatModel", "gpt-4o", "openai", "https://api.openai.com/v1", "key-openai"),
    ("anthropic:claude-sonnet-4-5", "AnthropicModel", "claude-sonnet-4-5", None,
     "https://api.anthropic.com", "key-anthropic"),
    ("ollama:qwen3:8b", "OpenAIChatModel", "qwen3:8b", "ollama", "http://127.0.0.1:11434/v1",
     None),
    ("lmstudio:qwen2.5-7b", "OpenAIChatModel", "qwen2.5-7b", "lmstudio",
     "http://127.0.0.1:1234/v1", None),
    ("llamacpp:local", "OpenAIChatModel", "local", "llamacpp", "http://127.0.0.1:8080/v1", None),
    ("vllm:Qwen/Qwen3-8B", "OpenAIChatModel", "Qwen/Qwen3-8B", "vllm",
     "http://127.0.0.1:8000/v1", None),
    ("deepseek:deepseek-chat", "OpenAIChatModel", "deepseek-chat", "deepseek",
     "https://api.deepseek.com/v1", "key-deepseek"),
    ("dashscope:qwen-plus", "OpenAIChatModel", "qwen-plus", "dashscope",
     "https://dashscope-intl.aliyuncs.com/compatible-mode/v1", "key-dashscope"),
    ("openrouter:meta-llama/llama-3.3-70b-instruct", "OpenAIChatModel",
     "meta-llama/llama-3.3-70b-instruct", "openrouter", "https://openrouter.ai/api/v1",
     "key-openrouter"),
    ("gemini:gemini-2.5-flash", "OpenAIChatModel", "gemini-2.5-flash", "gemini",
     "https://generativelanguage.googleapis.com/v1beta/openai/", "key-gemini"),
    ("OpenAI: gpt-4o ", "OpenAIChatModel", "gpt-4o", "openai", "https://api.openai.com/v1",
     "key-openai"),
]


@pytest.mark.parametrize(("spec", "cls", "model", "provider", "base_url", "key"), PROVIDER_CASES)
def test_provider_strings_build_the_right_adapter(spec: str, cls: str, model: str,
                                                  provider: str | None, base_url: str,
                                                  key: str | None, built: list[Any]) -> None:
    model_from_spec(spec, environ=KEYS)
    ((got_cls, got_model, kwargs),) = built
    expected: dict[str, Any] = {"base_url": base_url, "api_key": key}
    if provider is not None:
        expected["provider"] = provider
        expected["api_key_env"] = PROVIDERS[provider].key_env or f"{provider.upper()}_API_KEY"
    assert (got_cls, got_model, kwargs) == (cls, model, expected)


@pytest.mark.parametrize("spec", [c[0] for c in PROVIDER_CASES])
def test_provider_strings_construct_the_real_adapters(spec: str) -> None:
    openai_chat = adapter_module("openai_chat")
    if spec.startswith("anthropic"):
        pytest.importorskip("anthropic", reason="the anthropic extra is not installed")
        cls = adapter_module("anthropic_messages").AnthropicModel
    else:
        cls = openai_chat.OpenAIChatModel
    model = model_from_spec(spec, environ=KEYS)
    assert isinstance(model, cls)
    provider, name = parse_model_spec(spec)
    assert model.name == f"{provider}:{name}"


@pytest.mark.parametrize(("provider", "var"), [
    ("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY"),
    ("deepseek", "DEEPSEEK_API_KEY"), ("dashscope", "DASHSCOPE_API_KEY"),
    ("openrouter", "OPENROUTER_API_KEY"), ("gemini", "GEMINI_API_KEY"),
])
def test_missing_cloud_key_says_which_variable_to_set(provider: str, var: str) -> None:
    with pytest.raises(ModelError) as info:
        resolve_model(f"{provider}:some-model", environ={var: "  "})
    assert info.value.kind == "auth"
    message = str(info.value)
    assert f"set {var}" in message
    assert "%agent key" in message
    assert message.count(". ") == 0 and message.endswith(".")


def test_base_url_overrides_make_the_key_optional(built: list[Any]) -> None:
    model_from_spec("openai:local-model", environ={"OPENAI_BASE_URL": "http://10.0.0.5:9000/v1"})
    model_from_spec("anthropic:claude-x", environ={"ANTHROPIC_BASE_URL": "http://proxy:8082",
                                                   "ANTHROPIC_API_KEY": "k"})
    model_from_spec("ollama:m", environ={"OLLAMA_BASE_URL": "http://gpu-box:11434/v1"})
    assert [(c, kw["base_url"], kw["api_key"]) for c, _, kw in built] == [
        ("OpenAIChatModel", "http://10.0.0.5:9000/v1", None),
        ("AnthropicModel", "http://proxy:8082", "k"),
        ("OpenAIChatModel", "http://gpu-box:11434/v1", None),
    ]


def test_anthropic_auth_token_counts_as_a_key(built: list[Any]) -> None:
    model_from_spec("anthropic:claude-x", environ={"ANTHROPIC_AUTH_TOKEN": "t"})
    assert built[0][2]["api_key"] is None


def test_unknown_provider_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown model provider 'mistral'") as info:
        resolve_model("mistral:large", environ={})
    for name in ("openai", "anthropic", "ollama", "lmstudio", "llamacpp", "vllm", "deepseek",
                 "dashscope", "openrouter", "gemini", "demo"):
        assert name in str(info.value)


@pytest.mark.parametrize(("spec", "match"), [
    ("scripted", "built in code"), ("scripted:x", "built in code"), ("openai:", "names no model"),
    ("demo:no-such-session", "no demo session named"),
])
def test_strings_that_cannot_name_a_model(spec: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        model_from_spec(spec, environ={})


def test_demo_strings(tmp_path: Path) -> None:
    plain = resolve_model("demo", environ={})
    assert isinstance(plain.model, DemoModel)
    assert (plain.source, plain.notice) == ("argument", None)
    fixed = resolve_model(cwd=tmp_path, environ={"AGENT_EXT_MODEL": "demo:read_file"})
    assert isinstance(fixed.model, DemoModel)
    assert (fixed.source, fixed.model.session) == ("env", "read_file")


# -- detection ----------------------------------------------------------------------------------


def test_detects_ollama_and_says_so(tmp_path: Path) -> None:
    adapter_module("openai_chat")
    with model_server({"/api/tags": ollama_tags("qwen3:latest", "llama3.2")}) as (url, seen):
        r = resolve_model(cwd=tmp_path, environ={"HOME": str(tmp_path)},
                          local_servers=[("ollama", url)])
    assert r.source == "detected"
    assert r.model.name == "ollama:qwen3:latest"
    assert r.notice == (f"agent_ext: using ollama:qwen3:latest found at {url} (`%agent model` "
                        "lists the other choices; `%agent model PROVIDER:MODEL` or "
                        "AGENT_EXT_MODEL picks one)")
    assert "/api/tags" in seen


def test_detected_model_is_built_for_the_servers_openai_endpoint(tmp_path: Path,
                                                                 built: list[Any]) -> None:
    with model_server({"/v1/models": openai_models("qwen2.5-coder")}) as (url, _):
        resolve_model(cwd=tmp_path, environ={"HOME": str(tmp_path)},
                      local_servers=[("lmstudio", url)])
    assert built == [("OpenAIChatModel", "qwen2.5-coder",
                      {"base_url": f"{url}/v1", "provider": "lmstudio",
                       "api_key_env": "LMSTUDIO_API_KEY"})]


def test_ollama_answering_only_the_openai_route_is_found() -> None:
    with model_server({"/v1/models": openai_models("gemma3")}) as (url, _):
        server = detect_local_server([("ollama", url)])
    assert server is not None
    assert (server.provider, server.models) == ("ollama", ("gemma3",))


def test_servers_are_preferred_in_order_even_when_slower() -> None:
    with model_server({"/v1/models": openai_models("first")}, delay=0.15) as (slow, _), \
            model_server({"/v1/models": openai_models("second")}) as (fast, _):
        server = detect_local_server([("closed", closed_url()), ("lmstudio", slow),
                                      ("vllm", fast)])
    assert server is not None
    assert (server.provider, server.url, server.models) == ("lmstudio", slow, ("first",))


def test_embedding_models_are_listed_last() -> None:
    with model_server({"/v1/models": openai_models("text-embedding-nomic", "qwen3-4b")}) as (url, _):
        server = detect_local_server([("lmstudio", url)])
    assert server is not None
    assert server.models == ("qwen3-4b", "text-embedding-nomic")


def test_non_model_servers_are_ignored() -> None:
    with model_server({"/v1/models": {"hello": "world"}}) as (odd, _), \
            model_server({"/v1/models": openai_models("m")}) as (good, _):
        server = detect_local_server([("llamacpp", odd), ("vllm", good)])
    assert server is not None
    assert server.provider == "vllm"


def test_a_server_without_models_leads_to_the_demo_with_a_hint(tmp_path: Path) -> None:
    with model_server({"/api/tags": ollama_tags()}) as (url, _):
        r = resolve_model(cwd=tmp_path, environ={"HOME": str(tmp_path)},
                          local_servers=[("ollama", url)])
    assert r.source == "demo"
    assert r.notice is not None
    assert f"Ollama answers at {url} but lists no models" in r.notice
    assert "AGENT_EXT_MODEL" in r.notice


def test_nothing_listening_falls_back_to_the_demo_quickly(tmp_path: Path) -> None:
    servers = [(name, closed_url()) for name in ("ollama", "lmstudio", "llamacpp", "vllm")]
    start = time.monotonic()
    r = resolve_model(cwd=tmp_path, environ={"HOME": str(tmp_path)}, local_servers=servers)
    assert time.monotonic() - start < 2
    assert r.source == "demo"
    assert r.notice == demo_notice(None, servers)


def test_a_server_that_never_answers_does_not_hold_detection_up() -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        start = time.monotonic()
        assert detect_local_server([("ollama", url), ("vllm", url)]) is None
        assert time.monotonic() - start < 2
        time.sleep(0.4)  # let the probes time out before the socket closes


def test_an_openai_key_never_goes_to_another_provider() -> None:
    env = {"OPENAI_API_KEY": "sk-openai-secret", "DEEPSEEK_BASE_URL": "http://127.0.0.1:9/v1"}
    model = model_from_spec("deepseek:deepseek-chat", environ=env)
    assert model.api_key_env == "DEEPSEEK_API_KEY"  # type: ignore[attr-defined]
    local = model_from_spec("ollama:qwen3", environ=env)
    assert local.api_key_env == "OLLAMA_API_KEY"  # type: ignore[attr-defined]

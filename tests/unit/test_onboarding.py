"""Onboarding to a real model: every "no model" text names the in-notebook way first, and
``%agent model``'s listing shows what it can see (keys present, never their values; local
servers that answer, probed on 127.0.0.1; the demo)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_ext.models.base import ModelError
from agent_ext.models.config import (
    LOCAL_SERVERS,
    demo_notice,
    model_choices,
    model_from_spec,
    resolve_model,
)
from agent_ext.models.demo import END_TEXT, load_sessions

from .test_model_config import closed_url, model_server, ollama_tags, openai_models

KEY_FIRST = ("`%agent key openai`", "`%agent model openai:gpt-4o`", "AGENT_EXT_MODEL")


def in_order(text: str, *pieces: str) -> bool:
    at = [text.find(p) for p in pieces]
    return -1 not in at and at == sorted(at)


def test_the_demo_notice_names_the_notebook_way_then_the_environment() -> None:
    servers = [(name, closed_url()) for name, _ in LOCAL_SERVERS]
    text = demo_notice(None, servers)
    assert in_order(text, *KEY_FIRST), text
    ports = [url.rsplit(":", 1)[1] for _, url in servers]
    assert ("No local model server answered on 127.0.0.1 (Ollama {}, LM Studio {}, llama.cpp {}, "
            "vLLM {})".format(*ports)) in text


def test_the_shipped_servers_are_named_with_their_standard_ports() -> None:
    text = demo_notice(None)
    assert "(Ollama 11434, LM Studio 1234, llama.cpp 8080, vLLM 8000)" in text


def test_a_server_with_no_model_loaded_is_named(tmp_path: Path) -> None:
    with model_server({"/api/tags": ollama_tags()}) as (url, _):
        r = resolve_model(cwd=tmp_path, environ={"HOME": str(tmp_path)},
                          local_servers=[("ollama", url)])
    assert r.notice is not None and in_order(r.notice, *KEY_FIRST)
    assert f"Ollama answers at {url} but lists no models; load one there" in r.notice


@pytest.mark.parametrize(("spec", "env"), [("openai:gpt-4o", "OPENAI_API_KEY"),
                                          ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
                                          ("gemini:gemini-2.5-pro", "GEMINI_API_KEY")])
def test_a_missing_key_says_what_to_type_first(spec: str, env: str) -> None:
    with pytest.raises(ModelError) as caught:
        model_from_spec(spec, environ={})
    provider = spec.partition(":")[0]
    assert in_order(str(caught.value), f"`%agent key {provider}`", env)


def test_the_demo_end_and_its_unknown_prompt_answer_name_the_notebook_way() -> None:
    assert in_order(END_TEXT, *KEY_FIRST)
    unknown = load_sessions()["default"].steps
    assert len(unknown) == 1 and not unknown[0].tool_calls
    assert in_order(unknown[0].text, "`%agent key openai`", "`%agent model openai:gpt-4o`")


def test_the_listing_shows_which_keys_are_set_but_never_a_key() -> None:
    secret = "sk-" + "listing" * 4
    with model_server({"/v1/models": openai_models("qwen3-8b", "text-embedding-x")}) as (up, _), \
            model_server({"/api/tags": ollama_tags()}) as (empty, _):
        down = closed_url()
        choices = model_choices({"OPENAI_API_KEY": secret, "ANTHROPIC_API_KEY": "  "},
                                [("lmstudio", up), ("ollama", empty), ("vllm", down)])
    lines = choices.lines("demo (replay)")
    text = "\n".join(lines)
    assert secret not in text
    assert lines[:2] == ["model: demo (replay)", "choices:"]
    assert "  openai: key set (OPENAI_API_KEY): `%agent model openai:<model>`" in lines
    assert "  anthropic: no key: `%agent key anthropic` first" in lines  # blank is not a key
    assert (f"  LM Studio at {up}: `%agent model lmstudio:qwen3-8b`, "
            "`%agent model lmstudio:text-embedding-x`") in lines
    assert f"  Ollama at {empty}: no models loaded" in lines
    assert f"  no answer on 127.0.0.1 from vLLM {down.rsplit(':', 1)[1]}" in lines
    assert lines[-1].startswith("  demo: `%agent model demo`")

"""tool_search backends: the registry's plug point, the setting that chooses one, and the
embedding backend's vector cache (with a small deterministic encoder in place of a real one)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from agent_ext.agent.agent import TOOL_SEARCH_ENV, choose_tool_search
from agent_ext.core import ExecControl, Registry, ToolContext, search_embed
from agent_ext.core.search import SearchDoc, SearchHit, SearchIndex, SearchOutcome
from agent_ext.settings import load_settings
from agent_ext.tools import register_builtins

from .helpers import echo_tool


def registry() -> Registry:
    reg = Registry()
    register_builtins(reg)
    reg.register_external("weather", echo_tool("get_forecast", "Forecast for a city."))
    reg.register_external("github", echo_tool("create_issue", "Create a new issue."))
    return reg


class Recording:
    """A backend that ranks tools by name order and records each build and search thread."""

    def __init__(self) -> None:
        self.builds: list[list[str]] = []
        self.threads: list[str] = []

    def __call__(self, docs: list[SearchDoc]) -> Recording:
        self.builds.append([d.name for d in docs])
        return self

    def search(self, query: str, limit: int = 5) -> SearchOutcome:
        self.threads.append(threading.current_thread().name)
        names = sorted(self.builds[-1])
        return SearchOutcome([SearchHit(n, 1.0) for n in names[:limit]], len(names))


async def test_a_plugged_backend_answers_tool_search_off_the_event_loop() -> None:
    reg = registry()
    backend = Recording()
    reg.search_backend = backend
    assert not reg.search_is_local
    built = reg.get("tool_search").build({"query": "anything", "max_results": 1},
                                         ToolContext(registry=reg))
    result = await built.execute(ExecControl())  # type: ignore[union-attr]
    assert "mcp__github__create_issue" in result.text
    assert backend.threads and backend.threads[0] != threading.current_thread().name
    assert reg.revealed == {"mcp__github__create_issue"}


def test_the_index_is_rebuilt_when_tools_change_and_when_the_backend_changes() -> None:
    reg = registry()
    backend = Recording()
    reg.search_backend = backend
    reg.search("x")
    reg.search("y")
    assert len(backend.builds) == 1
    reg.register_external("slack", echo_tool("post_message", "Post a message."))
    reg.search("x")
    assert len(backend.builds) == 2 and "mcp__slack__post_message" in backend.builds[-1]
    reg.search_backend = SearchIndex
    assert reg.search_is_local
    assert reg.search("weather forecast").hits[0].name == "mcp__weather__get_forecast"


def write_settings(root: Path, value: Any) -> None:
    (root / ".agent_ext").mkdir(exist_ok=True)
    (root / ".agent_ext" / "settings.json").write_text(json.dumps({"toolSearch": value}))


def test_lexical_keeps_the_pure_python_index(tmp_path: Path) -> None:
    reg = registry()
    assert choose_tool_search(reg, tmp_path, {TOOL_SEARCH_ENV: "lexical"}) is None
    assert reg.search_is_local


def test_an_unknown_choice_is_reported_and_falls_back(tmp_path: Path) -> None:
    reg = registry()
    notice = choose_tool_search(reg, tmp_path, {TOOL_SEARCH_ENV: "vectors"})
    assert notice and "'vectors'" in notice and "auto, lexical, embed" in notice
    assert reg.search_is_local
    # a settings file's bad value is reported once, among the settings problems
    write_settings(tmp_path, "fuzzy")
    env = {"AGENT_EXT_CONFIG_DIR": str(tmp_path / "u")}
    assert choose_tool_search(reg, tmp_path, env) is None and reg.search_is_local
    problems = load_settings(tmp_path, environ=env).problems
    assert [p for p in problems if '"toolSearch"' in p and "settings.json:1" in p]
    write_settings(tmp_path, "Lexical")
    assert not load_settings(tmp_path, environ=env).problems


@pytest.mark.parametrize("how", ["env", "settings"])
def test_embed_is_used_when_the_extra_is_installed_and_reported_when_not(
        tmp_path: Path, how: str) -> None:
    reg = registry()
    env = {"AGENT_EXT_CONFIG_DIR": str(tmp_path / "u")}
    if how == "env":
        env[TOOL_SEARCH_ENV] = "embed"
    else:
        write_settings(tmp_path, "embed")
    notice = choose_tool_search(reg, tmp_path, env)
    if search_embed.available():
        assert notice is None and isinstance(reg.search_backend, search_embed.EmbeddingBackend)
    else:
        assert notice and "%pip install 'agent-ext[embed]'" in notice and reg.search_is_local


def test_auto_is_quiet_either_way(tmp_path: Path) -> None:
    reg = registry()
    assert choose_tool_search(reg, tmp_path, {"AGENT_EXT_CONFIG_DIR": str(tmp_path)}) is None
    assert reg.search_is_local is not search_embed.available()


class BagOfWords:
    """A deterministic encoder with the sentence-transformers ``encode`` shape."""

    def __init__(self) -> None:
        self.encoded: list[str] = []

    def encode(self, texts: list[str], **_: Any) -> Any:
        np = pytest.importorskip("numpy")
        self.encoded.extend(texts)
        out = np.zeros((len(texts), 64), dtype="float32")
        for row, text in enumerate(texts):
            for word in text.lower().replace(":", " ").split():
                out[row, sum(map(ord, word)) % 64] += 1.0
            norm = float(np.linalg.norm(out[row])) or 1.0
            out[row] /= norm
        return out


def test_the_embedding_backend_encodes_each_tool_once() -> None:
    pytest.importorskip("numpy")
    model = BagOfWords()
    backend = search_embed.EmbeddingBackend(model=model)
    reg = registry()
    reg.search_backend = backend
    assert reg.search("forecast for a city").hits[0].name == "mcp__weather__get_forecast"
    first = len(model.encoded)
    reg.register_external("slack", echo_tool("post_message", "Post a message."))
    assert reg.search("post a message").hits[0].name == "mcp__slack__post_message"
    tool_texts = [t for t in model.encoded[first:] if ":" in t]
    assert len(tool_texts) == 1 and "post message" in tool_texts[0]


def tool_texts(model: BagOfWords) -> list[str]:
    return [t for t in model.encoded if ":" in t]


def test_a_new_kernel_reuses_the_tool_vectors_an_earlier_one_saved(tmp_path: Path) -> None:
    pytest.importorskip("numpy")
    saved = tmp_path / "cache" / "vectors-bag.npz"
    first = BagOfWords()
    reg = registry()
    reg.search_backend = search_embed.EmbeddingBackend(model=first, vectors_file=saved)
    expected = [h.name for h in reg.search("forecast for a city").hits]
    assert tool_texts(first) and sorted(search_embed.load_vectors(saved)) == sorted(
        tool_texts(first))
    again = BagOfWords()
    reg = registry()
    reg.search_backend = search_embed.EmbeddingBackend(model=again, vectors_file=saved)
    assert [h.name for h in reg.search("forecast for a city").hits] == expected
    assert tool_texts(again) == [] and again.encoded == ["forecast for a city"]


def test_a_damaged_vector_file_is_encoded_afresh_and_mended(tmp_path: Path) -> None:
    np = pytest.importorskip("numpy")
    saved = tmp_path / "vectors-bag.npz"
    saved.write_bytes(b"PK\x03\x04 cut short")
    model = BagOfWords()
    reg = registry()
    reg.search_backend = search_embed.EmbeddingBackend(model=model, vectors_file=saved)
    assert reg.search("forecast for a city").hits[0].name == "mcp__weather__get_forecast"
    assert sorted(search_embed.load_vectors(saved)) == sorted(tool_texts(model))
    with saved.open("wb") as out:  # a well-formed archive of the wrong shape
        np.savez(out, texts=np.array(["a", "b"]), vectors=np.ones(2, dtype="float32"))
    assert search_embed.load_vectors(saved) == {}


def test_the_vector_file_merges_kernels_and_keeps_the_newest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    np = pytest.importorskip("numpy")
    saved = tmp_path / "vectors.npz"
    one = np.ones(4, dtype="float32")
    search_embed.save_vectors(saved, {"a": one})
    search_embed.save_vectors(saved, {"b": 2 * one})  # another kernel, which never saw "a"
    merged = search_embed.load_vectors(saved)
    assert list(merged) == ["a", "b"] and float(merged["b"][0]) == 2.0
    monkeypatch.setattr(search_embed, "MAX_KEPT_VECTORS", 2)
    search_embed.save_vectors(saved, {"c": 3 * one})
    assert list(search_embed.load_vectors(saved)) == ["b", "c"]
    assert [p.name for p in tmp_path.iterdir()] == ["vectors.npz"]


def test_an_unwritable_vector_file_is_passed_over(tmp_path: Path) -> None:
    np = pytest.importorskip("numpy")
    blocker = tmp_path / "file"
    blocker.write_text("")
    search_embed.save_vectors(blocker / "vectors.npz", {"a": np.ones(4, dtype="float32")})
    assert search_embed.load_vectors(blocker / "vectors.npz") == {}


def test_the_encoder_weight_sets_how_much_similarity_counts() -> None:
    pytest.importorskip("numpy")
    docs = [SearchDoc("mcp__files__remove_file", "Remove a file from storage.", server="files"),
            SearchDoc("mcp__files__file_info", "Details of a file.", server="files")]
    query = "file details of"
    plain = search_embed.EmbeddingSearchIndex(docs, model=BagOfWords(), weight=0.0)
    hits = plain.search(query).hits
    assert [h.name for h in hits] == [h.name for h in SearchIndex(docs).search(query).hits]
    assert hits[0].score == 1.0  # the lexical score alone, scaled to the best
    heavy = search_embed.EmbeddingSearchIndex(docs, model=BagOfWords(), weight=50.0)
    top = heavy.search(query).hits
    assert top[0].name == "mcp__files__file_info" and top[0].score > 20


@pytest.mark.skipif(not search_embed.available(), reason="needs the embed extra")
def test_the_default_encoder_ranks_a_paraphrase() -> None:
    reg = registry()
    reg.register_external("weather", echo_tool("get_alerts", "Severe weather warnings in force."))
    reg.search_backend = search_embed.EmbeddingBackend()
    hits = [h.name for h in reg.search("will it rain in Paris tomorrow").hits]
    assert hits[0] == "mcp__weather__get_forecast"


def test_the_catalogue_search_stays_on_the_pure_python_index() -> None:
    reg = registry()
    backend = Recording()
    reg.search_backend = backend
    hits = reg.search("weather forecast", everything=True).hits
    assert hits[0].name == "mcp__weather__get_forecast"
    assert backend.builds == []


async def test_an_agent_reports_an_impossible_search_choice_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_ext.agent import Agent
    from agent_ext.agent import events as ev
    from agent_ext.models import ScriptedModel

    monkeypatch.setenv(TOOL_SEARCH_ENV, "semantic")
    agent = Agent(ScriptedModel(["one", "two"]), cwd=tmp_path, plugins=False, mcp=False)
    assert agent.registry.search_is_local
    notices: list[str] = []

    def sink(event: ev.Event) -> None:
        if isinstance(event, ev.Notice):
            notices.append(event.text)

    await agent.run("hi", on_event=sink)
    await agent.run("again", on_event=sink)
    await agent.aclose()
    expected = (f"{TOOL_SEARCH_ENV}: tool search 'semantic' is not one of auto, lexical, embed; "
                "the pure-Python search is used.")
    assert [n for n in notices if "'semantic'" in n] == [expected]


def test_a_tool_registered_while_the_index_builds_is_not_left_out() -> None:
    reg = registry()

    def factory() -> Any:
        # registering another tool while this one loads is what an MCP tools/list_changed
        # does while a search runs in a worker thread
        reg.register_external("slack", echo_tool("post_message", "Post a message."))
        return echo_tool("lazy_helper", "Helps lazily.")

    reg.register_lazy("lazy_helper", factory, defer=True)
    hits = [h.name for h in reg.search("post a message").hits]
    assert hits and hits[0] == "mcp__slack__post_message"


class Broken:
    """A backend whose model cannot load, as a broken torch install would fail."""

    def __call__(self, docs: list[SearchDoc]) -> Broken:
        raise OSError("libtorch_cpu.so: cannot open shared object file")

    def search(self, query: str, limit: int = 5) -> SearchOutcome:
        raise AssertionError("never built")


async def test_a_failing_backend_gives_way_to_the_pure_python_search() -> None:
    reg = registry()
    reg.search_backend = Broken()
    shown: list[str] = []
    built = reg.get("tool_search").build({"query": "weather forecast"},
                                         ToolContext(registry=reg))
    result = await built.execute(ExecControl(on_output=shown.append))  # type: ignore[union-attr]
    assert "mcp__weather__get_forecast" in result.text
    assert "libtorch_cpu.so" in result.text and shown and "pure-Python" in shown[0]
    assert reg.search_is_local


def test_the_registry_itself_falls_back_and_says_so_once() -> None:
    reg = registry()
    reg.search_backend = Broken()
    assert reg.search("weather forecast").hits[0].name == "mcp__weather__get_forecast"
    assert reg.search_is_local
    notice = reg.pop_search_notice()
    assert notice is not None and "libtorch_cpu.so" in notice
    assert reg.pop_search_notice() is None

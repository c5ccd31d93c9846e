"""tool_search backends: the registry's plug point, the setting that chooses one, and the
semantic backend (with a small table in place of the shipped one, and the shipped one)."""

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


PIECES = ["[PAD]", "rain", "fore", "##cast", "weather", "city", "post", "message", "##s", "umbrella"]


def write_table(path: Path, vectors: Any) -> Path:
    np = pytest.importorskip("numpy")
    scale = np.abs(vectors).max(axis=1) / 127.0
    scale[scale == 0] = 1.0
    np.savez(path, pieces=np.array(PIECES), vectors=np.round(vectors / scale[:, None]).astype(
        np.int8), scale=scale.astype(np.float32))
    return path


@pytest.fixture
def encoder(tmp_path: Path) -> search_embed.StaticEncoder:
    """A table where rain, forecast, weather and umbrella share a direction, as a distilled
    table puts words of one topic together."""
    np = pytest.importorskip("numpy")
    vectors = np.eye(len(PIECES), 4, dtype=np.float64) * 0.1
    for piece in ("rain", "fore", "##cast", "weather", "umbrella"):
        vectors[PIECES.index(piece)] = [1.0, 0.1, 0.0, 0.0]
    for piece in ("post", "message", "city", "##s"):
        vectors[PIECES.index(piece)] = [0.0, 0.0, 1.0, 0.2]
    return search_embed.StaticEncoder(write_table(tmp_path / "table.npz", vectors))


def test_accents_are_stripped_as_the_encoder_does() -> None:
    assert search_embed.strip_accents("Café Forecast") == "Cafe Forecast"


def test_word_pieces_take_the_longest_piece_first() -> None:
    vocab = {p: i for i, p in enumerate(PIECES)}
    assert search_embed.word_pieces("forecast", vocab) == [2, 3]
    assert search_embed.word_pieces("messages", vocab) == [7, 8]
    assert search_embed.word_pieces("snow", vocab) == []


def test_the_encoder_averages_pieces_into_unit_vectors(
        encoder: search_embed.StaticEncoder) -> None:
    np = pytest.importorskip("numpy")
    rows = encoder.encode(["get_forecast", "Umbrellá", "unknown words only"])
    assert float(np.linalg.norm(rows[0])) == pytest.approx(1.0, abs=1e-5)
    assert float(rows[0] @ rows[1]) > 0.95
    assert not rows[2].any()


def test_a_damaged_table_says_to_reinstall(tmp_path: Path) -> None:
    np = pytest.importorskip("numpy")
    cut = tmp_path / "cut.npz"
    cut.write_bytes(b"PK\x03\x04 cut short")
    with pytest.raises(search_embed.TableError, match="Reinstall agent-ext"):
        search_embed.StaticEncoder(cut)
    odd = tmp_path / "odd.npz"
    np.savez(odd, pieces=np.array(["a", "b"]), vectors=np.ones((3, 2), dtype=np.int8),
             scale=np.ones(3, dtype=np.float32))
    with pytest.raises(search_embed.TableError, match="damaged"):
        search_embed.StaticEncoder(odd)


def test_similarity_reaches_a_tool_that_shares_no_word(
        encoder: search_embed.StaticEncoder) -> None:
    docs = [SearchDoc("mcp__weather__get_forecast", "Forecast for a city.", server="weather"),
            SearchDoc("mcp__chat__post_message", "Post a message.", server="chat")]
    index = search_embed.EmbeddingSearchIndex(docs, encoder=encoder)
    assert SearchIndex(docs).search("umbrella").hits == []
    outcome = index.search("umbrella")
    assert [h.name for h in outcome.hits] == ["mcp__weather__get_forecast"]
    assert outcome.total_matches == 1


def test_a_query_word_reaches_its_nearest_catalogue_words(
        encoder: search_embed.StaticEncoder) -> None:
    docs = [SearchDoc("mcp__weather__get_forecast", "Forecast.", server="weather"),
            SearchDoc("mcp__chat__post_message", "Post a message.", server="chat")]
    index = search_embed.NeighbourIndex(docs, encoder)
    near = index.neighbours("umbrella")
    assert set(near) >= {"forecast", "weather"} and "message" not in near
    assert all(0 < v <= search_embed.NEIGHBOUR + 1e-6 for v in near.values())
    assert index.variants("forecast")["forecast"] == 1.0  # its own word stays surest
    assert index.search("umbrella").hits[0].name == "mcp__weather__get_forecast"


def test_the_weight_sets_how_much_similarity_counts(
        encoder: search_embed.StaticEncoder) -> None:
    docs = [SearchDoc("mcp__chat__post_city", "Post a city.", server="chat"),
            SearchDoc("mcp__weather__rain", "Rain.", server="weather")]
    query = "city rain forecast"
    plain = search_embed.EmbeddingSearchIndex(docs, encoder=encoder, weight=0.0)
    hits = plain.search(query).hits
    assert [h.name for h in hits] == [h.name for h in SearchIndex(docs).search(query).hits]
    assert hits[0].score == 1.0  # the lexical score alone, scaled to the best
    heavy = search_embed.EmbeddingSearchIndex(docs, encoder=encoder, weight=50.0)
    assert heavy.search(query).hits[0].name == "mcp__weather__rain"


def test_the_backend_shares_its_encoder_across_rebuilds(
        encoder: search_embed.StaticEncoder) -> None:
    reg = registry()
    reg.search_backend = search_embed.EmbeddingBackend(encoder=encoder)
    assert reg.search("forecast for a city").hits[0].name == "mcp__weather__get_forecast"
    reg.register_external("chat", echo_tool("post_message", "Post a message."))
    assert reg.search("post a message").hits[0].name == "mcp__chat__post_message"


@pytest.mark.skipif(not search_embed.available(), reason="needs the embed extra")
def test_the_shipped_table_ranks_a_paraphrase() -> None:
    reg = registry()
    reg.register_external("weather", echo_tool("get_alerts", "Severe weather warnings in force."))
    reg.search_backend = search_embed.EmbeddingBackend()
    hits = [h.name for h in reg.search("will it rain tomorrow").hits]
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
    """A backend that cannot load, as a broken numpy install would fail."""

    def __call__(self, docs: list[SearchDoc]) -> Broken:
        raise OSError("libopenblas.so: cannot open shared object file")

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
    assert "libopenblas.so" in result.text and shown and "pure-Python" in shown[0]
    assert reg.search_is_local


def test_the_registry_itself_falls_back_and_says_so_once() -> None:
    reg = registry()
    reg.search_backend = Broken()
    assert reg.search("weather forecast").hits[0].name == "mcp__weather__get_forecast"
    assert reg.search_is_local
    notice = reg.pop_search_notice()
    assert notice is not None and "libopenblas.so" in notice
    assert reg.pop_search_notice() is None

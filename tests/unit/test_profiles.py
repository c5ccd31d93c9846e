"""Tool profiles: compact for small windows, what it sends, and that deferred tools stay usable."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent_ext.agent import Agent, ContextLimits
from agent_ext.core import FunctionTool, Registry, ToolDeclaration
from agent_ext.core.profiles import (
    COMPACT_WINDOW_TOKENS,
    choose_profile,
    first_sentence,
    profile_for_window,
    shaped,
    without_descriptions,
)
from agent_ext.models import ScriptedModel, call
from agent_ext.models._openai_convert import to_tools
from agent_ext.tools import BUILTINS, COMPACT_DEFERRED, register_builtins

SNAPSHOT = Path(__file__).parent / "snapshots" / "builtin_declarations_compact.json"
#: The budgets of issue 19 (characters of ``json.dumps`` of the declarations).
DEFAULT_BUDGET = 8_000
COMPACT_BUDGET = 4_000


def builtins(profile: str = "default") -> Registry:
    reg = Registry()
    register_builtins(reg)
    reg.set_profile(profile)
    return reg


def chars(reg: Registry) -> int:
    return len(json.dumps([d.to_dict() for d in reg.declarations()]))


# -- choosing -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("window", "expected"), [
    (2_048, "compact"), (4_096, "compact"), (COMPACT_WINDOW_TOKENS, "compact"),
    (8_193, "default"), (32_768, "default"), (128_000, "default"), (None, "default"),
])
def test_profile_follows_the_window(window: int | None, expected: str) -> None:
    assert profile_for_window(window) == expected
    reg = builtins()
    assert choose_profile(reg, window) == expected and reg.profile == expected


def test_an_explicit_profile_wins_over_the_window() -> None:
    reg = builtins()
    assert choose_profile(reg, 4_096, "default") == "default"
    assert choose_profile(reg, 128_000, "compact") == "compact"


def test_unknown_profile_is_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match=r"'tiny'.*'default', 'compact'"):
        builtins().set_profile("tiny")


def test_agent_is_compact_for_an_8k_window_and_not_for_32k(tmp_path: Path) -> None:
    small = Agent(ScriptedModel(), cwd=tmp_path, plugins=False, mcp=False,
                  limits=ContextLimits(window_tokens=8_192))
    large = Agent(ScriptedModel(), cwd=tmp_path, plugins=False, mcp=False,
                  limits=ContextLimits(window_tokens=32_768))
    assert small.registry.profile == "compact" and large.registry.profile == "default"
    assert "glob" not in [d.name for d in small.request().tools]
    assert "glob" in [d.name for d in large.request().tools]
    pinned = Agent(ScriptedModel(), cwd=tmp_path, plugins=False, mcp=False,
                   limits=ContextLimits(window_tokens=8_192), tool_profile="default")
    assert pinned.registry.profile == "default"
    with pytest.raises(ValueError, match="unknown tool profile"):
        Agent(ScriptedModel(), cwd=tmp_path, plugins=False, mcp=False, tool_profile="small")


async def test_a_window_known_only_at_run_time_is_used(tmp_path: Path) -> None:
    model = ScriptedModel(["ok"])
    a = Agent(model, cwd=tmp_path, plugins=False, mcp=False)
    assert a.registry.profile == "default"
    a.limits = ContextLimits(window_tokens=4_096)  # as when the server reports its n_ctx
    await a.run("hi")
    assert a.registry.profile == "compact"
    assert len(json.dumps([d.to_dict() for d in model.requests[0].tools])) <= COMPACT_BUDGET
    await a.aclose()


# -- what compact sends ---------------------------------------------------------------------------


def test_budgets_of_the_built_in_declarations() -> None:
    for profile, budget in (("default", DEFAULT_BUDGET), ("compact", COMPACT_BUDGET)):
        reg = builtins(profile)
        assert chars(reg) <= budget, profile
        assert len(json.dumps(to_tools(reg.declarations()))) <= budget, profile  # as sent


def test_compact_defers_the_rarely_used_and_lists_them_by_name() -> None:
    reg = builtins("compact")
    sent = {d.name for d in reg.declarations()}
    assert not sent & set(COMPACT_DEFERRED)
    assert {"read_file", "edit", "write_file", "grep", "notebook_edit", "shell",
            "tool_search"} <= sent
    listed = reg.deferred_summary().splitlines()[1].split(", ")
    assert set(COMPACT_DEFERRED) <= set(listed)
    assert set(COMPACT_DEFERRED) <= {name for name, *_ in BUILTINS}


def test_compact_declarations_are_the_compact_texts_or_first_sentences() -> None:
    """Each tool's compact description (or its first sentence), and only the parameter
    descriptions it names for compact; names, types, defaults and ``required`` as in full."""
    full = {d.name: d for d in builtins("default").declarations()}
    for d in builtins("compact").declarations():
        whole = full[d.name]
        assert d.description == (whole.compact_description
                                 or first_sentence(whole.description))
        assert whole.compact_description or whole.description.startswith(d.description)
        kept = {name: prop["description"] for name, prop in d.parameters["properties"].items()
                if "description" in prop}
        assert kept == dict(whole.compact_params)
        assert without_descriptions(d.parameters) == without_descriptions(whole.parameters)
        props = whole.parameters.get("properties", {})
        assert list(d.parameters.get("properties", {})) == list(props)
        assert d.parameters.get("required") == whole.parameters.get("required")


def test_compact_texts_speak_of_what_small_models_get_wrong() -> None:
    """The edit, cell and write texts of the compact profile say how to fill the parameters
    small models fill wrongly, and which tool fixes a few lines."""
    compact = {d.name: d for d in builtins("compact").declarations()}
    assert "without the line numbers" in compact["edit"].description
    described = {name: {p for p, prop in d.parameters["properties"].items()
                        if "description" in prop} for name, d in compact.items()}
    assert {"old_string", "new_string"} <= described["edit"]
    assert "use edit" in compact["write_file"].description
    assert {"cell_id", "new_source"} <= described["notebook_edit"]
    assert all(len(d.description) <= 200 for d in compact.values())


def test_a_kept_parameter_description_is_the_compact_text() -> None:
    schema = {"type": "object", "properties": {
        "a": {"type": "string", "description": "long text"}, "b": {"type": "integer"}}}
    out = without_descriptions(schema, {"a": "short", "missing": "ignored"})
    assert out["properties"] == {"a": {"type": "string", "description": "short"},
                                 "b": {"type": "integer"}}
    assert schema["properties"]["a"]["description"] == "long text"  # the input is untouched


def test_every_first_sentence_stands_alone() -> None:
    reg = builtins()
    reg.reveal(reg.deferred())
    for d in reg.declarations():
        sentence = first_sentence(d.description)
        assert 20 <= len(sentence) <= 160 and sentence.endswith("."), (d.name, sentence)


def test_property_names_that_are_schema_words_survive() -> None:
    schema = {"type": "object", "description": "x", "properties": {
        "description": {"type": "string", "description": "the words"},
        "items": {"type": "array", "items": {"type": "object", "description": "y",
                                             "properties": {"a": {"description": "z"}}}},
        "choice": {"anyOf": [{"type": "string", "description": "s"}, {"type": "null"}]}}}
    assert without_descriptions(schema) == {"type": "object", "properties": {
        "description": {"type": "string"},
        "items": {"type": "array", "items": {"type": "object", "properties": {"a": {}}}},
        "choice": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}


@pytest.mark.parametrize(("text", "sentence"), [
    ("Read a file. Then more.", "Read a file."),
    ("Find files, e.g. *.py, fast. More.", "Find files, e.g. *.py, fast."),
    ("Version 1.5 works. More.", "Version 1.5 works."),
    ("First line\n\nSecond paragraph.", "First line"),
    ("no stop at all", "no stop at all"),
])
def test_first_sentence(text: str, sentence: str) -> None:
    assert first_sentence(text) == sentence


def test_default_profile_sends_declarations_unchanged() -> None:
    d = ToolDeclaration("t", "One. Two.", {"type": "object", "description": "kept"})
    assert shaped(d, "default") is d


def test_compact_snapshot() -> None:
    reg = builtins("compact")
    current = {"declarations": [d.to_dict() for d in reg.declarations()],
               "deferred_summary": reg.deferred_summary()}
    if os.environ.get("AGENT_EXT_UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(json.dumps(current, indent=2, ensure_ascii=False) + "\n")
    assert current == json.loads(SNAPSHOT.read_text()), (
        "compact declarations changed; review the change and rerun with "
        "AGENT_EXT_UPDATE_SNAPSHOTS=1 to accept it")


# -- deferred in compact, still usable ------------------------------------------------------------


def test_switching_profiles_refreshes_the_view_and_keeps_reveals() -> None:
    reg = builtins("default")
    reg.register_external("srv", FunctionTool(lambda: "", name="remote", description="Remote."))
    reg.reveal(["mcp__srv__remote"])
    before = reg.version
    reg.set_profile("compact")
    assert reg.version > before
    names = [d.name for d in reg.declarations()]
    assert "mcp__srv__remote" in names and "glob" not in names
    reg.reveal(["glob"])
    reg.set_profile("default")
    reg.set_profile("compact")
    assert {"glob", "mcp__srv__remote"} <= {d.name for d in reg.declarations()}


@pytest.mark.parametrize("name", COMPACT_DEFERRED)
def test_compact_deferred_tools_are_found_by_keywords(name: str) -> None:
    queries = {"glob": "find files by path pattern", "ls": "list directory",
               "todo_write": "task list", "ask_user": "ask the user a question",
               "run_cell": "run notebook cell"}
    hits = [h.name for h in builtins("compact").search(queries[name]).hits]
    assert name in hits[:3], (name, hits)


async def test_a_compact_deferred_tool_is_loaded_by_tool_search_then_called(
        tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("hello\n")
    model = ScriptedModel([
        call("tool_search", {"query": "find files by path pattern"}, id="s1"),
        call("glob", {"pattern": "*.md"}, id="g1"),
        "Found it.",
    ])
    a = Agent(model, cwd=tmp_path, plugins=False, mcp=False,
              limits=ContextLimits(window_tokens=8_192))
    run = await a.run("which markdown files are there?")
    assert run.text == "Found it."
    (_, searched), (_, globbed) = run.tool_calls
    assert '"name": "glob"' in searched.text
    assert globbed.error is None and "notes.md" in globbed.text
    first, second, _ = model.requests
    assert "glob" not in [d.name for d in first.tools] and "glob" in first.system
    assert "glob" in [d.name for d in second.tools]
    await a.aclose()

"""The registry: lazy loads, aliases, disabled tools, external names, deferral and order."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from agent_ext.core import (
    FunctionTool,
    Kind,
    Registry,
    ToolLoadError,
    ToolRegistrationError,
    UnknownToolError,
)
from agent_ext.core.naming import MAX_NAME, elide, external_name, is_valid_name, sanitize
from agent_ext.core.profiles import SUMMARY_CHARS
from agent_ext.tools import register_builtins

from .helpers import echo_tool


def make_registry() -> Registry:
    """A registry with tool_search as its only built-in, so expectations stay small."""
    reg = Registry()
    register_builtins(reg)
    for name in reg.names():
        if name != "tool_search":
            reg.unregister(name)
    return reg


# -- lazy loading --------------------------------------------------------------------------------


def test_lazy_factory_is_not_called_until_first_use() -> None:
    calls = []

    def factory() -> FunctionTool:
        calls.append(1)
        return echo_tool("slow_tool", defer=False)

    reg = Registry()
    reg.register_lazy("slow_tool", factory)
    assert calls == []
    assert "slow_tool" in reg
    reg.get("slow_tool")
    reg.get("slow_tool")
    assert calls == [1]


def test_lazy_module_string_imports_on_first_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "lazy_mod_for_test.py").write_text(
        "from agent_ext.core import FunctionTool\n"
        "def make():\n"
        "    return FunctionTool(lambda: 'hi', name='whatever', description='Says hi.')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = Registry()
    reg.register_lazy("greeter", "lazy_mod_for_test:make")
    assert "lazy_mod_for_test" not in sys.modules
    tool = reg.get("greeter")
    assert tool.name == "greeter"  # the registered name wins
    assert "lazy_mod_for_test" in sys.modules


def test_concurrent_first_uses_share_one_load() -> None:
    calls = []
    gate = threading.Event()

    def factory() -> FunctionTool:
        calls.append(threading.get_ident())
        gate.wait(5)
        return echo_tool("shared", defer=False)

    reg = Registry()
    reg.register_lazy("shared", factory)
    results: list[Any] = []
    threads = [threading.Thread(target=lambda: results.append(reg.get("shared"))) for _ in range(8)]
    for t in threads:
        t.start()
    time.sleep(0.1)
    gate.set()
    for t in threads:
        t.join(5)
    assert len(calls) == 1
    assert len(results) == 8 and all(r is results[0] for r in results)


def test_concurrent_waiters_all_see_a_failed_load() -> None:
    gate = threading.Event()
    calls = []

    def factory() -> FunctionTool:
        calls.append(1)
        gate.wait(5)
        raise ImportError("no module named nowhere")

    reg = Registry()
    reg.register_lazy("broken", factory)
    errors: list[BaseException] = []

    def use() -> None:
        try:
            reg.get("broken")
        except ToolLoadError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=use) for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(0.1)
    gate.set()
    for t in threads:
        t.join(5)
    assert len(errors) == 4 and len(calls) == 1


def test_failed_load_keeps_failing_loudly() -> None:
    reg = Registry()
    reg.register_lazy("broken", "agent_ext_no_such_module:Tool")
    for _ in range(3):
        with pytest.raises(ToolLoadError, match="'broken' failed to load: ModuleNotFoundError"):
            reg.get("broken")
    assert "broken" in reg  # still registered, still failing, never silently dropped
    failures = reg.warm_all()
    assert [f.name for f in failures] == ["broken"]
    with pytest.raises(ToolLoadError):
        reg.declarations()


def test_factory_returning_a_non_tool_fails_to_load() -> None:
    reg = Registry()
    reg.register_lazy("odd", lambda: "not a tool")  # type: ignore[arg-type,return-value]
    with pytest.raises(ToolLoadError, match="not a Tool"):
        reg.get("odd")


def test_warm_all_loads_everything() -> None:
    reg = make_registry()
    assert reg.warm_all() == []
    assert all(e.tool is not None for e in reg._entries.values())


def test_bad_module_spec_is_a_registration_error() -> None:
    with pytest.raises(ToolRegistrationError, match="module:attribute"):
        Registry().register_lazy("x", "no_colon_here")


# -- registration errors -------------------------------------------------------------------------


def test_registration_lists_every_problem() -> None:
    bad = FunctionTool(lambda: None, name="bad name!", description="",
                       parameters={"type": "array"}, kind=Kind.EDIT, read_only=True)
    with pytest.raises(ToolRegistrationError) as info:
        Registry().register(bad)
    message = str(info.value)
    for fragment in ("no description", "cannot be read-only", "JSON object schema",
                     "must match"):
        assert fragment in message


def test_duplicate_names_are_refused_case_insensitively() -> None:
    reg = Registry()
    reg.register(echo_tool("thing"))
    with pytest.raises(ToolRegistrationError, match="already registered"):
        reg.register(echo_tool("Thing"))


# -- aliases and unknown names -------------------------------------------------------------------


def test_aliases_resolve_case_insensitively() -> None:
    reg = make_registry()
    assert reg.resolve("ToolSearch") == "tool_search"
    assert reg.resolve("TOOLSEARCH") == "tool_search"
    assert reg.resolve("Tool_Search") == "tool_search"
    assert reg.get("toolsearch").name == "tool_search"


def test_alias_cannot_shadow_a_tool() -> None:
    reg = make_registry()
    with pytest.raises(ToolRegistrationError):
        reg.add_alias("TOOL_SEARCH", "tool_search")


def test_unknown_name_suggests_close_names() -> None:
    reg = make_registry()
    with pytest.raises(UnknownToolError) as info:
        reg.get("tool_serch")
    assert info.value.suggestions == ["tool_search"]
    assert "did you mean 'tool_search'" in str(info.value)


# -- disabled ------------------------------------------------------------------------------------


def test_disabled_tool_is_hidden_and_refused() -> None:
    reg = make_registry()
    reg.register(echo_tool("helper", defer=False))
    reg.disable("helper")
    assert "helper" not in [d.name for d in reg.declarations()]
    with pytest.raises(UnknownToolError):
        reg.get("helper")
    reg.enable("helper")
    assert reg.get("helper").name == "helper"


def test_disable_by_alias() -> None:
    reg = make_registry()
    reg.disable("ToolSearch")
    assert reg.is_disabled("tool_search")
    assert [d.name for d in reg.declarations()] == []


def test_disabled_is_checked_again_after_a_rename() -> None:
    reg = Registry()
    # The user disabled the server's tool under its original name before it was connected.
    reg.disable("github__create_issue")
    reg.disable("search")  # a bare tool name of a server
    first = reg.register_external("github", echo_tool("create_issue"))
    renamed = reg.register_external("git hub", echo_tool("search"))
    assert first == "mcp__github__create_issue" and renamed == "mcp__git_hub__search"
    assert reg.is_disabled(first) and reg.is_disabled(renamed)
    assert reg.deferred() == []


def test_disabled_by_final_external_name() -> None:
    reg = Registry()
    name = reg.register_external("slack", echo_tool("post_message"))
    reg.disable("MCP__SLACK__POST_MESSAGE")
    assert reg.is_disabled(name)


# -- external names ------------------------------------------------------------------------------


def test_external_names_are_made_valid() -> None:
    reg = Registry()
    name = reg.register_external("my.server", echo_tool("get/file contents"))
    assert name == "mcp__my_server__get_file_contents"
    assert is_valid_name(name)


def test_long_external_names_are_elided_in_the_middle() -> None:
    long_tool = "a_really_long_tool_name_that_goes_on_and_on_forever_" + "z" * 20
    name = external_name("enterprise-knowledge-base", long_tool)
    assert len(name) == MAX_NAME and "___" in name
    assert name.startswith("mcp__enterprise-knowledge") and name.endswith("z" * 10)
    assert elide("short") == "short"
    assert sanitize("é/ü") == "___"


def test_external_name_collisions_get_a_suffix() -> None:
    reg = Registry()
    names = [reg.register_external("srv", echo_tool(n)) for n in ("a.b", "a_b", "a b")]
    assert names == ["mcp__srv__a_b", "mcp__srv__a_b_2", "mcp__srv__a_b_3"]
    long_names = [reg.register_external("s", echo_tool("x" * 80)) for _ in range(2)]
    assert long_names[0] != long_names[1]
    assert all(len(n) <= MAX_NAME and is_valid_name(n) for n in long_names)


def test_unregister_server_removes_tools_and_reveals() -> None:
    reg = Registry()
    for n in ("one", "two"):
        reg.register_external("srv", echo_tool(n))
    reg.register_external("other", echo_tool("three"))
    reg.reveal(["mcp__srv__one"])
    assert reg.unregister_server("srv") == ["mcp__srv__one", "mcp__srv__two"]
    assert reg.revealed == frozenset()
    assert reg.deferred() == ["mcp__other__three"]


# -- deferral, reveal, declarations --------------------------------------------------------------


def test_declarations_leave_out_deferred_until_revealed() -> None:
    reg = make_registry()
    reg.register(echo_tool("user_tool", defer=True))
    reg.register_external("srv", echo_tool("remote"))
    assert [d.name for d in reg.declarations()] == ["tool_search"]
    assert reg.reveal(["mcp__srv__remote"]) == ["mcp__srv__remote"]
    assert [d.name for d in reg.declarations()] == ["tool_search", "mcp__srv__remote"]
    reg.unreveal(["mcp__srv__remote"])
    assert [d.name for d in reg.declarations()] == ["tool_search"]


def test_always_loaded_tools_are_never_deferred() -> None:
    reg = Registry()
    t = echo_tool("pinned", defer=True)
    t.always_load = True
    reg.register(t)
    assert [d.name for d in reg.declarations()] == ["pinned"]
    assert reg.deferred() == []


def test_declaration_order_is_stable_builtins_then_external() -> None:
    reg = Registry()
    for n in ("zeta", "alpha", "mid"):
        reg.register(echo_tool(n, defer=False))
    for s, n in (("b", "x"), ("a", "y")):
        reg.register_external(s, echo_tool(n))
    reg.reveal(reg.deferred())
    first = [d.name for d in reg.declarations()]
    assert first == ["alpha", "mid", "zeta", "mcp__a__y", "mcp__b__x"]
    assert [d.name for d in reg.declarations()] == first


def test_registering_1000_deferred_tools_adds_nothing_to_declarations() -> None:
    reg = make_registry()
    before = [d.to_dict() for d in reg.declarations()]
    for i in range(1000):
        reg.register_external(f"server{i % 10}", echo_tool(f"operation_{i}"))
    assert [d.to_dict() for d in reg.declarations()] == before
    summary = reg.deferred_summary()
    lines = summary.splitlines()[1:]
    assert len(lines) == 10 and all(line.startswith("mcp__server") for line in lines)
    shown = summary.count("operation_")
    more = sum(int(line.rsplit("+", 1)[1].split()[0]) for line in lines)
    assert shown + more == 1000 and shown > 50
    assert len(summary) <= SUMMARY_CHARS["default"] + 300


def test_a_long_deferred_summary_cuts_the_largest_servers_first() -> None:
    reg = make_registry()
    reg.register(echo_tool("plugin_tool"))
    for i in range(400):
        reg.register_external("big", echo_tool(f"big_operation_{i:03}"))
    for n in ("one", "two"):
        reg.register_external("small", echo_tool(n))
    lines = reg.deferred_summary().splitlines()
    assert "tool_search keywords" in lines[0]
    assert lines[1:] == ["plugin_tool", lines[2], "mcp__small__{one,two}"]
    assert lines[2].startswith("mcp__big__{big_operation_000,") and lines[2].endswith(" more")
    shown = lines[2].count("big_operation_")
    reg.set_profile("compact")
    compact = reg.deferred_summary()
    assert 0 < compact.count("big_operation_") < shown
    assert len(compact) <= SUMMARY_CHARS["compact"] + 300
    reg.unregister_server("big")
    assert "more" not in reg.deferred_summary()


def test_deferred_summary_groups_by_server_only_when_shorter() -> None:
    reg = Registry()
    reg.register(echo_tool("notes_tool"))
    reg.register_external("github", echo_tool("create_issue"))
    reg.register_external("github", echo_tool("list_issues"))
    reg.register_external("time", echo_tool("now"))
    lines = reg.deferred_summary().splitlines()[1:]
    assert lines == ["notes_tool", "mcp__github__{create_issue,list_issues}", "mcp__time__now"]
    reg.reveal(["mcp__time__now"])
    assert "mcp__time__now" not in reg.deferred_summary()


def test_no_deferred_tools_no_summary() -> None:
    assert make_registry().deferred_summary() == ""


def test_reveal_unknown_name_raises() -> None:
    with pytest.raises(UnknownToolError):
        make_registry().reveal(["nope"])


def test_lazy_deferred_tool_is_not_loaded_for_declarations_or_summary() -> None:
    calls = []

    def factory() -> FunctionTool:
        calls.append(1)
        return echo_tool("later")

    reg = make_registry()
    reg.register_lazy("later", factory, defer=True)
    reg.declarations()
    assert "later" in reg.deferred_summary()
    assert calls == []


def test_hidden_tools_leave_the_view_but_stay_callable() -> None:
    reg = make_registry()
    reg.register(echo_tool("shown", defer=False))
    reg.register_external("srv", echo_tool("secret"))
    denied = {"shown", "mcp__srv__secret"}
    reg.hidden = lambda name: name in denied
    reg.refresh()
    assert [d.name for d in reg.declarations()] == ["tool_search"]
    assert reg.deferred() == [] and reg.deferred_summary() == ""
    assert reg.search("secret").hits == []
    assert reg.get("shown").name == "shown"  # a call still reaches the policy, which explains

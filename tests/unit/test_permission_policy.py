"""RulePolicy: modes, tiers, reasons, hidden tools, "always allow" and saving rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_ext.core import Registry, Tier, ToolInvocation
from agent_ext.permissions import FixedPolicy, Mode, PermissionPolicy, RulePolicy, Verdict
from agent_ext.permissions.tiers import call_tier
from tests.unit.helpers import echo_tool
from tests.unit.permission_corpus import StandIn, StandInCall, call, standins

TOOLS = standins()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src/a.py").write_text("x")
    (root / ".git").mkdir()
    (root / ".git/config").write_text("[core]")
    return root.resolve()


def shell(project: Path, command: str) -> ToolInvocation[Any]:
    return call(TOOLS["shell"], project, command=command)


def on(project: Path, tool: str, **params: Any) -> ToolInvocation[Any]:
    return call(TOOLS[tool], project, **params)


def test_rule_policy_implements_the_protocol(project: Path) -> None:
    policy: PermissionPolicy = RulePolicy(project)
    assert policy.decide(on(project, "read_file", path="src/a.py")).verdict is Verdict.ALLOW
    assert isinstance(FixedPolicy(), FixedPolicy)


# -- tiers --------------------------------------------------------------------------------------

def test_call_tiers(project: Path) -> None:
    assert call_tier(shell(project, "ls")) is Tier.EXEC
    assert call_tier(on(project, "tool_search")) is Tier.READ
    assert call_tier(on(project, "todo_write")) is Tier.READ
    assert call_tier(on(project, "frobnicate")) is Tier.EXEC
    assert call_tier(on(project, "read_file", path="var://x")) is Tier.READ
    assert call_tier(on(project, "read_file", path="ssh://host/etc/passwd")) is Tier.EXEC
    assert call_tier(on(project, "write_file", path="history://3")) is Tier.READ
    assert call_tier(on(project, "write_file", path="src/a.py")) is Tier.WRITE
    mcp_todo = StandIn("todo_write", tier=Tier.EXEC, opinion=TOOLS["todo_write"].opinion,
                       server="elsewhere")
    assert call_tier(call(mcp_todo, project)) is Tier.EXEC


def test_reads_run_only_inside_the_working_roots(project: Path, tmp_path: Path) -> None:
    policy = RulePolicy(project)
    inside = policy.decide(on(project, "read_file", path="src/a.py"))
    assert (inside.verdict, inside.reason) == (Verdict.ALLOW,
                                               "read-only call inside the working roots")
    outside = policy.decide(on(project, "read_file", path=str(tmp_path / "x")))
    assert outside.verdict is Verdict.ASK
    assert "additionalDirectories" in outside.reason
    fetch = policy.decide(on(project, "web_fetch", url="https://example.com"))
    assert fetch.verdict is Verdict.ASK


# -- modes --------------------------------------------------------------------------------------

def test_plan_mode_refuses_writes_and_commands_with_a_plan_message(project: Path) -> None:
    policy = RulePolicy(project, mode="plan", rules={"allow": ["Edit", "Bash"]})
    for invocation in (on(project, "edit", path="src/a.py"), shell(project, "ls"),
                       on(project, "frobnicate")):
        decision = policy.decide(invocation)
        assert decision.verdict is Verdict.DENY
        assert "plan mode" in decision.reason and "plan" in decision.reason
    assert policy.decide(on(project, "read_file", path="src/a.py")).verdict is Verdict.ALLOW


def test_dont_ask_turns_asks_into_denials_that_say_what_to_allow(project: Path) -> None:
    policy = RulePolicy(project, mode="dontAsk")
    decision = policy.decide(shell(project, "git push origin main"))
    assert decision.verdict is Verdict.DENY
    assert "dontAsk" in decision.reason
    assert "`Bash(git push *)`" in decision.reason
    assert "permissions.allow" in decision.reason
    edit = policy.decide(on(project, "edit", path="src/a.py"))
    assert "`Edit(/src/a.py)`" in edit.reason
    assert policy.decide(on(project, "read_file", path="src/a.py")).verdict is Verdict.ALLOW


def test_accept_edits(project: Path, tmp_path: Path) -> None:
    policy = RulePolicy(project, mode="acceptEdits")
    assert policy.decide(on(project, "edit", path="src/a.py")).verdict is Verdict.ALLOW
    assert policy.decide(on(project, "write_file", path="src/new.py")).verdict is Verdict.ALLOW
    assert policy.decide(on(project, "edit", path=str(tmp_path / "x"))).verdict is Verdict.ASK
    assert policy.decide(shell(project, "touch x")).verdict is Verdict.ASK
    assert policy.decide(on(project, "edit", path=".git/config")).verdict is Verdict.ASK


def test_bypass_alone_writes_protected_places_unasked(project: Path) -> None:
    """bypassPermissions is the one mode where protected places are written without asking."""
    protected = (on(project, "edit", path=".git/config"),
                 shell(project, "echo x > .git/hooks/pre-commit"),
                 shell(project, "echo x >> ~/.ssh/config"),
                 on(project, "write_file", path=".agent_ext/settings.json"),
                 on(project, "write_file", path=".mcp.json"),
                 on(project, "write_file", path=str(Path.home() / ".agent_ext/x.json")))
    bypass = RulePolicy(project, mode="bypassPermissions")
    assert bypass.decide(shell(project, "rm -rf build")).verdict is Verdict.ALLOW
    assert bypass.decide(on(project, "frobnicate")).verdict is Verdict.ALLOW
    for invocation in protected:
        assert bypass.decide(invocation).verdict is Verdict.ALLOW
    for mode in ("default", "acceptEdits", "auto"):
        policy = RulePolicy(project, mode=mode, rules={"allow": ["Edit", "Write", "Bash"]})
        for invocation in protected:
            decision = policy.decide(invocation)
            assert decision.verdict is Verdict.ASK, (mode, decision)
            assert "protected place" in decision.reason
    for mode in ("dontAsk", "plan"):
        policy = RulePolicy(project, mode=mode, rules={"allow": ["Edit", "Write", "Bash"]})
        for invocation in protected:
            assert policy.decide(invocation).verdict is Verdict.DENY, mode


def test_mode_comes_from_settings_and_can_change(project: Path) -> None:
    (project / ".agent_ext").mkdir()
    (project / ".agent_ext/settings.json").write_text(
        json.dumps({"permissions": {"defaultMode": "acceptEdits"}}))
    policy = RulePolicy(project)
    assert policy.mode is Mode.ACCEPT_EDITS
    assert RulePolicy(project, mode="plan").mode is Mode.PLAN
    assert policy.set_mode("bypass_permissions") is Mode.BYPASS
    with pytest.raises(ValueError, match="unknown permission mode"):
        policy.set_mode("everything")


def test_auto_mode_uses_the_classifier_after_rules(project: Path) -> None:
    seen: list[str] = []

    def classifier(invocation: ToolInvocation[Any], text: str) -> str:
        seen.append(text)
        return {"ls": "allow", "rm x": "deny"}.get(text, "ask")

    policy = RulePolicy(project, mode="auto", classifier=classifier,
                        rules={"deny": ["Bash(shutdown *)"]})
    assert policy.decide(shell(project, "ls")).verdict is Verdict.ALLOW
    assert policy.decide(shell(project, "rm x")).verdict is Verdict.DENY
    assert policy.decide(shell(project, "make")).verdict is Verdict.ASK
    assert policy.decide(shell(project, "shutdown now")).verdict is Verdict.DENY
    assert "shutdown now" not in seen
    assert policy.decide(on(project, "read_file", path="src/a.py")).verdict is Verdict.ALLOW
    assert seen == ["ls", "rm x", "make"]


def test_a_failing_classifier_asks(project: Path) -> None:
    def broken(invocation: ToolInvocation[Any], text: str) -> str:
        raise RuntimeError("offline")

    policy = RulePolicy(project, mode="auto", classifier=broken)
    decision = policy.decide(shell(project, "ls"))
    assert decision.verdict is Verdict.ASK
    assert "offline" in decision.reason


def test_auto_without_a_classifier_acts_as_default_and_says_so_once(project: Path) -> None:
    policy = RulePolicy(project, mode="auto")
    assert any("no classifier" in n for n in policy.notices)
    first = policy.decide(shell(project, "ls"))
    second = policy.decide(shell(project, "ls"))
    assert first.verdict is second.verdict is Verdict.ASK
    assert "no classifier" in first.reason
    assert "no classifier" not in second.reason


# -- reasons and problems -----------------------------------------------------------------------

def test_reasons_name_the_rule_and_its_origin(project: Path) -> None:
    policy = RulePolicy(project, rules={"deny": ["Bash(rm *)"], "ask": ["Bash(git push *)"],
                                        "allow": ["Bash(git status)"]})
    denied = policy.decide(shell(project, "sudo rm -rf /"))
    assert denied.rule == "Bash(rm *)"
    assert "denied by Bash(rm *) in the rules passed to the agent" in denied.reason
    asked = policy.decide(shell(project, "git push"))
    assert asked.rule == "Bash(git push *)"
    assert "asks for approval" in asked.reason
    allowed = policy.decide(shell(project, "git status"))
    assert allowed.rule == "Bash(git status)"
    tool = policy.decide(on(project, "refuser"))
    assert tool.verdict is Verdict.DENY and "refuser refuses" in tool.reason
    unknown = policy.decide(shell(project, "eval ls"))
    assert unknown.verdict is Verdict.ASK
    assert "could not fully analyse" in unknown.reason


def test_a_call_that_cannot_describe_itself_is_not_run_unasked(project: Path) -> None:
    class BrokenCall(StandInCall):
        def locations(self) -> list[Path]:
            raise OSError("unreadable")

    class Broken(StandIn):
        def invocation(self, params: dict[str, Any], ctx: Any) -> ToolInvocation[Any]:
            return BrokenCall(self, params, ctx)

    tool = Broken("read_file", tier=Tier.READ, opinion=TOOLS["read_file"].opinion)
    assert RulePolicy(project).decide(call(tool, project)).verdict is Verdict.ASK
    assert RulePolicy(project, mode="dontAsk").decide(call(tool, project)).verdict is \
        Verdict.DENY


def test_add_rule_reports_malformed_rules(project: Path) -> None:
    policy = RulePolicy(project)
    found = policy.add_rule("deny", "Bash(rm")
    assert "unbalanced" in str(found)
    assert any("Bash(rm" in p for p in policy.problems)
    policy.add_rule("deny", "Bash(rm *)")
    assert policy.decide(shell(project, "rm x")).verdict is Verdict.DENY
    assert policy.remove_rule("deny", "Bash(rm *)")
    assert policy.decide(shell(project, "rm x")).verdict is Verdict.ASK


# -- hidden tools -------------------------------------------------------------------------------

def test_a_bare_name_deny_hides_the_tool(project: Path) -> None:
    registry = Registry()
    registry.register(echo_tool("shell", defer=False))
    registry.register(echo_tool("read_file", defer=False))
    registry.register(echo_tool("grep", defer=False))
    registry.register_external("github", echo_tool("create_issue"))
    policy = RulePolicy(project, rules={"deny": ["Bash", "Read(secrets/**)"]},
                        registry=registry)
    assert registry.hidden("shell")
    assert not registry.hidden("read_file")
    names = [d.name for d in registry.declarations()]
    assert "shell" not in names and "read_file" in names
    version = registry.version
    policy.add_rule("deny", "mcp__github")
    assert registry.version > version
    assert registry.hidden("mcp__github__create_issue")
    policy.add_rule("deny", "READ")
    assert registry.hidden("grep") and registry.hidden("read_file")


# -- "always allow" -----------------------------------------------------------------------------

def test_scopes_are_narrowest_first(project: Path) -> None:
    policy = RulePolicy(project)
    assert policy.scopes(shell(project, "ls")) == ("Bash(ls)",)
    assert policy.scopes(shell(project, "python3 -m pytest -q && git --no-pager log")) == (
        "Bash(python3 -m pytest *), Bash(git --no-pager log *)",)
    assert policy.scopes(shell(project, "$X")) == ("command prefix",)
    assert policy.scopes(on(project, "edit", path="src/a.py")) == ("file", "directory", "tool")
    assert policy.scopes(on(project, "read_file", path="/etc/hosts")) == (
        "file", "directory", "tool")
    assert policy.scopes(on(project, "grep", path="/etc")) == ("directory", "tool")
    assert policy.scopes(on(project, "mcp__github__create_issue")) == ("tool", "server")
    assert policy.scopes(on(project, "web_fetch", url="https://a.example.com/x")) == (
        "domain", "tool")
    assert policy.scopes(on(project, "frobnicate")) == ("tool",)


@pytest.mark.parametrize(("tool", "params", "scope", "expected"), [
    ("shell", {"command": "git commit -m x"}, None, "Bash(git commit *)"),
    ("shell", {"command": "ls"}, "command prefix", "Bash(ls)"),
    ("shell", {"command": "git add . && git commit -m x"}, None,
     "Bash(git add *), Bash(git commit *)"),
    ("edit", {"path": "src/a.py"}, None, "Edit(/src/a.py)"),
    ("write_file", {"path": "src/a.py"}, "file", "Edit(/src/a.py)"),
    ("edit", {"path": "src/a.py"}, "directory", "Edit(/src/**)"),
    ("edit", {"path": "src/a.py"}, "tool", "Edit"),
    ("edit", {"path": "/etc/hosts"}, None, "Edit(//etc/hosts)"),
    ("read_file", {"path": "/etc/hosts"}, None, "Read(//etc/hosts)"),
    ("read_file", {"path": "/etc/hosts"}, "directory", "Read(//etc/**)"),
    ("grep", {"path": "/etc"}, None, "Read(//etc/**)"),
    ("mcp__github__create_issue", {}, None, "mcp__github__create_issue"),
    ("mcp__github__create_issue", {}, "server", "mcp__github"),
    ("web_fetch", {"url": "https://docs.example.com/x"}, None,
     "WebFetch(domain:docs.example.com)"),
    ("web_fetch", {"url": "https://docs.example.com/x"}, "tool", "web_fetch"),
    ("frobnicate", {}, None, "frobnicate"),
])
def test_always_allow_adds_the_narrowest_rule(project: Path, tool: str, params: dict[str, Any],
                                              scope: str | None, expected: str) -> None:
    policy = RulePolicy(project)
    invocation = on(project, tool, **params)
    assert policy.always_allow(invocation, scope, "session") == expected
    assert policy.decide(invocation).verdict is Verdict.ALLOW
    assert "Bash" not in expected.split(", ")


def test_always_allow_prefix_does_not_cover_other_programs(project: Path) -> None:
    policy = RulePolicy(project)
    policy.always_allow(shell(project, "git commit -m x"), None, "session")
    assert policy.decide(shell(project, "git commit -am y")).verdict is Verdict.ALLOW
    assert policy.decide(shell(project, "git push")).verdict is Verdict.ASK
    assert policy.decide(shell(project, "git commit -m x && rm -rf /")).verdict is Verdict.ASK


def test_always_allow_can_be_saved_to_project_settings(project: Path) -> None:
    settings = project / ".agent_ext/settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"model": "m", "permissions": {
        "allow": ["Bash(ls *)"], "deny": ["Bash(rm *)"], "defaultMode": "default"}}))
    policy = RulePolicy(project)
    added = policy.always_allow(shell(project, "git commit -m x"), None, "project")
    assert added == "Bash(git commit *)"
    data = json.loads(settings.read_text())
    assert data["model"] == "m"
    assert data["permissions"]["allow"] == ["Bash(ls *)", "Bash(git commit *)"]
    assert data["permissions"]["deny"] == ["Bash(rm *)"]
    assert not [p for p in settings.parent.iterdir() if p.name.endswith(".tmp")]
    policy.always_allow(shell(project, "git commit -m y"), None, "project")
    assert json.loads(settings.read_text())["permissions"]["allow"].count(
        "Bash(git commit *)") == 1
    reloaded = RulePolicy(project)
    decision = reloaded.decide(shell(project, "git commit -m z"))
    assert decision.verdict is Verdict.ALLOW
    assert str(settings) in decision.reason


def test_saving_creates_the_file_and_never_clobbers_a_broken_one(project: Path) -> None:
    policy = RulePolicy(project)
    policy.always_allow(on(project, "edit", path="src/a.py"), "file", "project")
    settings = project / ".agent_ext/settings.json"
    assert json.loads(settings.read_text()) == {"permissions": {"allow": ["Edit(/src/a.py)"]}}
    settings.write_text("{not json")
    policy.always_allow(on(project, "edit", path="src/b.py"), "file", "project")
    assert settings.read_text() == "{not json"
    assert any("could not save" in p for p in policy.problems)
    assert policy.decide(on(project, "edit", path="src/b.py")).verdict is Verdict.ALLOW


def test_odd_file_names_round_trip_through_always_allow(project: Path) -> None:
    odd = project / "src/we(ir)d *name?.py"
    odd.write_text("x")
    policy = RulePolicy(project)
    rule = policy.always_allow(on(project, "edit", path=str(odd)), None, "session")
    assert rule == "Edit(/src/we\\(ir\\)d \\*name\\?.py)"
    assert policy.decide(on(project, "edit", path=str(odd))).verdict is Verdict.ALLOW
    assert policy.decide(on(project, "edit", path="src/a.py")).verdict is Verdict.ASK


def test_fetches_are_outside_the_working_roots(project: Path) -> None:
    fetch = StandIn("web_fetch", tier=Tier.READ, opinion=TOOLS["read_file"].opinion)
    policy = RulePolicy(project)
    decision = policy.decide(call(fetch, project, url="https://example.com/x"))
    assert decision.verdict is Verdict.ASK
    assert "WebFetch(domain:" in decision.reason
    allowed = RulePolicy(project, rules={"allow": ["WebFetch(domain:example.com)"]})
    assert allowed.decide(call(fetch, project, url="https://example.com/x")).verdict is \
        Verdict.ALLOW


def test_additional_directories_and_rules_from_settings(project: Path, tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    (project / ".agent_ext").mkdir()
    (project / ".agent_ext/settings.json").write_text(json.dumps({"permissions": {
        "additionalDirectories": [str(extra), "../missing"], "allow": ["Bash(make *)"]}}))
    policy = RulePolicy.from_settings(project)
    assert str(extra.resolve()) in policy.roots
    assert any("missing" in p and "does not exist" in p for p in policy.problems)
    assert policy.decide(on(project, "read_file", path=str(extra / "f"))).verdict is \
        Verdict.ALLOW
    assert policy.decide(shell(project, "make test")).verdict is Verdict.ALLOW

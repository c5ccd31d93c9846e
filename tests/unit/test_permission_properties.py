"""Properties of the rule parser and the decision: no crashes, and rules only narrow or widen as
their kind says (a deny rule never allows, an allow rule never lifts a denial)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_ext.core import ToolInvocation
from agent_ext.permissions import Rule, RulePolicy, RuleProblem, Verdict, parse_rule
from tests.unit.permission_corpus import call, standins

TOOLS = standins()
RANK = {Verdict.DENY: 0, Verdict.ASK: 1, Verdict.ALLOW: 2}
SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

rule_names = st.sampled_from([
    "Bash", "bash", "shell", "Read", "READ", "Edit", "Write", "Grep", "LS", "NotebookEdit",
    "WebFetch", "mcp__github", "mcp__github__create_issue", "frobnicate", "TodoWrite",
    "ToolSearch", "Вash", "Rеad"])
specifiers = st.sampled_from([
    "", "(*)", "(rm *)", "(rm:*)", "(git *)", "(git status)", "(ls *)", "(ls*)", "(echo *)",
    "(* -rf *)", "(sudo *)", "(secrets/**)", "(/src/*.py)", "(//etc/**)", "(~/x)", "(.git)",
    "(*.py)", "(domain:example.com)", "(link/**)", "(a\\(b\\))", "(", "())", "(rм *)"])
random_rule = st.one_of(
    st.builds(lambda n, s: n + s, rule_names, specifiers),
    st.text(max_size=30))

words = st.sampled_from([
    "rm", "-rf", "/", "git", "status", "push", "ls", "-la", "echo", "$X", "$(rm x)", "sudo",
    "env", "X=1", "timeout", "5", "bash", "-c", "'rm -rf x'", "g'i't", "\"rm\"", "sh", "x",
    "~/y", "../z", ".git/config", "`id`", "gіt", "ｒｍ", "eval"])
operators = st.sampled_from([" ", " ", " ", " && ", "; ", " | ", "\n", " > ", " >> ", " || "])
commands = st.lists(st.tuples(words, operators), min_size=1, max_size=6).map(
    lambda parts: "".join(w + o for w, o in parts).strip())
paths = st.sampled_from([
    "src/a.py", "secrets/key", "../../etc/passwd", "~/x", "~root/y", "link/passwd",
    "/etc/passwd", ".git/config", "src/../secrets/key", "nb.ipynb", ".agent_ext/settings.json",
    "var://x", "history://1", "ssh://host/x", "."])
urls = st.sampled_from([
    "https://example.com/x", "https://a.example.com", "https://example.com.evil.net",
    "https://example.com@evil.net/", "http://evil.net\\@example.com/", "not a url", ""])
modes = st.sampled_from(["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions",
                         "auto"])


@st.composite
def invocations(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    name = draw(st.sampled_from(sorted(TOOLS)))
    if name == "shell":
        return name, {"command": draw(st.one_of(commands, st.text(max_size=40)))}
    if name == "web_fetch":
        return name, {"url": draw(urls)}
    return name, {"path": draw(paths)}


def relevant(spec: tuple[str, dict[str, Any]]) -> list[str]:
    """Rules likely to match the call, so the properties see rules that bite."""
    name, params = spec
    if name == "shell":
        first = (params["command"].split() or ["x"])[0].replace("(", "").replace(")", "")
        return ["Bash", "Bash(*)", f"Bash({first} *)", f"Bash({first}*)", "Bash(* *)"]
    if name == "web_fetch":
        return ["WebFetch", "WebFetch(domain:example.com)", "WebFetch(domain:evil.net)"]
    if "path" in params:
        path = params["path"]
        return [name, "Read", "Edit", f"Read({path})", f"Edit({path})", f"Read({path}/**)",
                "Read(/**)", "Edit(/**)", "Read(//**)"]
    return [name, "mcp__github", name.upper()]


def extra_rule(data: st.DataObject, spec: tuple[str, dict[str, Any]]) -> str:
    drawn: str = data.draw(st.one_of(random_rule, st.sampled_from(relevant(spec))))
    return drawn


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("props")
    root = base / "project"
    for path in ("src/a.py", "secrets/key", ".git/config"):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("x")
    (base / "outside").mkdir()
    (root / "link").symlink_to(base / "outside", target_is_directory=True)
    return root.resolve()


def decide(project: Path, mode: str, rules: dict[str, list[str]],
           spec: tuple[str, dict[str, Any]]) -> Verdict:
    name, params = spec
    invocation: ToolInvocation[Any] = call(TOOLS[name], project, **params)
    decision = RulePolicy(project, mode=mode, rules=rules).decide(invocation)
    assert decision.reason
    return decision.verdict


@given(st.text())
def test_the_parser_never_crashes(text: str) -> None:
    assert isinstance(parse_rule(text, "deny"), Rule | RuleProblem)


@given(random_rule)
def test_the_parser_never_crashes_on_rule_like_text(text: str) -> None:
    found = parse_rule(text, "allow")
    assert isinstance(found, Rule | RuleProblem)
    if isinstance(found, RuleProblem):
        assert found.message and str(found).endswith("it is ignored.")


@SETTINGS
@given(st.lists(random_rule, max_size=4), st.lists(random_rule, max_size=3), modes,
       invocations())
def test_decisions_never_crash(project: Path, allow: list[str], deny: list[str], mode: str,
                               spec: tuple[str, dict[str, Any]]) -> None:
    decide(project, mode, {"allow": allow, "deny": deny}, spec)


@SETTINGS
@given(st.lists(random_rule, max_size=3), st.lists(random_rule, max_size=2),
       st.lists(random_rule, max_size=2), modes, invocations(), st.data())
def test_a_deny_rule_never_allows_and_never_lifts_a_denial(
        project: Path, allow: list[str], deny: list[str], ask: list[str],
        mode: str, spec: tuple[str, dict[str, Any]], data: st.DataObject) -> None:
    extra = extra_rule(data, spec)
    rules = {"allow": allow, "deny": deny, "ask": ask}
    before = decide(project, mode, rules, spec)
    after = decide(project, mode, {**rules, "deny": [*deny, extra]}, spec)
    assert RANK[after] <= RANK[before]


@SETTINGS
@given(st.lists(random_rule, max_size=3), st.lists(random_rule, max_size=2),
       st.lists(random_rule, max_size=2), modes, invocations(), st.data())
def test_an_ask_rule_never_allows(
        project: Path, allow: list[str], deny: list[str], ask: list[str],
        mode: str, spec: tuple[str, dict[str, Any]], data: st.DataObject) -> None:
    extra = extra_rule(data, spec)
    rules = {"allow": allow, "deny": deny, "ask": ask}
    before = decide(project, mode, rules, spec)
    after = decide(project, mode, {**rules, "ask": [*ask, extra]}, spec)
    assert RANK[after] <= RANK[before]


@SETTINGS
@given(st.lists(random_rule, max_size=3), st.lists(random_rule, max_size=2),
       st.lists(random_rule, max_size=2),
       st.sampled_from(["default", "acceptEdits", "plan", "bypassPermissions"]), invocations(),
       st.data())
def test_an_allow_rule_never_lifts_a_denial(
        project: Path, allow: list[str], deny: list[str], ask: list[str],
        mode: str, spec: tuple[str, dict[str, Any]], data: st.DataObject) -> None:
    extra = extra_rule(data, spec)
    rules = {"allow": allow, "deny": deny, "ask": ask}
    before = decide(project, mode, rules, spec)
    after = decide(project, mode, {**rules, "allow": [*allow, extra]}, spec)
    if before is Verdict.DENY:
        assert after is Verdict.DENY
    assert RANK[after] >= RANK[before]


@SETTINGS
@given(st.sampled_from(["default", "acceptEdits", "plan", "dontAsk"]), invocations(),
       st.data())
def test_a_rule_that_allows_a_call_denies_it_when_listed_under_deny(
        project: Path, mode: str, spec: tuple[str, dict[str, Any]], data: st.DataObject) -> None:
    text = extra_rule(data, spec)
    base = decide(project, mode, {}, spec)
    if base is not Verdict.ALLOW and decide(project, mode, {"allow": [text]}, spec) is \
            Verdict.ALLOW:
        assert decide(project, mode, {"deny": [text]}, spec) is Verdict.DENY
        assert decide(project, mode, {"allow": [text], "ask": [text]}, spec) is not Verdict.ALLOW

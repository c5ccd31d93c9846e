"""Rule parsing, tool-name aliases, command patterns, domains, and rules from settings files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_ext.permissions import RulePolicy, RuleProblem, Verdict, parse_rule
from agent_ext.permissions.names import ToolSelector, command_rules, selector
from agent_ext.permissions.rules import (
    DYNAMIC,
    Rule,
    RuleOrigin,
    compile_command,
    domain_matches,
    parse_domain,
)
from agent_ext.permissions.tiers import shell_view
from tests.unit.permission_corpus import call, standins


def rule(text: str) -> Rule:
    parsed = parse_rule(text)
    assert isinstance(parsed, Rule), parsed
    return parsed


def problem(text: str) -> RuleProblem:
    parsed = parse_rule(text, "deny", RuleOrigin("project", Path("/p/s.json"), 7))
    assert isinstance(parsed, RuleProblem), parsed
    return parsed


# -- parsing ------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["Bash", "Bash(*)", " Bash ", "Bash( * )"])
def test_bare_and_star_forms_cover_every_call(text: str) -> None:
    parsed = rule(text)
    assert parsed.form == "tool"
    assert parsed.specifier is None


def test_specifier_forms_by_tool() -> None:
    assert rule("Bash(git status)").form == "command"
    assert rule("Read(src/**)").form == "path"
    assert rule("Edit(//etc/hosts)").form == "path"
    assert rule("WebFetch(domain:example.com)").form == "domain"
    assert rule("WebFetch(domain:example.com)").specifier == "example.com"
    assert rule("mcp__github").form == "tool"


def test_escaped_parentheses_are_literal() -> None:
    parsed = rule("Bash(echo \\(hi\\))")
    assert parsed.command is not None
    assert parsed.command.matches("echo (hi)")
    balanced = rule("Bash(echo $(date))")
    assert balanced.command is not None and balanced.command.matches("echo $(date)")


@pytest.mark.parametrize(("text", "words"), [
    ("Bash(", "unbalanced"),
    ("Bash(ls", "unbalanced"),
    ("Bash(ls))", "after its closing"),
    ("Bash(ls) x", "after its closing"),
    ("Bash)", "without a `(`"),
    ("(ls)", "no tool name"),
    ("", "no tool name"),
    ("Bash()", "empty specifier"),
    ("Bash a(ls)", "characters"),
    ("Вash(ls)", "characters"),
    ("Bash(a:* b)", "`:*`"),
    ("WebFetch(example.com)", "domain:"),
    ("WebFetch(domain:)", "domain:"),
    ("WebFetch(domain:exa mple.com)", "domain:"),
    ("mcp__github(x)", "specifier it does not take"),
    ("TodoWrite(x)", "specifier it does not take"),
    ("Read(~root/.ssh)", "~user"),
    ("Bash(\x00)", "NUL"),
])
def test_malformed_rules_say_what_is_wrong(text: str, words: str) -> None:
    found = problem(text)
    assert words in found.message
    sentence = str(found)
    assert sentence.startswith("/p/s.json:7: permission rule ")
    assert sentence.endswith("it is ignored.")


def test_non_string_rules_are_problems() -> None:
    assert isinstance(parse_rule(42), RuleProblem)


def test_origin_is_kept_for_reasons() -> None:
    parsed = parse_rule("Bash(rm *)", "deny", RuleOrigin("project", Path("/p/.agent_ext/s.json"),
                                                         7))
    assert isinstance(parsed, Rule)
    assert parsed.where() == "Bash(rm *) in /p/.agent_ext/s.json:7"
    assert rule("Bash").where() == "Bash in this session's rules"
    code = parse_rule("Bash", "allow", RuleOrigin("code"))
    assert isinstance(code, Rule) and "rules passed to the agent" in code.where()


# -- tool names ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "covered", "not_covered"), [
    ("Bash", ["shell", "bash", "run_shell_command", "Shell"], ["read_file"]),
    ("shell", ["shell", "bash"], ["edit"]),
    ("Read", ["read_file", "grep", "glob", "ls", "grep_search", "list_directory"], ["edit"]),
    ("Edit", ["edit", "write_file", "notebook_edit", "replace"], ["read_file", "shell"]),
    ("Write", ["write_file"], ["edit", "notebook_edit"]),
    ("NotebookEdit", ["notebook_edit"], ["edit"]),
    ("WebFetch", ["web_fetch"], ["shell"]),
    ("Grep", ["grep", "grep_search"], ["glob", "read_file"]),
    ("Glob", ["glob"], ["grep"]),
    ("LS", ["ls", "list_directory"], ["glob"]),
    ("TodoWrite", ["todo_write"], ["edit"]),
    ("ToolSearch", ["tool_search"], ["edit"]),
    ("RunCell", ["run_cell"], ["shell"]),
    ("AskUser", ["ask_user"], ["shell"]),
    ("frobnicate", ["frobnicate", "FROBNICATE"], ["frobnicator"]),
    ("ＢＡＳＨ", ["shell"], []),
    ("Вash", [], ["shell", "bash"]),
])
def test_aliases(name: str, covered: list[str], not_covered: list[str]) -> None:
    from agent_ext.permissions.names import fold

    chosen = selector(fold(name))
    for tool in covered:
        assert chosen.covers(tool), tool
    for tool in not_covered:
        assert not chosen.covers(tool), tool


def test_mcp_selectors() -> None:
    server = rule("mcp__github").selector
    assert server == ToolSelector(server="github")
    assert server.covers("mcp__github__create_issue")
    assert server.covers("renamed", "github")
    assert server.covers("anything", "GitHub")
    assert not server.covers("mcp__githubx__create_issue")
    assert not server.covers("mcp__git__x")
    assert rule("mcp__github__*").selector == server
    one = rule("mcp__github__create_issue").selector
    assert one.covers("mcp__github__create_issue", "github")
    assert not one.covers("mcp__github__get_issue", "github")


# -- command patterns ---------------------------------------------------------------------------

@pytest.mark.parametrize(("spec", "text", "expected"), [
    ("ls *", "ls", True),
    ("ls *", "ls -la", True),
    ("ls *", "lsof", False),
    ("ls*", "lsof", True),
    ("npm run test:*", "npm run test", True),
    ("npm run test:*", "npm run test --watch", True),
    ("npm run test:*", "npm run tests", False),
    ("git * main", "git checkout main", True),
    ("git * main", "git main", True),
    ("git * main", "git checkout mainline", False),
    ("* --version", "python --version", True),
    ("git status", "git status", True),
    ("git status", "git status -s", False),
    ("echo \\*", "echo *", True),
    ("echo \\*", "echo x", False),
    ("a*b*c", "aXXbYYc", True),
    ("a*b*c", "aXXbYY", False),
])
def test_command_patterns(spec: str, text: str, expected: bool) -> None:
    pattern = compile_command(spec)
    assert not isinstance(pattern, str)
    assert pattern.matches(text) is expected


def test_dynamic_words_only_match_a_star_unless_wild() -> None:
    star = compile_command("echo *")
    literal = compile_command("echo hello")
    rm = compile_command("rm *")
    assert not isinstance(star, str) and not isinstance(literal, str) and not isinstance(rm, str)
    words = ["e", "c", "h", "o", " ", DYNAMIC]
    assert star.matches(words)
    assert not literal.matches(words)
    assert literal.matches(words, dynamic_is_wild=True)
    assert not rm.matches([DYNAMIC, " ", "-", "r", "f"])
    assert rm.matches([DYNAMIC, " ", "-", "r", "f"], dynamic_is_wild=True)


def test_shell_views_resolve_wrappers_and_redirects(tmp_path: Path) -> None:
    view = shell_view("sudo rm -rf x > out.txt && echo $(whoami)", str(tmp_path))
    assert [c.command.argv[0] for c in view.commands] == ["rm", "echo", "whoami"]
    assert view.write_paths == (str(tmp_path / "out.txt"),)
    deny = rule("Bash(rm *)")
    assert view.hit_by(deny)
    assert not view.commands[0].allowed_by(deny)
    assert view.commands[0].allowed_by(rule("Bash(sudo rm *)"))
    assert shell_view("echo x > $OUT", str(tmp_path)).dynamic_writes
    assert shell_view("echo x > 'a b'", str(tmp_path)).write_paths == (str(tmp_path / "a b"),)
    sudo_rule = rule("Bash(sudo *)")
    assert shell_view("timeout 5 sudo rm x", str(tmp_path)).hit_by(sudo_rule)


@pytest.mark.parametrize(("command", "rules"), [
    ("git commit -m x", ["Bash(git commit *)"]),
    ("ls", ["Bash(ls)"]),
    ("ls -la /tmp", ["Bash(ls -la /tmp)"]),
    ("npm run test", ["Bash(npm run test *)"]),
    ("git status && git log -1 && ls", ["Bash(git status *)", "Bash(git log *)",
                                        "Bash(ls)"]),
    ("git status; git status", ["Bash(git status *)"]),
    ("echo $(date)", ["Bash(echo *)", "Bash(date)"]),
    ("$X -rf /", []),
    ("sudo apt update", ["Bash(sudo apt update)"]),
    ("python3 -m pytest", ["Bash(python3 -m pytest *)"]),
    ("python3 -m pytest -q tests/x.py", ["Bash(python3 -m pytest *)"]),
    ("git --no-pager log -5", ["Bash(git --no-pager log *)"]),
    ("git -C /p status", ["Bash(git -C /p status *)"]),
    ("npm run test -- --watch=false", ["Bash(npm run test *)"]),
    ("docker compose up -d", ["Bash(docker compose up *)"]),
    ("make test 2>&1 | tail -5", ["Bash(make test *)", "Bash(tail -5)"]),
])
def test_always_allow_command_prefixes(command: str, rules: list[str]) -> None:
    assert command_rules(command) == rules
    assert "Bash" not in rules
    for text in rules:
        assert isinstance(parse_rule(text), Rule)


def test_derived_prefix_rules_allow_the_command_again(tmp_path: Path) -> None:
    for command in ["git commit -m 'a b'", "ls", "echo (x) | cat", "npm run test && ls -la",
                    "sudo -u root apt update", "echo '*' \\(", "cat f:* "]:
        view = shell_view(command, str(tmp_path))
        rules = [rule(t) for t in command_rules(command)]
        if view.complete:
            assert all(any(c.allowed_by(r) for r in rules) for c in view.commands), command


# -- domains ------------------------------------------------------------------------------------

def test_domains() -> None:
    assert parse_domain("domain:Example.COM") == "example.com"
    assert parse_domain("domain:*.example.com") == "example.com"
    assert parse_domain("host:example.com") is None
    assert domain_matches("example.com", "example.com")
    assert domain_matches("example.com", "a.b.example.com")
    assert not domain_matches("example.com", "badexample.com")
    assert not domain_matches("example.com", "example.com.evil.net")
    assert not domain_matches("example.com", "")


# -- rules from settings files ------------------------------------------------------------------

def write_settings(path: Path, permissions: dict[str, object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"permissions": permissions}, indent=2), encoding="utf-8")
    return path


def test_a_malformed_rule_is_reported_with_file_and_line_and_the_others_apply(
        tmp_path: Path) -> None:
    project = tmp_path / "project"
    settings = write_settings(project / ".agent_ext/settings.json", {
        "allow": ["Bash(git status)"],
        "deny": ["Bash(rm *)", "Bash(curl", "Read(secrets/**)"],
    })
    policy = RulePolicy(project)
    tools = standins()
    [report] = [p for p in policy.problems if "Bash(curl" in p]
    lines = settings.read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "Bash(curl" in text)
    assert report.startswith(f"{settings}:{line}: permission rule 'Bash(curl'")
    assert "unbalanced parentheses" in report
    rm = policy.decide(call(tools["shell"], project, command="rm -rf x"))
    assert rm.verdict is Verdict.DENY
    rm_line = next(i for i, text in enumerate(lines, 1) if "Bash(rm *)" in text)
    assert f"Bash(rm *) in {settings}:{rm_line}" in rm.reason
    assert policy.decide(call(tools["read_file"], project, path="secrets/k")).verdict is \
        Verdict.DENY
    assert policy.decide(call(tools["shell"], project, command="git status")).verdict is \
        Verdict.ALLOW


def test_rules_from_every_source_apply_deny_first(tmp_path: Path) -> None:
    project = tmp_path / "project"
    home_config = Path.home() / ".agent_ext"
    write_settings(home_config / "settings.json", {"deny": ["Bash(git push *)"]})
    write_settings(project / ".agent_ext/settings.local.json", {"ask": ["Bash(git commit *)"]})
    write_settings(project / ".agent_ext/settings.json", {"allow": ["Bash(git *)"]})
    policy = RulePolicy(project, rules={"deny": ["Bash(git reset *)"]})
    policy.add_rule("allow", "Bash(git fetch)")
    shell = standins()["shell"]

    def verdict(command: str) -> Verdict:
        return policy.decide(call(shell, project, command=command)).verdict

    assert verdict("git push origin") is Verdict.DENY
    assert verdict("git commit -m x") is Verdict.ASK
    assert verdict("git reset --hard") is Verdict.DENY
    assert verdict("git log") is Verdict.ALLOW
    assert verdict("git fetch") is Verdict.ALLOW
    assert "settings.json" in policy.decide(call(shell, project, command="git push x")).reason


def test_unknown_rule_kinds_and_modes_are_reported(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_settings(project / ".agent_ext/settings.json", {"defaultMode": "yolo-ish"})
    policy = RulePolicy(project, rules={"permit": ["Bash"]})
    assert any("'permit'" in p for p in policy.problems)
    assert any("yolo-ish" in p and "default mode" in p for p in policy.problems)
    assert policy.mode.value == "default"

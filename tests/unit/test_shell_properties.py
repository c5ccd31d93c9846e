"""Properties of shell decisions: a command built to touch what a deny (or ask) rule names is
never allowed, however it is composed, and no composition crashes the policy.

Each example picks a rule and an action that certainly does what the rule forbids (one of many
spellings), then hides it among other commands, redirections, expansions, globs, braces, `cd`,
assignments and wrappers.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_ext.permissions import RulePolicy, Verdict
from tests.unit.permission_corpus import call, standins

SHELL = standins()["shell"]
SETTINGS = settings(max_examples=400, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
MODES = ["default", "acceptEdits", "dontAsk", "bypassPermissions", "auto", "plan"]

SECRET = ["secrets/key.txt", "./secrets/key.txt", "src/../secrets/key.txt", "secrets/*",
          "secret?/key.txt", "s{ecrets,x}/key.txt", "$x/key.txt", "\"$x\"/key.txt",
          "$(echo secrets)/key.txt", "`echo secrets`/key.txt", "lnk/key.txt", "secrets/[k]*",
          "{project}/secrets/key.txt", "$PWD/secrets/key.txt", "'secrets'/key.txt"]
SSH = ["~/.ssh/id_rsa", "$HOME/.ssh/id_rsa", "${HOME}/.ssh/id_rsa", "\"$HOME\"/.ssh/id_rsa",
       "~/.ss?/id_rsa", "~/.{ssh,x}/id_rsa", "{home}/.ssh/id_rsa", "~/./.ssh/*"]
VICTIM = ["victim", "./victim", "src/../victim", "vic*m", "{victim,x}", "$v", "\"victim\"",
          "{project}/victim"]
READERS = ["cat {p}", "head -n 1 {p}", "tail {p}", "base64 {p}", "xxd {p}", "sort {p}",
           "awk 1 {p}", "sed -n p {p}", "grep -e x {p}", "dd if={p}", "cat < {p}",
           "echo $(<{p})", "cp {p} /tmp/copy", "tar czf /tmp/t.tgz {p}", "less {p}",
           "jq . {p}", "diff {p} README.md", "while read l; do :; done < {p}"]
RECURSIVE = ["grep -r VALUE .", "grep -R VALUE {project}", "rg VALUE", "tar czf /tmp/t .",
             "cp -r . /tmp/c", "find . -type f", "ls -R", "zip -r /tmp/z .", "du -a",
             "rsync -a . /tmp/c"]
WRITERS = ["echo x > {p}", "echo x >> {p}", "echo x &> {p}", "printf x >| {p}", "tee {p}",
           "sort -o {p} README.md", "dd of={p}", "cp README.md {p}", "touch {p}",
           "find . -fprint {p}", "sed -n 'w {p}' README.md", "truncate -s 0 {p}",
           "curl -o {p} https://example.com/", "uniq README.md {p}", "install README.md {p}",
           "echo x 2> {p}", "ln -s README.md {p}", "mv README.md {p}"]
RM = ["rm -rf x", "rm -fr x", "rm -r -f x", "rm --recursive --force x", "rm -Rf x",
      "/bin/rm -rf x", "rm x -rf", "\\rm -rf x", "command rm -fr x"]
PUSH = ["git push", "git -C . push", "git -c a=b push", "git --git-dir=.git push",
        "git --no-pager push", "git -C {project} push origin main", "/usr/bin/git push -f"]
NETWORK = ["cat < /dev/tcp/example.com/80", "echo x > /dev/udp/example.com/53",
           "cat < /dev//tcp/example.com/80", "exec 3<>/dev/tcp/example.com/80"]

OTHERS = ["echo hi", "ls -la", "git status", "true", "cat README.md", "x=secrets", "cd src",
          "cd ~", "cd $D", "pushd src", "echo $HOME", "grep -rn foo src", "sort README.md",
          "wc -l *", "echo {a,b}", "make test 2>&1", "cmd 2>/dev/null"]
WRAP = ["{c}", "timeout 5 {c}", "env X=1 {c}", "sudo {c}", "nice -n 5 {c}", "bash -c '{c}'",
        "sh -c \"{c}\"", "( {c} )", "{{ {c}; }}", "if true; then {c}; fi", "nohup {c}",
        "for i in 1; do {c}; done"]
JOIN = [" && ", "; ", " | ", " || ", "\n"]


def _quotable(command: str, wrapper: str) -> bool:
    return not (("'{c}'" in wrapper and "'" in command) or ("\"{c}\"" in wrapper and (
        '"' in command or "$" in command or "`" in command)))


@st.composite
def attacks(draw: st.DrawFn) -> tuple[str, str, str]:
    """(kind of rule, rule, a command that does what the rule forbids)."""
    kind = draw(st.sampled_from(["read", "ssh", "recursive", "edit", "rm", "push", "net"]))
    if kind == "read":
        rule, action = "Read(./secrets/**)", draw(st.sampled_from(READERS)).replace(
            "{p}", draw(st.sampled_from(SECRET)))
    elif kind == "ssh":
        rule, action = "Read(~/.ssh/**)", draw(st.sampled_from(READERS)).replace(
            "{p}", draw(st.sampled_from(SSH)))
    elif kind == "recursive":
        rule, action = "Read(./secrets/**)", draw(st.sampled_from(RECURSIVE))
    elif kind == "edit":
        writer = draw(st.sampled_from(WRITERS))
        # Inside quotes (sed's `w FILE`) the shell expands nothing: literal spellings only.
        spellings = VICTIM if "'" not in writer else ["victim", "./victim", "src/../victim",
                                                       "{project}/victim"]
        rule, action = "Edit(./victim)", writer.replace("{p}", draw(st.sampled_from(spellings)))
    elif kind == "rm":
        rule, action = "Bash(rm -rf *)", draw(st.sampled_from(RM))
    elif kind == "push":
        rule, action = "Bash(git push *)", draw(st.sampled_from(PUSH))
    else:
        rule = draw(st.sampled_from(["Bash(curl *)", "WebFetch", "WebFetch(domain:x.org)"]))
        action = draw(st.sampled_from(NETWORK))
    wrapper = draw(st.sampled_from(WRAP))
    if _quotable(action, wrapper):
        action = wrapper.replace("{c}", action)
    parts = draw(st.lists(st.sampled_from(OTHERS), max_size=3))
    position = draw(st.integers(0, len(parts)))
    parts.insert(position, action)
    joins = [draw(st.sampled_from(JOIN)) for _ in parts[1:]]
    command = parts[0] + "".join(j + p for j, p in zip(joins, parts[1:], strict=True))
    if draw(st.booleans()):
        command = draw(st.sampled_from(["x=secrets; ", "v=victim; ", "D=secrets; "])) + command
    return kind, rule, command


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("shell-props")
    project, home = base / "project", base / "home"
    for path in ("secrets/key.txt", "src/a.py", "README.md", ".git/config", "victim"):
        (project / path).parent.mkdir(parents=True, exist_ok=True)
        (project / path).write_text("VALUE")
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("PRIVATE")
    (project / "lnk").symlink_to(project / "secrets", target_is_directory=True)
    return {"project": project.resolve(), "home": home.resolve()}


def decide(layout: dict[str, Path], monkeypatch: pytest.MonkeyPatch, command: str, mode: str,
           rules: dict[str, list[str]]) -> tuple[Verdict, str]:
    monkeypatch.setenv("HOME", str(layout["home"]))
    for key, value in layout.items():
        command = command.replace("{" + key + "}", str(value))
    project = layout["project"]
    decision = RulePolicy(project, mode=mode, rules=rules).decide(
        call(SHELL, project, command=command))
    assert decision.reason
    return decision.verdict, decision.reason


@SETTINGS
@given(attacks(), st.sampled_from(MODES),
       st.sampled_from([["Bash"], ["Bash(*)"], ["Bash", "Edit", "Read"], ["Bash(cat *)"]]))
def test_a_deny_rule_is_never_bypassed(layout: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                       attack: tuple[str, str, str], mode: str,
                                       allow: list[str]) -> None:
    _, rule, command = attack
    verdict, reason = decide(layout, monkeypatch, command, mode, {"allow": allow, "deny": [rule]})
    assert verdict is not Verdict.ALLOW, (command, reason)
    assert "VALUE" not in reason and "PRIVATE" not in reason


@SETTINGS
@given(attacks(), st.sampled_from(MODES))
def test_an_ask_rule_is_never_bypassed(layout: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                       attack: tuple[str, str, str], mode: str) -> None:
    _, rule, command = attack
    verdict, reason = decide(layout, monkeypatch, command, mode,
                             {"allow": ["Bash"], "ask": [rule]})
    assert verdict is not Verdict.ALLOW, (command, reason)


@SETTINGS
@given(attacks(), st.sampled_from(MODES), st.lists(st.sampled_from(
    ["Bash", "Bash(echo *)", "Edit(./src/**)", "Read(./secrets/**)", "Edit(./victim)",
     "Bash(git *)", "WebFetch", "Read", "Edit", "Bash(rm -rf *)", "Bash(cat *)"]), max_size=4),
    st.lists(st.sampled_from(["Bash(git push *)", "Read(~/.ssh/**)", "Edit(.git/**)"]),
             max_size=2))
def test_compositions_never_crash(layout: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                  attack: tuple[str, str, str], mode: str, allow: list[str],
                                  deny: list[str]) -> None:
    decide(layout, monkeypatch, attack[2], mode, {"allow": allow, "deny": deny})


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.sampled_from(list("ab ~$*?{},/.<>|&;'\"`()x=\\-\n")), max_size=40))
def test_arbitrary_text_never_crashes(layout: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                      text: str) -> None:
    decide(layout, monkeypatch, text, "default",
           {"allow": ["Bash(echo *)"], "deny": ["Read(./secrets/**)", "Bash(rm -rf *)"]})

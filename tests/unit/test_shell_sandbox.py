"""Shell attacks through the whole pipeline (``Agent.call_tool``) with a real shell in a sandbox
and an approver that rejects everything: nothing denied runs, victim files stay as they were,
no protected content reaches the result, and common commands still run unasked."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_ext import Agent
from agent_ext.agent import ApprovalRequest
from agent_ext.models import ScriptedModel

SECRET = "SECRET-VALUE-41"
RULES = {"allow": ["Bash(echo *)", "Bash(cat *)", "Bash(grep *)", "Bash(sort *)",
                   "Bash(dd *)", "Bash(tee *)", "Bash(sed -n *)", "Bash(git *)", "Bash(cd *)",
                   "Bash(find *)", "Bash(awk *)", "Bash(ls *)", "Edit(./src/**)"],
         "deny": ["Read(./secrets/**)", "Read(~/.ssh/**)", "Bash(git push *)",
                  "Bash(curl *)"]}
ATTACKS = [
    "cat $HOME/.ssh/id_rsa", "cat ~/.ss?/id_rsa", "cat ~/.{ssh,x}/id_rsa",
    "x=secrets; cat $x/key.txt", "cd ~ && cat .ssh/id_rsa", "cat < secrets/key.txt",
    "echo $(<secrets/key.txt)", "dd if=secrets/key.txt", "grep -r VALUE .", "cat secrets/*",
    "echo pwned > ./victim", "echo pwned >> victim", "sort -o victim README.md",
    "dd if=README.md of=victim", "find . -name README.md -fprint victim",
    "sed -n 'w victim' README.md", "echo pwned | tee victim", "git -C . push",
    "git --no-pager push", "sed -n '1e echo pwned > victim' README.md",
    "awk 'BEGIN{system(\"echo pwned > victim\")}'", "cat < /dev/tcp/127.0.0.1/9",
    "find . -name README.md -exec sh -c 'echo pwned > victim' \\;",
]
SAFE = ["echo hi", "cat README.md", "grep -rn hello src/", "ls -la", "git status",
        "echo x > src/out.txt", "sort README.md 2>/dev/null"]


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    project, home = tmp_path / "project", tmp_path / "home"
    for path, text in (("secrets/key.txt", SECRET), ("README.md", "hello\n"),
                       ("src/a.py", "hello = 1\n"), ("victim", "original\n")):
        (project / path).parent.mkdir(parents=True, exist_ok=True)
        (project / path).write_text(text)
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(SECRET)
    monkeypatch.setenv("HOME", str(home))
    return project


def agent(project: Path, asked: list[ApprovalRequest]) -> Agent:
    async def reject(request: ApprovalRequest) -> str:
        asked.append(request)
        return "reject"

    return Agent(ScriptedModel([]), cwd=project, rules=RULES, approver=reject, plugins=False,
                 mcp=False)


async def test_attacks_do_not_run(sandbox: Path) -> None:
    asked: list[ApprovalRequest] = []
    shell = agent(sandbox, asked)
    for command in ATTACKS:
        before = len(asked)
        result = await shell.call_tool("shell", {"command": command})
        assert result.error is not None, command
        assert SECRET not in result.text and SECRET not in result.error.message, command
        assert (sandbox / "victim").read_text() == "original\n", command
        if len(asked) > before:
            assert SECRET not in asked[-1].reason


async def test_common_commands_run_unasked(sandbox: Path) -> None:
    asked: list[ApprovalRequest] = []
    shell = agent(sandbox, asked)
    for command in SAFE:
        result = await shell.call_tool("shell", {"command": command})
        assert result.error is None, (command, result.error)
    assert not asked
    assert (sandbox / "src" / "out.txt").read_text() == "x\n"

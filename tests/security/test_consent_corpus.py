"""The consent corpus through the whole pipeline: every attack refused or asked, nothing changed,
nothing protected shown; every safe call run unasked.

Each case gets a fresh sandbox (project, outside folder, home) and a real Agent whose approver
rejects whatever it is asked. Attacks in class 6 first approve another call with "always allow".
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from agent_ext import Agent
from agent_ext.agent.approval import ApprovalRequest, Decision
from agent_ext.core import ErrorCode, ToolResult
from agent_ext.models import ScriptedModel
from tests.security.corpus import ATTACKS, SAFE, Attack, Safe
from tests.security.sandbox import LEAK, Sandbox, make_sandbox

#: A refusal: the policy denied the call, or the call was malformed (a path with a NUL byte).
REFUSED = {ErrorCode.EXECUTION_DENIED, ErrorCode.INVALID_TOOL_PARAMS}


class Approver:
    """Answers "always allow" for the first ``always`` requests, then rejects, recording all.

    While ``preparing`` (the reads an attack needs first, so that a write is judged by the
    permission layer rather than refused by the prior-read rule) it approves, unrecorded.
    """

    def __init__(self, always: int = 0) -> None:
        self.always = always
        self.requests: list[ApprovalRequest] = []
        self.preparing = False

    async def __call__(self, request: ApprovalRequest) -> Decision:
        if self.preparing:
            return Decision.approve()
        self.requests.append(request)
        if len(self.requests) <= self.always:
            return Decision.always(request.scopes[0] if request.scopes else None)
        return Decision.reject("the corpus rejects every request")


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    box = make_sandbox(tmp_path)
    monkeypatch.setenv("HOME", str(box.home))
    monkeypatch.setenv("AGENT_EXT_CONFIG_DIR", str(box.home / ".agent_ext"))
    monkeypatch.chdir(box.project)
    return box


def _fill(value: Any, box: Sandbox) -> Any:
    if isinstance(value, str):
        return box.fill(value)
    if isinstance(value, dict):
        return {k: _fill(v, box) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_fill(v, box) for v in value)
    return value


def _agent(box: Sandbox, case: Attack | Safe, approver: Approver) -> Agent:
    rules = {k: [box.fill(r) for r in v] for k, v in case.rules().items()} if isinstance(
        case, Attack) else {"allow": list(case.allow)}
    return Agent(ScriptedModel(["done"] * 3), cwd=box.project, mode=case.mode, rules=rules,
                 approver=approver, plugins=False, mcp=True)


def _shown(result: ToolResult) -> str:
    return f"{result.text}\n{result.display}"


def _code(result: ToolResult) -> str | None:
    return result.error.code if result.error else None


def _git(box: Sandbox) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q", str(box.project)], check=True, timeout=30)
    subprocess.run(["git", "-C", str(box.project), "add", "README.md", "src"], check=True,
                   timeout=30)
    subprocess.run(["git", "-C", str(box.project), "-c", "user.name=t", "-c",
                    "user.email=t@t", "commit", "-qm", "init"], check=True, timeout=30)


_TARGETS = {"edit": "file_path", "write_file": "file_path", "notebook_edit": "notebook_path"}


async def _read_targets(agent: Agent, approver: Approver, case: Attack, box: Sandbox) -> bool:
    """Read the file a write targets, as a model would first, when it exists; whether a rule
    refused that read (then the write's prior-read refusal is a refusal too)."""
    key = _TARGETS.get(case.tool)
    target = case.args.get(key or "", "")
    if not target or "\x00" in target or "\n" in target:
        return False
    path = Path(box.fill(target))
    path = path if path.is_absolute() else box.project / path
    if not path.is_file():
        return False
    approver.preparing = True
    try:
        read = await asyncio.wait_for(agent.call_tool("read_file", {"file_path": str(path)}), 60)
    finally:
        approver.preparing = False
    return _code(read) == ErrorCode.EXECUTION_DENIED


def test_the_corpus_covers_every_class() -> None:
    counts = Counter(a.klass for a in ATTACKS)
    assert sorted(counts) == [1, 2, 3, 4, 5, 6, 7]
    assert len(ATTACKS) >= 300 and min(counts.values()) >= 20, counts
    assert len({a.ident for a in ATTACKS}) > 0.9 * len(ATTACKS)
    assert len(SAFE) >= 30


@pytest.mark.parametrize("case", ATTACKS, ids=[a.ident for a in ATTACKS])
async def test_attack_is_refused_or_asked(case: Attack, sandbox: Sandbox) -> None:
    box = sandbox
    if case.git:
        import shutil

        shutil.rmtree(box.project / ".git")
        _git(box)
    for rel, text in case.files:
        path = box.project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(box.fill(text))
    approver = Approver(always=len(case.approved_first))
    agent = _agent(box, case, approver)
    try:
        unreadable = await _read_targets(agent, approver, case, box)
        for tool, args in case.approved_first:
            first = await asyncio.wait_for(agent.call_tool(tool, _fill(args, box)), 60)
            assert not first.is_error or _code(first) == ErrorCode.EXECUTION_FAILED, first.text
        assert len(approver.requests) == len(case.approved_first), "the first call did not ask"
        before = box.fingerprint()
        if case.files:
            run = await asyncio.wait_for(agent.run("hello"), 60)
            assert LEAK not in run.text
            await asyncio.sleep(0.2)
        result = (await asyncio.wait_for(agent.call_tool(case.tool, _fill(case.args, box)), 60)
                  if case.tool else None)
    finally:
        await agent.aclose()
    if result is not None:
        asked = len(approver.requests) > len(case.approved_first)
        refused = REFUSED | ({ErrorCode.EDIT_REQUIRES_PRIOR_READ} if unreadable else set())
        assert asked or _code(result) in refused, (
            f"ran unasked ({_code(result)}): {result.text[:300]}")
        assert LEAK not in _shown(result), result.text[:300]
    after = box.fingerprint()
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert not changed, changed


@pytest.mark.parametrize("case", SAFE, ids=[s.ident for s in SAFE])
async def test_safe_call_runs_unasked(case: Safe, sandbox: Sandbox) -> None:
    box = sandbox
    if case.git:
        import shutil

        shutil.rmtree(box.project / ".git")
        _git(box)
        (box.project / "package.json").write_text(json.dumps({"scripts": {"test": "true"}}))
        (box.project / "Makefile").write_text("test:\n\t@true\n")
    approver = Approver()
    agent = _agent(box, case, approver)
    try:
        result = await asyncio.wait_for(agent.call_tool(case.tool, _fill(case.args, box)), 60)
    finally:
        await agent.aclose()
    assert not approver.requests, approver.requests[0].reason
    assert _code(result) != ErrorCode.EXECUTION_DENIED, result.text

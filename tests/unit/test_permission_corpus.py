"""The decision corpus: (rules, mode, call) → verdict, bypass attempts included.

Every row that expects ask or deny is also an attempt to get that action to run unasked; the
table asserts each one fails.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_ext.permissions import RulePolicy, Verdict
from tests.unit.permission_corpus import CORPUS, Case, call, standins


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    project = tmp_path / "project"
    outside = tmp_path / "outside"
    for path in ("src/a.py", "src/.env", "secrets/key", "secrets/sub/k", ".git/config",
                 "nb.ipynb"):
        (project / path).parent.mkdir(parents=True, exist_ok=True)
        (project / path).write_text("x")
    outside.mkdir()
    (outside / "passwd").write_text("root:x:0:0")
    (project / "link").symlink_to(outside, target_is_directory=True)
    return {"project": project.resolve(), "outside": outside.resolve(),
            "home": Path.home().resolve()}


def fill(text: str, layout: dict[str, Path]) -> str:
    for key, value in layout.items():
        text = text.replace("{" + key + "}", str(value))
    return text


def case_id(case: Case) -> str:
    rules = ",".join(case.allow + case.deny + case.ask)
    return f"{case.mode}:{case.tool}:{case.arg[:40]}:{rules[:40]}"


def test_the_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 150
    assert {c.expect for c in CORPUS} == {"allow", "ask", "deny"}


@pytest.mark.parametrize("case", CORPUS, ids=[case_id(c) for c in CORPUS])
def test_corpus(case: Case, layout: dict[str, Path]) -> None:
    project = layout["project"]
    rules = {kind: [fill(r, layout) for r in texts] for kind, texts in case.rules().items()}
    policy = RulePolicy(project, mode=case.mode, rules=rules,
                        additional_directories=[fill(d, layout) for d in case.dirs])
    tool = standins()[case.tool]
    arg = fill(case.arg, layout)
    params = ({"command": arg} if case.tool == "shell" else {"url": arg}
              if case.tool == "web_fetch" else {"path": arg} if arg else {})
    decision = policy.decide(call(tool, project, **params))
    assert decision.verdict is Verdict(case.expect), decision.reason
    assert decision.reason

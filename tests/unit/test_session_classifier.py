"""``AgentExt.auto_classifier``: checked when set, given to the agent's policy, live."""

from __future__ import annotations

from pathlib import Path

import pytest
from traitlets import TraitError

from agent_ext.jupyter.config import AgentExt
from agent_ext.jupyter.session import Session
from tests.unit import auto_classifiers


@pytest.mark.parametrize(("spec", "says"), [
    ("no_colon", "must be written 'module:function'"),
    ("tests.unit.nowhere:f", "cannot be loaded"),
    ("tests.unit.auto_classifiers:missing", "cannot be loaded"),
    ("tests.unit.auto_classifiers:NOT_A_FUNCTION", "not a function"),
])
def test_a_bad_spec_is_refused_and_says_why(spec: str, says: str) -> None:
    config = AgentExt()
    with pytest.raises((ValueError, TypeError, TraitError), match=says):
        config.auto_classifier = spec
    assert config.auto_classifier == ""


def test_the_classifier_reaches_the_policy_and_follows_changes(tmp_path: Path) -> None:
    session = Session()
    session.config.auto_classifier = "tests.unit.auto_classifiers:echo_only"
    agent = session.agent(model="demo", cwd=str(tmp_path), plugins=False, mcp=False)
    try:
        assert agent.policy.classifier is auto_classifiers.echo_only  # type: ignore[attr-defined]
        session.config.auto_classifier = ""
        assert agent.policy.classifier is None  # type: ignore[attr-defined]
        session.config.auto_classifier = "tests.unit.auto_classifiers:echo_only"
        assert agent.policy.classifier is auto_classifiers.echo_only  # type: ignore[attr-defined]
    finally:
        session.close()


async def test_auto_mode_runs_what_the_classifier_allows_and_refuses_the_rest(
        tmp_path: Path) -> None:
    session = Session()
    session.config.mode = "auto"
    session.config.auto_classifier = "tests.unit.auto_classifiers:echo_only"
    agent = session.agent(model="demo", cwd=str(tmp_path), plugins=False, mcp=False)
    try:
        ran = await agent.call_tool("shell", {"command": "echo classified"})
        assert ran.error is None and "classified" in ran.text
        refused = await agent.call_tool("shell", {"command": "touch made"})
        assert refused.error is not None and "classifier" in refused.text
        assert not (tmp_path / "made").exists()
    finally:
        session.close()

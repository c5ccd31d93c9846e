"""Auto-mode classifiers named by ``AgentExt.auto_classifier`` in the session tests."""

from __future__ import annotations

from typing import Any

NOT_A_FUNCTION = 42


def echo_only(invocation: Any, text: str) -> str:
    """Allow shell commands that only echo; refuse the rest."""
    return "allow" if text.strip().startswith("echo ") else "deny"

"""``%agent mode/allow/deny/ask`` against whichever permission policy the agent has.

A policy with ``set_mode``/``add_rule`` (the rule-based ``RulePolicy``) takes them; any other
policy (the fixed one, or a custom one) gets a ``UsageError`` that says so.
"""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError

NO_RULES = ("this agent's permission policy ({name}) takes no modes or rules; give the agent a "
            "RulePolicy for them, approve each call in its widget, or list tool names in "
            "c.AgentExt.headless_allow for headless runs.")
KINDS = ("allow", "deny", "ask")


def _method(policy: Any, name: str) -> Any:
    method = getattr(policy, name, None)
    if method is None:
        raise UsageError(NO_RULES.format(name=type(policy).__name__))
    return method


def supports_modes(policy: Any) -> bool:
    return callable(getattr(policy, "set_mode", None))


def set_classifier(policy: Any, classifier: Any) -> bool:
    """Give the policy its auto-mode classifier (None removes it); False when it takes none."""
    if not hasattr(policy, "classifier"):
        return False
    policy.classifier = classifier
    return True


def current_mode(policy: Any) -> str | None:
    """The policy's mode name, or None when it has no modes."""
    mode = getattr(policy, "mode", None)
    return None if mode is None else str(getattr(mode, "value", mode))


def set_mode(policy: Any, name: str) -> str:
    """Switch the policy's mode; returns the mode's canonical name."""
    setter = _method(policy, "set_mode")
    try:
        found = setter(name)
    except ValueError as exc:
        raise UsageError(f"{exc}. Type e.g. `%agent mode acceptEdits`.") from None
    return str(getattr(found, "value", found))


def add_rule(policy: Any, kind: str, text: str) -> str:
    """Add one rule of ``kind`` (allow, deny, ask) for this session; returns it as stored."""
    adder = _method(policy, "add_rule")
    found = adder(kind, text)
    if _is_problem(found):
        problem = str(found).rstrip(".")
        raise UsageError(f"{problem}. Rules look like `Bash(git status:*)`, `Edit(src/**)` or "
                         f"a tool name; type e.g. `%agent {kind} read_file`.")
    return str(getattr(found, "text", text))


def remove_rule(policy: Any, text: str) -> list[str]:
    """Remove the rule written ``text`` from every kind; the kinds it was removed from."""
    remover = _method(policy, "remove_rule")
    return [kind for kind in KINDS if remover(kind, text)]


def rules(policy: Any) -> dict[str, list[str]]:
    """The policy's rules by kind (empty when it has none)."""
    lister = getattr(policy, "rules", None)
    if not callable(lister):
        return {}
    return {kind: [str(getattr(r, "text", r)) for r in lister(kind)] for kind in KINDS}


def _is_problem(found: object) -> bool:
    try:
        from agent_ext.permissions.rules import RuleProblem  # noqa: PLC0415
    except ImportError:
        return False
    return isinstance(found, RuleProblem)

"""Permissions: who decides whether a call runs unasked, is asked about, or is refused."""

from .decide import RulePolicy
from .modes import Classifier, Mode
from .policy import FixedPolicy, PermissionDecision, PermissionPolicy, Verdict
from .rules import Rule, RuleOrigin, RuleProblem, parse_rule

__all__ = [
    "Classifier",
    "FixedPolicy",
    "Mode",
    "PermissionDecision",
    "PermissionPolicy",
    "Rule",
    "RuleOrigin",
    "RulePolicy",
    "RuleProblem",
    "Verdict",
    "parse_rule",
]

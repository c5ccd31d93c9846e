"""The decision interface the agent asks before every call, and the runtime's fixed policy.

The fixed policy is deliberately simple: the read tier runs when the tool itself allows it,
anything else asks, and "always allow" adds the tool to the session's allow list. The rule-based
policy (modes, Claude-style rules, shell analysis) replaces it behind the same interface.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Protocol

from agent_ext.core import Permission, Tier, ToolInvocation


class Verdict(str, enum.Enum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


@dataclass(frozen=True)
class PermissionDecision:
    """A verdict and why: the model reads the reason on deny, the user on ask."""

    verdict: Verdict
    reason: str
    rule: str | None = None


class PermissionPolicy(Protocol):
    """Decides each call; remembers what the user chose to always allow."""

    def decide(self, invocation: ToolInvocation[Any]) -> PermissionDecision: ...

    def always_allow(self, invocation: ToolInvocation[Any], scope: str | None,
                     persist: str) -> str:
        """Add the narrowest sensible allow rule for this call; returns the rule added."""
        ...

    def scopes(self, invocation: ToolInvocation[Any]) -> tuple[str, ...]:
        """What "always allow" may cover for this call, narrowest first."""
        ...


class FixedPolicy:
    """Read tier runs (when the tool agrees); everything else asks; deny when the tool says so."""

    def __init__(self) -> None:
        self.session_allow: set[str] = set()

    def decide(self, invocation: ToolInvocation[Any]) -> PermissionDecision:
        name = invocation.tool.name
        opinion = invocation.default_permission()
        if opinion is Permission.DENY:
            return PermissionDecision(Verdict.DENY, f"{name} refuses this call")
        if name in self.session_allow:
            return PermissionDecision(Verdict.ALLOW, f"{name} is allowed for this session",
                                      rule=name)
        if opinion is Permission.ALLOW and invocation.tier() is Tier.READ:
            return PermissionDecision(Verdict.ALLOW, "read-only call")
        tier = invocation.tier().name.lower()
        return PermissionDecision(Verdict.ASK, f"{name} needs approval ({tier} tier)")

    def always_allow(self, invocation: ToolInvocation[Any], scope: str | None,
                     persist: str) -> str:
        self.session_allow.add(invocation.tool.name)
        return invocation.tool.name

    def scopes(self, invocation: ToolInvocation[Any]) -> tuple[str, ...]:
        return ("tool",)

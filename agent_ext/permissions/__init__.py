"""Permissions: who decides whether a call runs unasked, is asked about, or is refused."""

from .policy import FixedPolicy, PermissionDecision, PermissionPolicy, Verdict

__all__ = ["FixedPolicy", "PermissionDecision", "PermissionPolicy", "Verdict"]

"""The agent session and its loop."""

from .agent import Agent, Approver, RunResult, Verdict

__all__ = ["Agent", "Approver", "RunResult", "Verdict"]

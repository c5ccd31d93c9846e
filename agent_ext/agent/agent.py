"""The Agent: a session that holds the conversation, the registry and the tool-call pipeline.

This is the foundation's minimal agent: every call goes through the full pipeline (lookup,
build, permission, approval, execute, budgets), the loop runs calls in the model's order, and
permissions follow a fixed policy (read tier with the tool's consent runs; anything else asks the
approver; no approver means deny). The runtime issue replaces the policy and adds concurrency,
events, streaming providers and compaction behind the same methods.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agent_ext.core import (
    ConfirmationDetails,
    ErrorCode,
    ExecControl,
    Permission,
    Registry,
    TextPart,
    Tier,
    ToolContext,
    ToolInvocation,
    ToolResult,
    UnknownToolError,
)
from agent_ext.core.budget import OutputBudget, SpillStore
from agent_ext.core.errors import ToolLoadError
from agent_ext.core.plugins import load_plugins
from agent_ext.models import Message, ModelRequest, ScriptedModel, ToolCall, ToolReturn
from agent_ext.models.scripted import Step
from agent_ext.tools import register_builtins

Verdict = Literal["approve", "reject", "always"]
Approver = Callable[[ConfirmationDetails], Awaitable[Verdict]]

SYSTEM_PROMPT = (
    "You are agent_ext, a coding agent working inside the user's Jupyter kernel. "
    "Use the tools to read before you change anything, and keep changes minimal."
)


@dataclass
class RunResult:
    """What a run produced: the final text, the new messages and every tool call made."""

    text: str
    messages: list[Message] = field(default_factory=list)
    tool_calls: list[tuple[ToolCall, ToolResult]] = field(default_factory=list)


class Agent:
    """One agent session: ``await agent.run(prompt)`` or ``await agent.call_tool(name, args)``."""

    def __init__(self, model: ScriptedModel | list[Step] | None = None, *, cwd: str | Path = ".",
                 approver: Approver | None = None, max_turns: int = 50,
                 plugins: bool = True) -> None:
        self.model = model if isinstance(model, ScriptedModel) else ScriptedModel(model or [])
        self.registry = Registry()
        register_builtins(self.registry)
        if plugins:
            load_plugins(self.registry)
        self.context = ToolContext(cwd=Path(cwd).resolve(), registry=self.registry)
        self.approver = approver
        self.max_turns = max_turns
        self.messages: list[Message] = []
        self._store = SpillStore()
        self.budget = OutputBudget(self._store)
        self._always: set[str] = set()

    @property
    def cwd(self) -> Path:
        return self.context.cwd

    def system_prompt(self) -> str:
        parts = [SYSTEM_PROMPT, f"Working directory: {self.cwd}"]
        summary = self.registry.deferred_summary()
        if summary:
            parts.append(summary)
        return "\n\n".join(parts)

    async def call_tool(self, name: str, args: Mapping[str, Any] | str | None = None,
                        *, call_id: str = "") -> ToolResult:
        """Run one call through the whole pipeline; never raises for the call's own failures."""
        result = await self._run_call(name, args)
        return self.budget.apply_batch([(call_id or name, name, result)])[0]

    async def _run_call(self, name: str, args: Mapping[str, Any] | str | None) -> ToolResult:
        try:
            tool = self.registry.get(name)
        except UnknownToolError as exc:
            close = ", ".join(map(repr, exc.suggestions))
            hint = f" Did you mean {close}?" if close else ""
            return ToolResult.fail(ErrorCode.UNKNOWN_TOOL,
                                   f"No tool named {name!r}.{hint} Deferred tools must be loaded "
                                   "with tool_search before use.")
        except ToolLoadError as exc:
            return ToolResult.fail(ErrorCode.TOOL_LOAD_FAILED, str(exc))
        built = tool.build(args, self.context)
        if isinstance(built, ToolResult):
            return built
        if self.registry.is_deferred(tool.name):
            self.registry.reveal([tool.name])  # called by exact name: counts as revealed
        refusal = await self._permit(built)
        if refusal is not None:
            return refusal
        try:
            result = await built.execute(ExecControl())
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001  a tool's exception is the model's error result
            return ToolResult.fail(ErrorCode.UNHANDLED_EXCEPTION,
                                   f"{tool.name} failed: {type(exc).__name__}: {exc}")
        return self.budget.apply(result, tool_name=tool.name,
                                 max_output_chars=tool.max_output_chars,
                                 truncate_keep=tool.truncate_keep)

    async def _permit(self, invocation: ToolInvocation[Any]) -> ToolResult | None:
        opinion = invocation.default_permission()
        name = invocation.tool.name
        if opinion is Permission.DENY:
            return ToolResult.fail(ErrorCode.EXECUTION_DENIED, f"{name} refused this call.")
        if opinion is Permission.ALLOW and invocation.tier() is Tier.READ:
            return None
        if name in self._always:
            return None
        if self.approver is None:
            return ToolResult.fail(ErrorCode.EXECUTION_DENIED,
                                   f"{invocation.description()} needs approval and no one can "
                                   "approve in this session; it was not run.")
        verdict = await self.approver(await invocation.confirmation_details())
        if verdict == "always":
            self._always.add(name)
        if verdict in ("approve", "always"):
            return None
        return ToolResult.fail(ErrorCode.EXECUTION_DENIED,
                               f"The user rejected {invocation.description()}.")

    async def run(self, prompt: str) -> RunResult:
        """Send ``prompt``, run the tool calls the model asks for, until it answers in text."""
        start = len(self.messages)
        self.messages.append(Message(role="user", parts=(TextPart(prompt),)))
        calls: list[tuple[ToolCall, ToolResult]] = []
        text = ""
        for _ in range(self.max_turns):
            request = ModelRequest(messages=tuple(self.messages),
                                   tools=tuple(self.registry.declarations()),
                                   system=self.system_prompt())
            response = await self.model.respond(request)
            text = response.text
            self.messages.append(Message(role="assistant", parts=(TextPart(text),) if text else (),
                                         tool_calls=response.tool_calls,
                                         provider_data=response.provider_data))
            if not response.tool_calls:
                break
            batch = [(c, await self._run_call(c.name, c.arguments)) for c in response.tool_calls]
            budgeted = self.budget.apply_batch([(c.id, c.name, r) for c, r in batch])
            calls += [(c, r) for (c, _), r in zip(batch, budgeted, strict=True)]
            self.messages.append(Message(role="tool", tool_returns=tuple(
                ToolReturn(c.id, c.name, tuple(r.parts), r.is_error)
                for (c, _), r in zip(batch, budgeted, strict=True))))
        return RunResult(text=text, messages=self.messages[start:], tool_calls=calls)

    async def aclose(self) -> None:
        """Release the session's resources (spill files); safe to call twice."""
        self._store.cleanup()

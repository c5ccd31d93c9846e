"""The Agent: one session's conversation, tools, permissions and approvals, and its loop.

``await agent.run(prompt)`` loops model → tool calls → results → model until the model answers
without calling tools, a cap is hit, or the run is cancelled; the conversation is left valid in
every case (every tool call answered). ``await agent.call_tool(name, args)`` sends one call
through the same pipeline without a model.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, TypeVar

from agent_ext.core import ErrorCode, Kind, Registry, TextPart, ToolContext, ToolResult
from agent_ext.core.budget import BudgetConfig, OutputBudget, SpillStore
from agent_ext.core.interaction import Asker
from agent_ext.core.kernel import Place
from agent_ext.core.params import argument_problem
from agent_ext.core.plugins import load_plugins
from agent_ext.core.profiles import choose_profile
from agent_ext.fs import EditHistory, ReadCache
from agent_ext.fs.atomic import sweep_interrupted
from agent_ext.mcp import McpConfig, McpManager, load_mcp_config
from agent_ext.models import (
    Message,
    ModelRequest,
    ModelResponse,
    ScriptedModel,
    ToolCall,
    ToolReturn,
    Usage,
)
from agent_ext.models import inband as ib
from agent_ext.models import window as win
from agent_ext.models.base import (
    Model,
    ModelError,
    ReasoningDelta,
    Retrying,
    TextDelta,
    complete,
)
from agent_ext.models.scripted import Step
from agent_ext.notebook.schemes import register_notebook_schemes
from agent_ext.permissions import PermissionPolicy, RulePolicy
from agent_ext.settings import MCP_JSON, TOOL_SEARCHES, Settings, load_settings
from agent_ext.tools import register_builtins
from agent_ext.tools._ignore import ReadDenied
from agent_ext.tools._targets import ReadAsked
from agent_ext.tools.shell_jobs import ShellJobs
from agent_ext.tools.todo_write import TodoList
from agent_ext.trust import (
    ProjectAsk,
    ProjectTrust,
    TrustChoice,
    TrustItem,
    TrustStore,
    check_project,
    forget_once,
    trust_once,
)
from agent_ext.urls import URLRouter
from agent_ext.urls.schemes import register_kernel_schemes

from . import context as ctxmod
from . import events as ev
from . import honest, nudge
from .approval import Approver, CallbackApprover, PolicyApprover
from .instructions import find_instructions
from .pipeline import Pipeline, cancelled_result
from .prompt import build_context, build_system_prompt, build_where
from .scheduler import MAX_PARALLEL, run_batch
from .secrets import SecretMasker
from .transcript import dumps, load_messages, restore_reveals, unanswered_calls

T = TypeVar("T")
#: Environment variable that chooses the tool_search backend (see :func:`choose_tool_search`).
TOOL_SEARCH_ENV = "AGENT_EXT_TOOL_SEARCH"
#: Room a request must leave in the window for any answer at all.
MIN_ANSWER_TOKENS = 256
StopReason = Literal["end", "max_turns", "token_cap", "cost_cap", "cancelled", "error",
                     "length", "repeated_call"]


@dataclass
class RunResult:
    """What a run produced: ``text`` is the final answer, ``error`` set when one stopped it."""

    text: str
    messages: list[Message] = field(default_factory=list)
    tool_calls: list[tuple[ToolCall, ToolResult]] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    turns: int = 0
    stop_reason: StopReason = "end"
    error: str | None = None


class Agent:
    """One agent session (see the module docstring)."""

    def __init__(
        self,
        model: Model | str | Sequence[Step] | None = None,
        *,
        cwd: str | Path = ".",
        mode: str | None = None,
        rules: Mapping[str, Sequence[str]] | None = None,
        approver: Approver | Callable[..., Any] | None = None,
        policy: PermissionPolicy | None = None,
        system_prompt: str = "",
        max_turns: int = 50,
        max_tokens: int | None = None,
        max_cost: float | None = None,
        price_per_mtok: tuple[float, float] | None = None,
        max_parallel: int = MAX_PARALLEL,
        limits: ctxmod.ContextLimits | None = None,
        budget: BudgetConfig | None = None,
        notebook: str | None = None,
        plugins: bool = True,
        mcp: bool = True,
        on_event: ev.EventSink | None = None,
        trust_project: TrustChoice = None,
        tool_profile: str | None = None,
        in_band_tools: ib.InBandMode | None = None,
    ) -> None:
        self.cwd = Path(cwd).expanduser().resolve()
        # The project's own files widen nothing until trusted (see agent_ext.trust).
        self._trust_choice = trust_project
        self.project_trust = check_project(self.cwd, trust=trust_project)
        self._trusted_digest = self.project_trust.ask.digest
        self._model_from_files = model is None
        self.model, self.model_notice = _resolve(model, self.cwd, self.project_trust.settings)
        self.registry = Registry()
        register_builtins(self.registry)
        if plugins:
            load_plugins(self.registry)
        self.context = ToolContext(cwd=self.cwd, registry=self.registry)
        self._asker = getattr(approver, "ask", None)
        self.approver: Approver = (
            PolicyApprover() if approver is None
            else approver if isinstance(approver, PolicyApprover | CallbackApprover)
            else CallbackApprover(approver))
        self._own_policy = policy is None
        self.policy: PermissionPolicy = policy if policy is not None else RulePolicy(
            self.cwd, mode=mode, rules=rules, settings=self.project_trust.settings)
        if isinstance(self.policy, RulePolicy):
            self.policy.attach(self.registry)
            self.context.services[RulePolicy] = self.policy
            # grep, glob and ls hide files that Read deny rules cover.
            self.context.services[ReadDenied] = self.policy.read_denied
            self.context.services[ReadAsked] = self.policy.read_asked
        self._startup_notices = list(getattr(self.policy, "problems", ()))
        self._startup_notices += self.project_trust.problems
        search_notice = choose_tool_search(self.registry, self.cwd,
                                           settings=self.project_trust.settings)
        if search_notice:
            self._startup_notices.append(search_notice)
        self.system_prompt_addition = system_prompt
        self.max_turns = max_turns
        self.max_tokens = max_tokens
        self.max_cost = max_cost
        self.price_per_mtok = price_per_mtok
        self.max_parallel = max_parallel
        self.limits = limits or ctxmod.ContextLimits(
            window_tokens=getattr(self.model, "context_window", None)
            or ctxmod.ContextLimits.window_tokens)
        #: "default", "compact", or None to choose by the context window (small: compact).
        self.tool_profile = tool_profile
        choose_profile(self.registry, self.limits.window_tokens, tool_profile)
        self.notebook = notebook
        self.messages: list[Message] = []
        self.usage = Usage()
        self.sinks: list[ev.EventSink] = [on_event] if on_event else []
        self.store = SpillStore(config=budget)
        self.budget = OutputBudget(self.store)
        self.secrets = SecretMasker()
        self._pipeline = Pipeline(self.registry, self.context, self.policy, self.approver,
                                  self.budget, self._emit, self.secrets)
        self._pipeline.on_saved_rule = self._own_rules
        self._add_services()
        # MCP servers from .mcp.json and the settings files; connected when the first run
        # starts, so that loading the extension stays cheap and the first request names them.
        self.mcp: McpManager | None = (
            McpManager(self._mcp_config(), self.registry,
                       on_event=lambda n: self._emit(ev.Notice(n.text, n.level)))
            if mcp else None)
        self._plan_noted = False
        #: The last "withheld" line said (the Agent says each once; the notebook says its own).
        self.withheld_noted = ""
        router = self.context.service(URLRouter)
        if self.mcp is not None and router is not None:
            router.register(self.mcp.scheme)
            self.context.services[McpManager] = self.mcp
        self._inner: asyncio.Task[Any] | None = None
        self._cancel_requested = False
        self._run_lock = asyncio.Lock()
        self._closed = False
        self._model_turns = honest.ModelTurns(in_band_tools, window_known=limits is not None)

    # -- project trust --------------------------------------------------------------------------

    def _mcp_config(self) -> McpConfig:
        return load_mcp_config(self.cwd, settings=self.project_trust.settings,
                               mcp_json=self.project_trust.mcp_json)

    def refresh_project(self) -> ProjectTrust:
        """Read the project's files again; when they or the answer changed, apply what is in
        force now (an edited ``.mcp.json`` is withheld until trusted again)."""
        choice = self._trust_choice
        found = check_project(self.cwd, trust=choice,
                              trusted_digest=self._trusted_digest if choice else None)
        old = self.project_trust
        self.project_trust = found
        if _in_force(found) != _in_force(old):
            self._apply_project(old)
        return found

    def trust(self, *, once: bool = False, shown: ProjectAsk | None = None) -> ProjectTrust:
        """Trust the project's files as they are now: kept in the user config, or with
        ``once`` for this session only. What they ask for applies from the next run.

        ``shown`` is what the user was shown (the trust widget's): the answer holds for that,
        so a file that changed meanwhile is asked about again.
        """
        ask = shown if shown is not None else check_project(self.cwd).ask
        if ask:
            if once:
                trust_once(ask)
            else:
                TrustStore().record(ask, "trusted")
        if self._trust_choice is False:
            self._trust_choice = None
        return self.refresh_project()

    def untrust(self, *, shown: ProjectAsk | None = None) -> ProjectTrust:
        """Don't trust the project's files as they are now, or as ``shown`` (kept, so it is
        not asked again until they change); what they asked for is withdrawn at once."""
        ask = shown if shown is not None else check_project(self.cwd).ask
        forget_once(self.cwd)
        if ask:
            TrustStore().record(ask, "distrusted")
        else:
            TrustStore().forget(self.cwd)
        self._trust_choice = None
        return self.refresh_project()

    def keep_own_server(self, name: str) -> None:
        """Mark server ``name`` of ``.mcp.json``, as it is now, as added by the user (``%agent
        mcp add``): it runs without asking until the entry changes."""
        found = [i for i in check_project(self.cwd).ask.items
                 if i.kind == "server" and i.key == name and i.file == MCP_JSON]
        self._keep_own(found)

    def _own_rules(self, persist: str) -> None:
        """Allow rules the user saved into the project's settings in this session are theirs."""
        if not isinstance(self.policy, RulePolicy) or persist not in (
                "project", "local", "project local"):
            self.refresh_project()
            return
        # What is new in the file since it was last read, and is a rule of this session.
        mine = {r.text for r in self.policy.rules("allow") if r.origin.source == "session"}
        known = {i.key_text() for i in (*self.project_trust.ask.items,
                                        *self.project_trust.ask.own)}
        file = str(self.policy.settings_file(persist).relative_to(self.cwd))
        found = check_project(self.cwd).ask.items
        self._keep_own([i for i in found if i.key == "permissions.allow" and i.file == file
                        and i.value in mine and i.key_text() not in known])

    def _keep_own(self, items: list[TrustItem]) -> None:
        TrustStore().add_own(self.cwd, items)
        self.refresh_project()

    def _apply_project(self, old: ProjectTrust) -> None:
        settings = self.project_trust.settings
        if self._own_policy and isinstance(self.policy, RulePolicy):
            self.policy.apply_settings(settings)
        if self.mcp is not None:
            stopped = self.mcp.reconfigure(self._mcp_config())
            if stopped:
                self._emit(ev.Notice(f"MCP servers stopped ({', '.join(stopped)}): the "
                                     "project's files changed or are no longer trusted"))
        if self._model_from_files and settings.model != old.settings.model:
            try:
                self.model, self.model_notice = _resolve(None, self.cwd, settings)
            except (ValueError, ModelError) as exc:
                self._emit(ev.Notice(f"the model was not changed: {exc}", "warning"))

    def _plan_mode(self) -> bool:
        return str(getattr(getattr(self.policy, "mode", None), "value", "")) == "plan"

    async def _start_servers(self) -> None:
        """Connect the MCP servers in force, except in plan mode, which starts none."""
        if self.mcp is None or not self.mcp.configs:
            return
        if self._plan_mode():
            if not self._plan_noted:
                self._plan_noted = True
                names = ", ".join(self.mcp.configs)
                self._emit(ev.Notice(f"plan mode starts no MCP server ({names}); switch mode "
                                     "(e.g. `%agent mode default`) to use them"))
            return
        await self.mcp.start()

    def _add_services(self) -> None:
        """Per-session state the tools share, keyed by type in the tool context."""
        sweep_interrupted()  # temporary files of writes killed midway, by any earlier process
        services = self.context.services
        services[ReadCache] = ReadCache()
        services[EditHistory] = EditHistory(
            spill_dir=lambda: self.store.session_dir / "history")
        router = services[URLRouter] = URLRouter()
        register_notebook_schemes(router, self.context)
        register_kernel_schemes(router, self.context)
        services[TodoList] = TodoList()
        if self._asker is not None:
            services[Asker] = self._asker

    # -- events ---------------------------------------------------------------------------------

    def _emit(self, event: ev.Event) -> None:
        for sink in list(self.sinks):
            sink(event)

    # -- prompt ---------------------------------------------------------------------------------

    def system_prompt(self) -> str:
        """The stable part of what the model is told: the same in every folder and day."""
        return build_system_prompt(registry=self.registry, addition=self.system_prompt_addition)

    def session_context(self) -> str:
        """What depends on the folder, the day and the notebook (and the instruction files),
        sent at the start of the first user turn."""
        user_dir = Path(os.environ.get("AGENT_EXT_CONFIG_DIR") or Path.home() / ".agent_ext")
        return build_context(cwd=self.cwd, notebook=self.notebook,
                             instructions=find_instructions(self.cwd, user_dir=user_dir))

    def request(self) -> ModelRequest:
        """Exactly what the model would be sent now."""
        messages = list(self.messages)
        if messages and messages[0].role == "user" and not messages[0].tool_returns:
            messages[0] = replace(messages[0], parts=(TextPart(self.session_context()),
                                                      *messages[0].parts))
        return ModelRequest(messages=tuple(messages),
                            tools=tuple(self.registry.declarations()),
                            system=self.system_prompt())

    # -- one call -------------------------------------------------------------------------------

    async def call_tool(self, name: str, args: Mapping[str, Any] | str | None = None,
                        *, call_id: str = "") -> ToolResult:
        """One call through the whole pipeline: build, permission, approval, execute, budgets."""
        problem = None if isinstance(args, str) else argument_problem(args)
        if problem is not None:
            return ToolResult.fail(ErrorCode.INVALID_TOOL_PARAMS,
                                   f"invalid parameters for {name}: {problem}")
        call = ToolCall.of(call_id or f"direct_{name}", name,
                           args if isinstance(args, str) else dict(args or {}))
        self._pipeline.cancelled.clear()
        result = await self._pipeline.run(self._pipeline.prepare(call))
        return self.budget.apply_batch([(call.id, name, result)])[0]

    # -- the loop -------------------------------------------------------------------------------

    async def run(self, prompt: str, *, on_event: ev.EventSink | None = None,
                  place: Place | None = None) -> RunResult:
        """Send ``prompt`` and run the tool calls the model asks for until it is done.

        With ``place`` (the running cell's id, the kernel's last error) the prompt is preceded
        by where the agent is: its cell, the cell above, that error, the user's changes.
        """
        async with self._run_lock:
            if on_event is not None:
                self.sinks.append(on_event)
            try:
                return await self._run(prompt, place)
            finally:
                if on_event is not None:
                    self.sinks.remove(on_event)

    async def _run(self, prompt: str, place: Place | None = None) -> RunResult:
        self._cancel_requested = False
        self._pipeline.cancelled.clear()
        self._repair()
        where = await self._where(place)
        start = len(self.messages)
        self.messages.append(Message(role="user", parts=(
            *((TextPart(where),) if where else ()), TextPart(prompt))))
        self._emit(ev.RunStarted(prompt, self.model.name))
        if self.model_notice:
            self._emit(ev.Notice(self.model_notice, "setup"))
            self.model_notice = None
        for problem in self._startup_notices:
            self._emit(ev.Notice(problem, "warning"))
        self._startup_notices.clear()
        self.refresh_project()
        withheld = self.project_trust.withheld()
        if withheld and withheld != self.withheld_noted:
            self.withheld_noted = withheld
            self._emit(ev.Notice(withheld, "warning"))
        try:
            await self._step(self._start_servers())
        except asyncio.CancelledError:
            if not self._cancel_requested:
                raise
        choose_profile(self.registry, self.limits.window_tokens, self.tool_profile)
        result = RunResult(text="")
        calls: list[tuple[ToolCall, ToolResult]] = []
        nudged = False
        self._model_turns.repeats.clear()
        while True:
            if result.turns >= self.max_turns:
                self._stop(result, "max_turns", f"stopped after {self.max_turns} model turns "
                           "(max_turns); send another prompt to continue")
                break
            self._background_news()
            try:
                request, sent_tokens = await self._next_request()
                response = await self._respond(request, result, sent_tokens)
            except asyncio.CancelledError:
                if not self._cancel_requested:
                    raise
                self._stop(result, "cancelled", "run cancelled")
                break
            except Exception as exc:  # noqa: BLE001  a model failure ends the run, clearly
                message = str(exc) if isinstance(exc, ModelError) else (
                    f"the model failed: {type(exc).__name__}: {exc}")
                message = self._window_error(exc) or message
                result.error = message
                self._stop(result, "error", message, level="error")
                break
            self.messages.append(Message(
                role="assistant", parts=(TextPart(response.text),) if response.text else (),
                tool_calls=response.tool_calls, provider_data=response.provider_data))
            result.text = response.text
            if not response.tool_calls:
                if honest.was_cut(response):
                    self._stop(result, "length", self._cut_notice(request), level="warning")
                elif not nudged and self._nudge(response.text, calls):
                    nudged = True
                    continue
                break
            finished = await self._tools(response.tool_calls, calls)
            if not finished:
                self._stop(result, "cancelled", "run cancelled")
                break
            if self._model_turns.repeats.stopped:
                self._stop(result, "repeated_call", self._model_turns.repeats.stopped,
                           level="warning")
                break
            if self._over_caps(result):
                break
        result.messages = self.messages[start:]
        result.tool_calls = calls
        self._emit(ev.RunFinished(result))
        return result

    async def _where(self, place: Place | None) -> str:
        """The per-run context for ``place`` ("" without one, or when the run is cancelled
        while the notebook is read)."""
        if place is None:
            return ""
        try:
            return build_where(await self._step(ctxmod.where_lines(self.context, place)))
        except asyncio.CancelledError:
            if not self._cancel_requested:
                raise
            return ""

    def _nudge(self, text: str, calls: Sequence[tuple[ToolCall, ToolResult]]) -> bool:
        """For a small model that ended with a fix written as text for a file or cell it read
        and changed nothing: one more turn, told the call that would make that change (see
        ``nudge``). Whether it was sent."""
        if not self._model_turns.in_band_on(self.model):
            return False
        if any(not r.is_error and self._kind(c.name) is Kind.EDIT for c, r in calls):
            return False
        read = [c for c, r in calls
                if not r.is_error and self.registry.resolve(c.name) == "read_file"]
        paths = []
        for call in read:
            try:
                given = json.loads(call.arguments).get("file_path")
            except (ValueError, AttributeError):
                continue
            if isinstance(given, str):
                paths.append(given)
        proposal = nudge.propose(text, nudge.read_targets(paths, self.cwd))
        if proposal is None:
            return False
        self._emit(ev.Notice(f"{self.model.name} wrote a change to {proposal.target.path} as "
                             f"text without calling a tool, so nothing changed; agent_ext asked "
                             f"it once to make the change with {proposal.tool}."))
        self.messages.append(Message(role="user", parts=(TextPart(proposal.note()),)))
        return True

    def _kind(self, name: str) -> Kind | None:
        try:
            return self.registry.get(name).kind
        except Exception:  # noqa: BLE001  an unknown or broken tool has no kind
            return None

    def _stop(self, result: RunResult, reason: StopReason, text: str, level: str = "info") -> None:
        result.stop_reason = reason
        self._emit(ev.Notice(text, level))

    async def _step(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run one model step or tool batch as a task that ``cancel()`` can stop."""
        inner: asyncio.Task[T] = asyncio.ensure_future(coro)
        self._inner = inner
        try:
            return await inner
        finally:
            self._inner = None

    async def _respond(self, request: ModelRequest, result: RunResult,
                       sent_tokens: int) -> ModelResponse:
        """One model step, checked: a greedy model that just repeated a failing call is sampled
        instead, a call cut by the output cap is asked again once with the cap raised, and
        calls written as text become tool calls where that is on."""
        turns = self._model_turns
        repeated, turns.repeats.repeated = turns.repeats.repeated, ""
        if repeated and getattr(self.model, "greedy", False):
            request = replace(request, resample_temperature=honest.RESAMPLE_TEMPERATURE)
            self._emit(ev.Notice(
                f"{self.model.name} made the same failing call to {repeated} again; its next "
                f"answer is sampled at temperature {honest.RESAMPLE_TEMPERATURE} instead of "
                "greedily, so that it can differ."))
        in_band = bool(request.tools) and turns.in_band_on(self.model)
        known = honest.resolver(self.registry)
        resolve = known if in_band else (lambda _name: None)
        response = await self._step(self._stream(request, resolve if in_band else None))
        result.turns += 1
        self._account(result, response, sent_tokens)
        if honest.cut_call(response, resolve):
            cap = self._output_cap(request, response)
            raised = max(2 * cap, 1024)
            self._emit(ev.Notice(
                f"{self.model.name} was cut off at its output cap ({cap} tokens) in the middle "
                f"of a tool call; asking once more with a cap of {raised} tokens.", "warning"))
            turns.hold = None  # the cut call is not shown
            request = replace(request, max_output_tokens=raised)
            response = await self._step(self._stream(request, resolve if in_band else None))
            result.turns += 1
            self._account(result, response, sent_tokens)
        found = None
        if in_band:
            response, found = honest.in_band(response, resolve)
            if found is not None and not turns.noticed:
                turns.noticed = True
                self._emit(ev.Notice(honest.in_band_notice(self.model.name, found)))
            if found is not None and found.left_out:
                self._emit(ev.Notice(honest.run_on_notice(self.model.name, found), "warning"))
            elif found is None and not response.tool_calls:
                unknown = honest.unknown_call_notice(self.model.name, response.text)
                if unknown:
                    self._emit(ev.Notice(unknown, "warning"))
        if turns.hold is not None:
            rest = turns.hold.finish(found)
            turns.hold = None
            if rest:
                self._emit(TextDelta(rest))
        return response

    def _model_cap(self) -> int | None:
        """The model's own output cap, if it has one."""
        cap = getattr(self.model, "max_output_tokens", None) or getattr(
            self.model, "max_tokens", None)
        return cap if isinstance(cap, int) else None

    def _output_cap(self, request: ModelRequest, response: ModelResponse) -> int:
        return (request.max_output_tokens or self._model_cap()
                or response.usage.output_tokens or 1024)

    def _cut_notice(self, request: ModelRequest) -> str:
        cap = request.max_output_tokens or self._model_cap()
        limit = f"its output cap ({cap} tokens)" if cap else "the server's output limit"
        return (f"{self.model.name}'s answer was cut off at {limit}, so it is incomplete; ask it "
                'to continue, or raise "maxOutputTokens" in the settings.')

    async def _stream(self, request: ModelRequest,
                      resolve: Callable[[str], str | None] | None = None) -> ModelResponse:
        """Stream one answer; with ``resolve``, text that may be a call is held back until
        the answer is complete (``_respond`` shows what was not a call)."""
        final: ModelResponse | None = None
        hold = self._model_turns.hold = ib.StreamHold(resolve) if resolve is not None else None
        async for item in self.model.stream(request):
            if isinstance(item, TextDelta) and hold is not None:
                shown = hold.feed(item.text)
                if shown:
                    self._emit(TextDelta(shown))
            elif isinstance(item, TextDelta | ReasoningDelta):
                self._emit(item)
            elif isinstance(item, Retrying):
                self._emit(ev.Notice(item.text(self.model.name), "warning"))
            elif isinstance(item, ModelResponse):
                final = item
        if final is None:
            raise ModelError(f"{self.model.name} ended its answer without finishing it; "
                             "send the prompt again.", kind="stream")
        return final

    async def _tools(self, tool_calls: Sequence[ToolCall],
                     calls: list[tuple[ToolCall, ToolResult]]) -> bool:
        """Run one turn's calls; always answers every call. False when the run was cancelled."""
        prepared = [self._pipeline.prepare(c) for c in tool_calls]
        results: list[ToolResult | None] = [None] * len(prepared)
        cancelled = False
        try:
            await self._step(self._pipeline.decide_ahead(prepared))
            await self._step(run_batch(self._pipeline, prepared, results,
                                       max_parallel=self.max_parallel))
        except asyncio.CancelledError:
            if not self._cancel_requested:
                self._answer(tool_calls, results, calls)
                raise
            cancelled = True
        finally:
            self._pipeline.forget_ahead()
        self._answer(tool_calls, results, calls)
        return not cancelled and not self._pipeline.cancelled.is_set()

    def _answer(self, tool_calls: Sequence[ToolCall], results: list[ToolResult | None],
                calls: list[tuple[ToolCall, ToolResult]]) -> None:
        filled = [r if r is not None else cancelled_result(c) for c, r in zip(tool_calls, results,
                                                                              strict=True)]
        budgeted = self.budget.apply_batch([(c.id, c.name, r) for c, r in zip(tool_calls, filled,
                                                                              strict=True)])
        budgeted = [self._model_turns.repeats.check(c, r)
                    for c, r in zip(tool_calls, budgeted, strict=True)]
        calls += list(zip(tool_calls, budgeted, strict=True))
        remembered = honest.remember(self.messages, list(zip(tool_calls, budgeted,
                                                                 strict=True)))
        self.messages.append(Message(role="tool", tool_returns=tuple(
            remembered.get(c.id) or ToolReturn(c.id, c.name, tuple(r.parts), r.is_error)
            for c, r in zip(tool_calls, budgeted, strict=True))))

    def _background_news(self) -> None:
        """Tell the model about background shells that finished since its last step."""
        jobs = self.context.service(ShellJobs)
        news = jobs.drain_notifications() if jobs is not None else []
        if news:
            text = "[agent_ext: background shell updates]\n" + "\n\n".join(
                self.secrets.mask(n) for n in news)
            self.messages.append(Message(role="user", parts=(TextPart(text),)))

    def _repair(self) -> None:
        """Answer calls a previous run left open (e.g. an interrupt mid-batch)."""
        open_calls = unanswered_calls(self.messages)
        if open_calls:
            self.messages.append(Message(role="tool", tool_returns=tuple(
                ToolReturn(c.id, c.name, tuple(cancelled_result(c).parts), is_error=True)
                for c in open_calls)))

    # -- accounting and caps --------------------------------------------------------------------

    def _account(self, result: RunResult, response: ModelResponse, sent_tokens: int) -> None:
        """Add the step's usage: the provider's figures, else estimates (``sent_tokens`` for
        the request that was sent)."""
        turn = response.usage
        estimated = turn.input_tokens == 0 and turn.output_tokens == 0
        if estimated:
            turn = Usage(sent_tokens,
                         ctxmod.estimate_tokens(response.text + "".join(
                             c.arguments for c in response.tool_calls)))
        result.usage = result.usage + turn
        self.usage = self.usage + turn
        self._emit(ev.UsageUpdated(turn, self.usage, estimated))

    def cost(self, usage: Usage | None = None) -> float | None:
        """Dollars spent at ``price_per_mtok`` (input, output), or None when no price is set."""
        if self.price_per_mtok is None:
            return None
        u = usage or self.usage
        return (u.input_tokens * self.price_per_mtok[0]
                + u.output_tokens * self.price_per_mtok[1]) / 1e6

    def _over_caps(self, result: RunResult) -> bool:
        used = result.usage.input_tokens + result.usage.output_tokens
        if self.max_tokens is not None and used >= self.max_tokens:
            self._stop(result, "token_cap", f"stopped: this run used {used} tokens "
                       f"(max_tokens={self.max_tokens}); send another prompt to continue")
            return True
        spent = self.cost(result.usage)
        if self.max_cost is not None and spent is not None and spent >= self.max_cost:
            self._stop(result, "cost_cap", f"stopped: this run cost ${spent:.4f} "
                       f"(max_cost=${self.max_cost:.2f}); send another prompt to continue")
            return True
        return False

    async def _next_request(self) -> tuple[ModelRequest, int]:
        """The request for the next step, compacted first when it would fill the window, and
        its estimated size (built once: it reads instruction files and serialises schemas)."""
        await self._know_window()
        request = self.request()
        tokens = ctxmod.estimate_request(request)
        window = self.limits.window_tokens
        # Compact early enough to leave room for an answer of the model's output cap.
        room = min(self._model_cap() or 0, window // 4)
        if tokens >= min(window * self.limits.compact_at, window - room) and await self.compact():
            request = self.request()
            tokens = ctxmod.estimate_request(request)
        if self._needed(tokens) + MIN_ANSWER_TOKENS > window:
            raise ModelError(self._too_small(request, tokens), kind="context_length")
        return request, tokens

    async def _know_window(self) -> None:
        """Ask a local server its context window once per session (unless limits were given)."""
        turns = self._model_turns
        if turns.window_known:
            return
        turns.window_known = True
        probe = getattr(self.model, "probe_context_window", None)
        if not callable(probe):
            return
        found = await self._step(asyncio.to_thread(probe))  # cancel() stops the wait
        if isinstance(found, int) and found > 0:
            self.limits = replace(self.limits, window_tokens=found)
            choose_profile(self.registry, found, self.tool_profile)  # compact for small windows
            self._emit(ev.Notice(f"{self.model.name}: the server gives it a context window of "
                                 f"{found:,} tokens"))

    @staticmethod
    def _needed(tokens: int) -> int:
        """Tokens a request of estimated size ``tokens`` needs (the estimate runs a few
        percent low on real tokenizers)."""
        return int(tokens * 1.1) + 1

    def _too_small(self, request: ModelRequest, tokens: int) -> str:
        """The window is too small for ``request``: what it holds and what to raise to."""
        tools = ctxmod.estimate_request(replace(request, messages=(), system=""))
        system = ctxmod.estimate_tokens(request.system)
        cap = self._model_cap() or 1024
        size = win.suggested_window(self._needed(tokens) + cap)
        provider = str(getattr(self.model, "provider", ""))
        return (f"The request needs about {self._needed(tokens):,} tokens (system prompt "
                f"~{system:,}, tool declarations ~{tools:,}, conversation "
                f"~{max(0, tokens - system - tools):,}) but {self.model.name} has a context "
                f"window of {self.limits.window_tokens:,} tokens; "
                f"{win.raise_advice(provider, size)}, then try again.")

    def _window_error(self, exc: Exception) -> str | None:
        """A context-length refusal of a short conversation: what to raise, not "compact"."""
        if not (isinstance(exc, ModelError) and exc.kind == "context_length") or str(
                exc).startswith("The request needs about"):
            return None
        prompts = [m for m in self.messages if m.role == "user" and not m.tool_returns]
        if len(prompts) > 1:
            return None
        request = self.request()
        tokens = ctxmod.estimate_request(request)
        cap = self._model_cap() or 1024
        size = win.suggested_window(self._needed(tokens) + cap)
        provider = str(getattr(self.model, "provider", ""))
        return (f"{exc} The conversation is only your prompt: the system prompt and tool "
                f"declarations alone need about {self._needed(tokens):,} tokens; "
                f"{win.raise_advice(provider, size)}.")

    async def compact(self) -> bool:
        """Summarise older turns and point large results to files; True if anything changed."""
        split = ctxmod.split_for_compaction(self.messages, self.limits.keep_recent_prompts)
        older = ctxmod.pointerize(self.messages[:split], self.store, self.limits.pointer_chars)
        recent = ctxmod.pointerize(self.messages[split:], self.store, self.limits.pointer_chars)
        if older:
            summary = await complete(self.model, ModelRequest(
                messages=(*older, Message(role="user", parts=(TextPart(ctxmod.SUMMARY_PROMPT),))),
                tools=(), system=self.system_prompt()))
            older = [Message(role="user",
                             parts=(TextPart(ctxmod.SUMMARY_HEADER + summary.text),))]
        changed = older + recent != self.messages
        if changed:
            before = ctxmod.estimate_request(self.request())
            self.messages = older + recent
            self._forget_history()
            after = ctxmod.estimate_request(self.request())
            self._emit(ev.Notice(f"compacted the conversation: ~{before} → ~{after} tokens"))
        return changed

    # -- control --------------------------------------------------------------------------------

    def cancel(self) -> None:
        """Stop the current run promptly; it returns with ``stop_reason == "cancelled"``."""
        self._cancel_requested = True
        self._pipeline.cancelled.set()
        for control in list(self._pipeline.controls.values()):
            control.cancelled.set()
        if self._inner is not None:
            self._inner.cancel()

    # -- transcript -----------------------------------------------------------------------------

    def save(self, path: str | Path) -> Path:
        """Write the conversation as JSON (images included)."""
        target = Path(path)
        target.write_text(dumps(self.messages), encoding="utf-8")
        return target

    def load(self, path: str | Path) -> None:
        """Replace the conversation with a saved one; revealed tools are rebuilt from it."""
        import json  # noqa: PLC0415

        self.messages = load_messages(json.loads(Path(path).read_text(encoding="utf-8")))
        self._forget_history()
        self.registry.unreveal()
        restore_reveals(self.registry, self.messages)

    def reset(self) -> None:
        """Forget the conversation and the revealed tools, and stop the MCP servers.

        Tools, rules and settings stay. The servers' process trees are gone when this returns,
        so a reset leaves no process behind; the next run starts the servers again.
        """
        self.messages.clear()
        self._forget_history()
        self.registry.unreveal()
        self.usage = Usage()
        if self.mcp is not None:
            self.mcp.stop_now()

    def _forget_history(self) -> None:
        """The conversation lost what earlier reads showed: reads may no longer answer
        "unchanged, see above" (read rights stay)."""
        cache = self.context.service(ReadCache)
        if cache is not None:
            cache.disarm_history()

    async def aclose(self) -> None:
        """Release the session's resources (spill files); safe to call twice."""
        if self._closed:
            return
        self._closed = True
        jobs = self.context.service(ShellJobs)
        if jobs is not None:
            await jobs.kill_all()
        if self.mcp is not None:
            await self.mcp.aclose()
        await asyncio.to_thread(self.store.cleanup)


def choose_tool_search(registry: Registry, cwd: Path,
                       environ: Mapping[str, str] | None = None, *,
                       settings: Settings | None = None) -> str | None:
    """Set the registry's search backend from ``AGENT_EXT_TOOL_SEARCH`` or ``"toolSearch"`` in
    the settings files: ``lexical`` (pure Python), ``embed`` (the lexical scorer fused with the
    shipped word embeddings, which need numpy: the ``embed`` extra) or ``auto`` (the default:
    embed when numpy is installed). Returns a notice when the choice cannot be honoured."""
    env = os.environ if environ is None else environ
    choice = env.get(TOOL_SEARCH_ENV, "").strip().lower()
    where = TOOL_SEARCH_ENV
    if not choice:
        files = settings if settings is not None else load_settings(cwd, environ=env)
        found = files.first("toolSearch", str)
        choice, where = (found[0].strip().lower(), str(found[1].path)) if found else ("auto", "")
    if choice not in TOOL_SEARCHES:
        # A settings file's bad value is among the settings problems the policy reports.
        return None if where != TOOL_SEARCH_ENV else (
            f"{where}: tool search {choice!r} is not one of {', '.join(TOOL_SEARCHES)}; "
            "the pure-Python search is used.")
    if choice == "lexical":
        return None
    from agent_ext.core import search_embed  # noqa: PLC0415  (imported when it is chosen)

    if search_embed.available():
        registry.search_backend = search_embed.EmbeddingBackend()
        return None
    if choice == "embed":
        return (f"{where}: tool search 'embed' needs numpy (the embed extra): run "
                "%pip install 'agent-ext[embed]' and restart the kernel. Until then the "
                "pure-Python search is used.")
    return None


def _in_force(project: ProjectTrust) -> tuple[object, ...]:
    """What decides the settings in force: a change of any part re-applies them."""
    ask = project.ask
    return (ask.digest, project.status, ask.narrowing, tuple(i.key_text() for i in ask.own))


def _resolve(model: Model | str | Sequence[Step] | None, cwd: Path,
             settings: Settings | None = None) -> tuple[Model, str | None]:
    if isinstance(model, Model):
        return model, None
    if model is not None and not isinstance(model, str):
        return ScriptedModel(list(model)), None
    from agent_ext.models.config import resolve_model  # noqa: PLC0415  (reads settings, probes)

    resolved = resolve_model(model, cwd=cwd, settings=settings)
    return resolved.model, resolved.notice

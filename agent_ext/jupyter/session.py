"""The kernel's agent session: one ``Agent`` built from ``AgentExt`` on first use.

``get_agent()`` returns it (building it when needed); ``%%agent`` cells and
``await get_agent().run(...)`` continue the same conversation. The session also holds what the
kernel learned about its frontend, the tickers of running runs, and the display of each run.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from . import policy_adapter
from .config import AgentExt, load_classifier
from .frontend import Frontend
from .notebook_path import notebook_path
from .waiting import Ticker

if TYPE_CHECKING:
    from agent_ext.agent import Agent

    from .transcript import RunDisplay

_closing: set[asyncio.Task[None]] = set()
# Settings that apply to the running session agent as soon as they change.
_LIVE = ("model", "mode", "max_turns", "system_prompt", "auto_classifier")


class Session:
    """The session agent and its kernel-side state (see the module docstring)."""

    def __init__(self, shell: Any = None) -> None:
        self.shell = shell
        self.config = AgentExt(parent=shell) if shell is not None else AgentExt()
        self.frontend = Frontend(shell)
        self.ticker = Ticker()
        self._display: RunDisplay | None = None
        self._agent: Agent | None = None
        self._quiet = False
        self.config.observe(self._changed, names=list(_LIVE))
        _catch_sigterm(shell)

    @property
    def display(self) -> RunDisplay:
        """The runs' display (imported on first use: it needs the agent layer)."""
        if self._display is None:
            from .transcript import RunDisplay  # noqa: PLC0415

            self._display = RunDisplay(self, self.ticker, self.agent)
        return self._display

    # -- the agent ------------------------------------------------------------------------------

    @property
    def has_agent(self) -> bool:
        return self._agent is not None

    def agent(self, **overrides: Any) -> Agent:
        """The session agent; with ``overrides`` a new one is built (the old one is closed)."""
        if self._agent is None or overrides:
            built = self._build(overrides)
            if self._agent is not None:
                close_soon(self._agent)
            self._agent = built
        return self._agent

    def _build(self, overrides: dict[str, Any]) -> Agent:
        from agent_ext.agent import Agent  # noqa: PLC0415  (keeps %load_ext cheap)
        from agent_ext.models.base import ModelError  # noqa: PLC0415

        from .approver import WidgetApprover  # noqa: PLC0415

        cfg = self.config
        cwd = overrides.get("cwd") or cfg.cwd or str(Path.cwd())
        kwargs: dict[str, Any] = {
            "model": cfg.model or None, "cwd": cwd, "approver": WidgetApprover(self),
            "system_prompt": cfg.system_prompt, "max_turns": cfg.max_turns,
            "notebook": notebook_path(getattr(self.shell, "user_ns", None)),
        }
        if "policy" not in overrides and cfg.mode:
            kwargs["mode"] = cfg.mode
        kwargs.update(overrides)
        try:
            agent = Agent(**kwargs)
        except (ValueError, ModelError) as exc:
            raise UsageError(f"{exc} Choose a model with `%agent model demo` (or "
                             "`%agent model openai:gpt-4o` after `%agent key openai`).") from None
        agent.sinks.append(self.display)
        if cfg.auto_classifier and "policy" not in overrides:
            self._give_classifier(agent, cfg.auto_classifier)
        _add_asker(agent, self)
        _add_kernel(agent, self.shell)
        _add_notebooks(agent, self.shell, self.record)
        return agent

    @contextlib.contextmanager
    def quiet(self) -> Iterator[None]:
        """Change settings without applying them (the caller already did)."""
        self._quiet = True
        try:
            yield
        finally:
            self._quiet = False

    def _changed(self, change: Any) -> None:
        agent = self._agent
        if agent is None or self._quiet:
            return
        if change["name"] == "model":
            agent.model, agent.model_notice = resolve(change["new"], agent)
        elif change["name"] == "mode":
            if not change["new"]:
                return  # back to "from the settings files": the current mode stays
            if policy_adapter.supports_modes(agent.policy):
                policy_adapter.set_mode(agent.policy, change["new"])
            else:
                self.record(f"[agent_ext] mode {change['new']} is kept in AgentExt.mode; "
                            + policy_adapter.NO_RULES.format(name=type(agent.policy).__name__))
        elif change["name"] == "max_turns":
            agent.max_turns = change["new"]
        elif change["name"] == "auto_classifier":
            self._give_classifier(agent, change["new"])
        else:
            agent.system_prompt_addition = change["new"]

    def _give_classifier(self, agent: Agent, spec: str) -> None:
        """Set (or with ``""`` remove) the auto-mode classifier of the agent's policy."""
        try:
            found = load_classifier(spec) if spec else None
        except (ValueError, TypeError) as exc:
            raise UsageError(f"{exc}; fix it with %config AgentExt.auto_classifier = "
                             "'module:function'") from None
        if not policy_adapter.set_classifier(agent.policy, found):
            self.record(f"[agent_ext] this agent's permission policy "
                        f"({type(agent.policy).__name__}) takes no auto-mode classifier; "
                        "AgentExt.auto_classifier applies to the rule-based policy (RulePolicy).")

    def mode(self) -> str:
        """The permission mode in force: the policy's, else the configured one."""
        if self._agent is not None:
            found = policy_adapter.current_mode(self._agent.policy)
            if found is not None:
                return found
        return self.config.mode or "default"

    # -- output ---------------------------------------------------------------------------------

    def show(self, obj: Any) -> None:
        """Display ``obj`` in the running cell (our widgets through their own ``show``)."""
        own = getattr(obj, "show", None)
        if callable(own):
            own()
            return
        from IPython.display import display  # noqa: PLC0415

        shown: Any = display  # untyped in IPython
        shown(obj)

    def record(self, line: str) -> None:
        """Write an audit line into the running cell's output, after the run's text so far."""
        if self._display is not None:
            self._display.flush()
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    # -- lifetime -------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop the tickers, stop observing the settings, close the agent (``%unload_ext``).

        The agent's MCP servers are killed before this returns, since the rest of its close
        runs on the loop after the cell: no server process outlives the unload.
        """
        self.ticker.stop()
        self.config.unobserve(self._changed, names=list(_LIVE))
        _release_sigterm()
        if self.shell is not None:
            from .bridge import uninstall_bridge  # noqa: PLC0415

            uninstall_bridge(self.shell)
        if self._agent is not None:
            if self._display in self._agent.sinks:
                self._agent.sinks.remove(self._display)
            if self._agent.mcp is not None:
                self._agent.mcp.stop_now()
            close_soon(self._agent)
            self._agent = None


def resolve(spec: str, agent: Agent | None) -> tuple[Any, str | None]:
    """The model ``spec`` names (empty: the default choice), as a ``UsageError`` when it fails."""
    from agent_ext.models.base import ModelError  # noqa: PLC0415
    from agent_ext.models.config import resolve_model  # noqa: PLC0415

    try:
        resolved = resolve_model(spec or None, cwd=agent.cwd if agent is not None else Path.cwd(),
                                 settings=agent.project_trust.settings if agent is not None
                                 else None)
    except (ValueError, ModelError) as exc:
        raise UsageError(f"{exc} Type e.g. `%agent model demo` or "
                         "`%agent model openai:gpt-4o`.") from None
    return resolved.model, resolved.notice


def _add_asker(agent: Agent, session: Session) -> None:
    """Let the ask_user tool ask its questions through a widget in the running cell."""
    from agent_ext.core.interaction import Asker  # noqa: PLC0415

    from .asker import WidgetAsker  # noqa: PLC0415

    agent.context.services.setdefault(Asker, WidgetAsker(session))


def close_soon(agent: Agent) -> None:
    """Close ``agent`` on the running loop, or run its close now when no loop runs."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        from IPython.core.async_helpers import get_asyncio_loop  # noqa: PLC0415

        ipython_loop: Any = get_asyncio_loop  # untyped in IPython
        ipython_loop().run_until_complete(agent.aclose())
        return
    task = loop.create_task(agent.aclose())
    _closing.add(task)
    task.add_done_callback(_closing.discard)


# -- kernel shutdown ----------------------------------------------------------------------------


def _on_sigterm(signum: int, _frame: FrameType | None) -> None:
    """Kill the session's MCP server trees, then die of SIGTERM as the kernel would have.

    A clean shutdown (a shutdown_request) exits through atexit, which kills them; SIGTERM,
    jupyter_client's next step when that takes too long, skips atexit, and the servers run in
    sessions of their own, so nothing else would stop them.
    """
    agent = _session._agent if _session is not None else None
    if agent is not None and agent.mcp is not None:
        agent.mcp.kill_processes()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _catch_sigterm(shell: Any) -> None:
    """Route a kernel's SIGTERM through ``_on_sigterm`` when nothing else handles it."""
    if getattr(shell, "kernel", None) is None:
        return
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        with contextlib.suppress(ValueError):  # not the main thread: atexit still covers exit
            signal.signal(signal.SIGTERM, _on_sigterm)


def _release_sigterm() -> None:
    """Give SIGTERM back its default action, if ``_catch_sigterm`` took it (``%unload_ext``)."""
    if signal.getsignal(signal.SIGTERM) is _on_sigterm:
        with contextlib.suppress(ValueError):
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


# -- the current session ----------------------------------------------------------------------

_session: Session | None = None


def current(shell: Any = None) -> Session:
    """The kernel's session, created on first use (also without ``%load_ext``)."""
    global _session  # noqa: PLW0603  (one session per kernel, like the shell itself)
    if _session is None:
        if shell is None:
            from IPython import get_ipython  # noqa: PLC0415

            shell = get_ipython()
        _session = Session(shell)
    return _session


def end() -> None:
    """Close and forget the current session (``%unload_ext``)."""
    global _session  # noqa: PLW0603
    if _session is not None:
        _session.close()
        _session = None


def get_agent(**overrides: Any) -> Agent:
    """The session agent, built from ``AgentExt`` on first use.

    With keyword arguments (any of ``Agent``'s) a new session agent is built with them, e.g.
    ``get_agent(model=ScriptedModel([...]))``; the previous one is closed.
    """
    return current().agent(**overrides)


def _add_kernel(agent: Agent, shell: Any) -> None:
    """Give var://, history:// and run_cell the kernel they read and run code in."""
    from agent_ext.core.kernel import KernelProvider  # noqa: PLC0415

    from .kernel import kernel_provider  # noqa: PLC0415

    provider = kernel_provider(shell)
    if provider is not None:
        agent.context.services[KernelProvider] = provider


def _add_notebooks(agent: Agent, shell: Any, notify: Callable[[str], None]) -> None:
    """Notebook reads and edits: the live notebook through the browser bridge when it answers,
    else the .ipynb file (VS Code, nbclient, a notebook that is not open)."""
    from agent_ext.notebook.document import NotebookProvider  # noqa: PLC0415

    from .bridge import bridge_provider  # noqa: PLC0415

    agent.context.services[NotebookProvider] = bridge_provider(shell, notify=notify)

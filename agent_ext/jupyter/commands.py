"""The ``%agent`` sub-commands: what each does to the session, as plain functions.

Each takes the session and its parsed arguments and returns the text to print (or None).
Problems are ``UsageError``s that say what to type instead.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from agent_ext.fs.history import EditHistory

from . import policy_adapter
from .keys import ask_key
from .session import Session, resolve

if TYPE_CHECKING:
    from agent_ext.agent import Agent
    from agent_ext.notebook.changes import NotebookChanges
    from agent_ext.notebook.reads import NotebookReads

Command = Callable[[Session, argparse.Namespace], "str | Coroutine[Any, Any, str] | None"]

#: (name, help, [(argument, add_argument keywords)]) — the parser and ``%agent?`` come from it.
SPEC: tuple[tuple[str, str, tuple[tuple[str, dict[str, Any]], ...]], ...] = (
    ("status", "the model, mode, rules, frontend and usage at a glance", ()),
    ("model", "show the model, or switch to SPEC (provider:model, e.g. openai:gpt-4o, demo)",
     (("spec", {"nargs": "?", "help": "provider:model"}),)),
    ("mode", ("show the permission mode, or switch to NAME (default, acceptEdits, plan, "
              "dontAsk, bypassPermissions, auto)"), (("name", {"nargs": "?"}),)),
    ("allow", "allow calls matching RULE for this session, e.g. `Bash(git status:*)`",
     (("rule", {"nargs": "+"}),)),
    ("deny", "refuse calls matching RULE for this session, e.g. `Edit(secrets/**)`",
     (("rule", {"nargs": "+"}),)),
    ("ask", "always ask before calls matching RULE, e.g. `Bash(git push:*)`",
     (("rule", {"nargs": "+"}),)),
    ("unrule", "remove RULE (allow, deny or ask) from this session, written as it was added",
     (("rule", {"nargs": "+"}),)),
    ("trust", ("trust this project's .mcp.json servers and settings as they are now (kept "
               "until they change; --once: this session only)"),
     (("--once", {"action": "store_true", "help": "trust for this session only"}),)),
    ("untrust", ("don't trust this project's files (kept until they change): their servers "
                 "stop and only their deny and ask rules apply"), ()),
    ("tools", "browse the tools, the deferred ones too", ()),
    ("reset", "forget the conversation (tools, rules and settings stay)", ()),
    ("history", ("the agent's file and cell changes in order, then the conversation, one line "
                 "per message"), ()),
    ("undo", "revert the agent's last change: a file write or a notebook cell edit", ()),
    ("cost", "tokens used and what they cost", ()),
    ("usage", "the same as cost", ()),
    ("save", "save the conversation as JSON", (("path", {}),)),
    ("load", "replace the conversation with one saved by `%agent save`", (("path", {}),)),
    ("key", "set a provider's API key from a hidden prompt, for this kernel only",
     (("provider", {"nargs": "?"}),)),
    ("mcp", ("MCP servers: `list`; `add NAME -- COMMAND ARGS...`; `add NAME --url URL "
             "[--header 'K: V']`; `add NAME --json '{...}'`; `remove NAME` (add/remove also "
             "update .mcp.json unless --no-save)"), (("words", {"nargs": "*"}),)),
)
#: Commands that get the rest of the line as typed (quotes and spaces kept) as ``args.text``.
RAW = frozenset({"allow", "deny", "ask", "unrule", "key", "mcp"})


def status(session: Session, _args: argparse.Namespace) -> str:
    cfg = session.config
    lines = [f"frontend: {session.frontend.state}"]
    if not session.has_agent:
        lines.insert(0, "agent: not started (the first %%agent cell starts it)")
        lines.append(f"model: {cfg.model or '(default choice)'}; "
                     f"mode: {cfg.mode or '(from the settings files, else default)'}")
        from agent_ext.trust import check_project  # noqa: PLC0415

        lines += check_project(cfg.cwd or Path.cwd()).lines()
        return "\n".join(lines)
    agent = session.agent()
    mode = policy_adapter.current_mode(agent.policy)
    lines[:0] = [f"model: {agent.model.name}", f"mode: {mode or 'none (fixed policy)'}",
                 f"cwd: {agent.cwd}", f"notebook: {agent.notebook or 'unknown'}",
                 f"messages: {len(agent.messages)}"]
    for kind, texts in policy_adapter.rules(agent.policy).items():
        if texts:
            lines.append(f"{kind}: {', '.join(texts)}")
    lines += _project_lines(agent)
    lines += _job_lines(agent)
    lines.append(_usage_line(session))
    return "\n".join(lines)


def _job_lines(agent: Agent) -> list[str]:
    """The background shell jobs still running: id, command, pid, time run and time limit."""
    from agent_ext.tools.shell_jobs import JobState, ShellJobs  # noqa: PLC0415

    jobs = agent.context.service(ShellJobs)
    running = [j for j in jobs.jobs() if j.state is JobState.RUNNING] if jobs is not None else []
    if not running:
        return ["background shell jobs: none running"]
    head = (f"background shell jobs: {len(running)} running (each stops at its time limit or "
            "when the kernel shuts down; ask the agent to stop one sooner)")
    lines = [head]
    for job in running:
        limit = ("no time limit" if job.time_limit is None
                 else f"stopped at {_duration(job.time_limit)}")
        command = job.command if len(job.command) <= 60 else job.command[:57] + "..."
        lines.append(f"  {job.id}: `{command}` pid {job.process.pid}, running "
                     f"{_duration(job.process.elapsed)}, {limit}")
    return lines


def _duration(seconds: float) -> str:
    """``42s``, ``3m 05s``, ``1h 00m``."""
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m {whole % 60:02d}s"
    return f"{whole // 3600}h {whole % 3600 // 60:02d}m"


def _project_lines(agent: Agent) -> list[str]:
    """Which project settings and servers are in force, and why."""
    lines = agent.refresh_project().lines()
    if agent.mcp is not None:
        servers = [f"{c.name} ({c.origin})" for c in agent.mcp.configs.values()]
        plan_mode = policy_adapter.current_mode(agent.policy) == "plan"
        plan = " (plan mode starts none)" if plan_mode else ""
        lines.append(f"MCP servers in force: {', '.join(servers) or 'none'}{plan}")
    return lines


def trust(session: Session, args: argparse.Namespace) -> str:
    agent = session.agent()
    if agent.refresh_project().status == "nothing":
        return ("nothing to trust: this project's files ask for nothing beyond deny and ask "
                "rules (`%agent status` shows what applies)")
    try:
        done = agent.trust(once=bool(args.once))
    except OSError as exc:
        raise UsageError(f"could not keep the answer: {exc}. Fix that, or type `%agent trust "
                         "--once` to trust the project for this session only.") from None
    after = ("its MCP servers start with the next %%agent cell; `%agent untrust` withdraws "
             "the trust")
    return "\n".join([*done.lines(), after])


def untrust(session: Session, _args: argparse.Namespace) -> str:
    try:
        done = session.agent().untrust()
    except OSError as exc:
        raise UsageError(f"could not keep the answer: {exc}. Fix that and type `%agent "
                         "untrust` again; until then the project stays as it was.") from None
    return "\n".join([*done.lines(), "type `%agent trust` to trust the files again"])


def model(session: Session, args: argparse.Namespace) -> str:
    if args.spec is None:
        from agent_ext.models.config import model_choices  # noqa: PLC0415

        current = (session.agent().model.name if session.has_agent
                   else session.config.model or "not chosen yet (the first %%agent cell chooses)")
        return "\n".join(model_choices().lines(current))
    spec = args.spec.strip()
    found, notice = resolve(spec, session.agent() if session.has_agent else None)
    with session.quiet():
        session.config.model = spec
    if not session.has_agent:
        return f"model: {found.name} (the session agent starts with it)"
    agent = session.agent()
    agent.model, agent.model_notice = found, notice
    return f"model: {found.name}"


def mode(session: Session, args: argparse.Namespace) -> str:
    agent = session.agent()
    if args.name is None:
        found = policy_adapter.current_mode(agent.policy)
        return f"mode: {found or 'none: ' + policy_adapter.NO_RULES.format(name='fixed')}"
    before = policy_adapter.current_mode(agent.policy)
    name = policy_adapter.set_mode(agent.policy, args.name)
    with session.quiet():
        session.config.mode = name
    if name == "bypassPermissions" and before != name:
        return ("mode: bypassPermissions. Warning: every tool call now runs without asking "
                "(only deny and ask rules still hold); type `%agent mode default` to ask again.")
    return f"mode: {name}"


def rule(kind: str) -> Command:
    def add(session: Session, args: argparse.Namespace) -> str:
        stored = policy_adapter.add_rule(session.agent().policy, kind, args.text)
        return f"{kind}: {stored} (this session)"

    return add


def unrule(session: Session, args: argparse.Namespace) -> str:
    removed = policy_adapter.remove_rule(session.agent().policy, args.text)
    if not removed:
        listed = policy_adapter.rules(session.agent().policy)
        known = ", ".join(r for kind in policy_adapter.KINDS for r in listed.get(kind, []))
        raise UsageError(f"no rule is written {args.text!r}; the rules are: {known or 'none'} "
                         "(`%agent status` shows them)")
    return f"removed {args.text} from {' and '.join(removed)}"


def tools(session: Session, _args: argparse.Namespace) -> str | None:
    registry = session.agent().registry
    try:
        from .widgets import ToolCatalogueWidget  # noqa: PLC0415
    except ImportError:
        names = registry.names()
        return f"{len(names)} tools: {', '.join(names)}"
    session.show(ToolCatalogueWidget(registry))
    return None


def reset(session: Session, _args: argparse.Namespace) -> str:
    agent = session.agent()
    running = [s.name for s in agent.mcp.status() if s.pid] if agent.mcp is not None else []
    agent.reset()
    stopped = (f"; MCP servers stopped ({', '.join(running)}), the next run starts them again"
               if running else "")
    return f"conversation cleared (tools, rules and settings stay){stopped}"


def history(session: Session, _args: argparse.Namespace) -> str:
    from agent_ext.notebook.session import notebook_changes  # noqa: PLC0415

    from .history import changes, summarize  # noqa: PLC0415

    agent = session.agent()
    files = agent.context.service(EditHistory)
    done = changes(files.entries() if files is not None else [],
                   notebook_changes(agent.context).entries(), agent.cwd)
    talk = summarize(agent.messages) or "no conversation yet"
    return f"{done}\n\nconversation:\n{talk}"


NOTHING = "Nothing to undo: the agent has changed no file or notebook cell in this session."


def undo(session: Session, _args: argparse.Namespace) -> str | Coroutine[Any, Any, str]:
    """Take back the agent's newest change: a file write or a notebook cell change.

    A cell change is undone through the notebook (the live one answers asynchronously), so it
    comes back as a coroutine giving the text to print.
    """
    from agent_ext.notebook.session import notebook_changes, notebook_reads  # noqa: PLC0415

    agent = session.agent()
    service = agent.context.service(EditHistory)
    cells = notebook_changes(agent.context)
    newest_cell = cells.newest()
    entries = service.entries() if service is not None else []
    if newest_cell is not None and (not entries or newest_cell.time >= entries[-1].time):
        return _undo_cell(cells, notebook_reads(agent.context))
    if service is None:
        if any(name in agent.registry for name in ("edit", "write_file", "notebook_edit")):
            return NOTHING
        raise UsageError("nothing to undo with: this session's tools keep no edit history "
                         "(the file tools provide it). Undo by hand, or ask the agent in a "
                         "%%agent cell.")
    if not entries:
        return NOTHING
    result = service.undo(1)
    if result.refused is not None:
        raise UsageError(result.message)
    return result.message


async def _undo_cell(cells: NotebookChanges, reads: NotebookReads) -> str:
    done = await cells.undo(reads)
    if done.refused:
        raise UsageError(done.message)
    return done.message


def usage(session: Session, _args: argparse.Namespace) -> str:
    return _usage_line(session)


def _usage_line(session: Session) -> str:
    if not session.has_agent:
        return "tokens: none used yet"
    agent = session.agent()
    used = f"tokens: {agent.usage.input_tokens:,} in, {agent.usage.output_tokens:,} out"
    spent = agent.cost()
    price = (f"cost: ${spent:.4f}" if spent is not None
             else "cost: unknown (no price set: Agent(price_per_mtok=(input, output)))")
    return f"{used}; {price}"


def save(session: Session, args: argparse.Namespace) -> str:
    agent = session.agent()
    try:
        path = agent.save(Path(args.path).expanduser())
    except OSError as exc:
        raise UsageError(f"cannot save to {args.path!r}: {exc.strerror or exc}. Type "
                         "`%agent save <path>.json` with a writable path.") from None
    return f"saved {len(agent.messages)} messages to {path}"


def load(session: Session, args: argparse.Namespace) -> str:
    agent = session.agent()
    try:
        agent.load(Path(args.path).expanduser())
    except OSError as exc:
        raise UsageError(f"cannot read {args.path!r}: {exc.strerror or exc}. Type "
                         "`%agent load <path>` with a file `%agent save` wrote.") from None
    except ValueError as exc:
        raise UsageError(f"{args.path!r} is not a saved conversation: {exc}") from None
    return f"loaded {len(agent.messages)} messages from {args.path}"


def key(session: Session, args: argparse.Namespace) -> str:
    return ask_key(session, args.text.split())


def mcp(session: Session, args: argparse.Namespace) -> str:
    from .mcp_command import run  # noqa: PLC0415

    return run(session.agent(), args.text)


COMMANDS: dict[str, Command] = {
    "status": status, "model": model, "mode": mode, "allow": rule("allow"),
    "deny": rule("deny"), "ask": rule("ask"), "unrule": unrule, "tools": tools, "reset": reset,
    "history": history, "undo": undo, "cost": usage, "usage": usage, "save": save,
    "load": load, "key": key, "mcp": mcp, "trust": trust, "untrust": untrust,
}

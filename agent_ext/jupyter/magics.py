"""``%%agent`` (the cell is the prompt) and ``%agent <command>`` (settings and session tools).

``%%agent`` continues the session's conversation; the input transformer makes the cell await
the run. ``{name}`` in the prompt takes a variable's value (``interpolate``). ``%agent?`` lists
the commands; each problem is a ``UsageError`` saying what to type.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
from collections.abc import Callable, Coroutine, Generator
from typing import Any, Protocol, TypeVar, cast

from IPython.core.async_helpers import _asyncio_runner
from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import ArgDecorator, MagicArgumentParser, magic_arguments

from .commands import COMMANDS, RAW, SPEC
from .interpolate import interpolate
from .session import Session
from .transformer import AWAITED, awaits_line

F = TypeVar("F", bound=Callable[..., Any])


class _Decorator(Protocol):
    def __call__(self, fn: F, /) -> F: ...


# IPython's magic decorators are untyped (mypy sees Never); these are their real shapes.
_line_magic = cast("Callable[[str], _Decorator]", line_magic)
_cell_magic = cast("Callable[[str], _Decorator]", cell_magic)
_magic_arguments = cast("Callable[[], _Decorator]", magic_arguments)
_no_var_expand = cast("_Decorator", no_var_expand)
PROMPT_HINT = "%%agent\nsummarise the dataframe df and plot its numeric columns"


class _Subcommands(ArgDecorator):
    """Adds one sub-parser per ``%agent`` command, so ``%agent?`` documents them all."""

    def __call__(self, func: F) -> F:
        return cast("F", super().__call__(func))  # type: ignore[no-untyped-call]

    def add_to_parser(self, parser: Any, group: Any) -> None:
        sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands",
                                    parser_class=MagicArgumentParser)
        for name, text, arguments in SPEC:
            # argparse %-formats help strings: `%agent` must be written `%%agent` there.
            command = sub.add_parser(name, help=text.replace("%", "%%"), description=text)
            for argument, keywords in arguments:
                command.add_argument(argument, **keywords)
        sub.add_parser("help", help="this help", description="this help")


class PendingRun:
    """A ``%%agent`` run, started when awaited (the input transformer awaits it)."""

    def __init__(self, start: Callable[[], Coroutine[Any, Any, None]]) -> None:
        self._start = start

    def __await__(self) -> Generator[Any, None, None]:
        return self._start().__await__()

    def __repr__(self) -> str:
        return "<%%agent run, not started: `await` it, or run it as a %%agent cell>"


@magics_class
class AgentMagics(Magics):
    """The ``agent`` line and cell magics, bound to the kernel's session."""

    def __init__(self, shell: Any, session: Session) -> None:
        super().__init__(shell)
        self.session = session

    @_no_var_expand
    @_magic_arguments()
    @_Subcommands()
    @_line_magic("agent")
    def agent(self, line: str) -> PendingRun | None:
        """Settings and tools of the session agent; the prompt itself goes in a %%agent cell."""
        text = line.strip()
        name, _, rest = text.partition(" ")
        if not name:
            name, text = "status", "status"
        parser: MagicArgumentParser = self.agent.parser  # type: ignore[attr-defined]
        if name in ("help", "-h", "--help"):
            print(parser.format_help())
            return None
        if name not in COMMANDS:
            raise UsageError(f"%agent has no command {name!r}; the commands are "
                             f"{', '.join(COMMANDS)} (`%agent help` explains them). A prompt "
                             f"goes in a cell of its own:\n{PROMPT_HINT}")
        if name in RAW:
            if not rest.strip() and name not in ("key", "mcp"):
                raise UsageError(f"type `%agent {name} RULE`, e.g. `%agent {name} "
                                 f"Bash(git status:*)` or `%agent {name} read_file`.")
            args = argparse.Namespace(command=name, text=rest.strip())
        else:
            args = _parse(parser, text, name)
        out = COMMANDS[name](self.session, args)
        if name in AWAITED and awaits_line(self.shell):
            done = out
            return PendingRun(lambda: _print_when_done(done))
        if isinstance(out, Coroutine):
            out = run_now(out)
        if out:
            print(out)
        return None

    @_no_var_expand
    @_cell_magic("agent")
    def agent_cell(self, line: str, cell: str) -> PendingRun:
        """Send the cell to the session agent as a prompt, continuing its conversation.

        ``{name}`` and ``{obj.attr}`` take the values of existing variables; any other braces
        stay as written, and ``{{`` writes a literal ``{``. The cell stays busy until the
        agent is done; approvals appear in the cell's output.
        """
        prompt = "\n".join(part for part in (line.strip(), cell.strip()) if part)
        if not prompt:
            raise UsageError(f"write the prompt in the cell, under %%agent:\n{PROMPT_HINT}")
        shell: Any = self.shell
        if not shell.autoawait or shell.loop_runner is not _asyncio_runner:
            raise UsageError("%%agent runs as top-level await on asyncio: type "
                             "`%autoawait asyncio` and run the cell again.")
        prompt = interpolate(prompt, shell.user_ns)
        session = self.session
        session.agent()  # a configuration problem shows now, as a UsageError

        from .run import run_prompt  # noqa: PLC0415

        return PendingRun(lambda: run_prompt(session, prompt))


async def _print_when_done(out: str | Coroutine[Any, Any, str] | None) -> None:
    if isinstance(out, Coroutine):
        out = await out
    if out:
        print(out)


def run_now(pending: Coroutine[Any, Any, str]) -> str:
    """Finish a command's coroutine where the cell cannot await it (terminal IPython, or
    autoawait off): on this thread when no loop runs here, else on a thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(pending)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, pending).result()


def _parse(parser: MagicArgumentParser, text: str, name: str) -> argparse.Namespace:
    try:
        parsed: argparse.Namespace = parser.parse_argstring(text)  # type: ignore[no-untyped-call]
    except (UsageError, ValueError) as exc:
        spec = next(s for s in SPEC if s[0] == name)
        usage = " ".join(["%agent", name, *(a.upper() if k.get("nargs") != "?"
                                             else f"[{a.upper()}]" for a, k in spec[2])])
        raise UsageError(f"{exc}. Type `{usage}`; `%agent help` lists every command.") from None
    return parsed

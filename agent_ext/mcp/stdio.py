"""The stdio transport: one server process in its own process group, killed as a whole tree.

The SDK's ``stdio_client`` kills the process group only when the server outlives the grace
period, so the children of a server that crashed stay behind, and it hides the pid. This
transport always sweeps the group (and descendants that left it) on the way out, keeps the
tail of the server's stderr for error messages, and says when the server's stdout ended.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
from collections import deque
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import anyio
import anyio.abc
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage

from . import procs
from .config import ServerConfig

#: Seconds for the server to exit by itself once its stdin closes, then after SIGTERM.
GRACE = 1.0
_POLL = 0.02
_EXTRA_ENV = ("LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "SYSTEMROOT", "COMSPEC")
_STDERR_LINES = 30
Streams = tuple[MemoryObjectReceiveStream[SessionMessage | Exception],
                MemoryObjectSendStream[SessionMessage]]


class ServerStartError(RuntimeError):
    """The server process could not be started; the message says why."""


class StdioProcess:
    """Runs one stdio server; ``open()`` yields the streams the SDK's session reads and writes."""

    def __init__(self, config: ServerConfig, *, on_spawn: Callable[[int], None] | None = None,
                 on_exit: Callable[[int], None] | None = None) -> None:
        self.config = config
        self.pid: int | None = None
        self.returncode: int | None = None
        self.stderr_tail: deque[str] = deque(maxlen=_STDERR_LINES)
        self.ended: anyio.Event | None = None
        #: True once shutdown had to signal the server (so its exit code is ours, not its own).
        self.signalled = False
        self._on_spawn = on_spawn
        self._on_exit = on_exit
        self._process: anyio.abc.Process | None = None

    def environment(self) -> dict[str, str]:
        """The SDK's safe inherited variables (PATH, HOME, ...), locale, then the entry's env."""
        env = get_default_environment()
        env |= {k: v for k in _EXTRA_ENV if (v := os.environ.get(k)) is not None}
        return env | dict(self.config.env)

    def executable(self, env: dict[str, str]) -> str:
        """The command's path; raises ServerStartError when it or the working folder is missing."""
        cwd = self.config.cwd
        if cwd is not None and not Path(cwd).expanduser().is_dir():
            raise ServerStartError(f"working directory {cwd!r} does not exist")
        command = self.config.command
        if os.sep in command or (os.altsep and os.altsep in command):
            path = Path(command).expanduser()
            if not path.is_absolute() and self.config.cwd:
                path = Path(self.config.cwd) / path
            if not path.exists():
                raise ServerStartError(f"command {command!r} not found")
            return str(path)
        found = shutil.which(command, path=env.get("PATH"))
        if found is None:
            raise ServerStartError(f"command {command!r} not found on PATH")
        return found

    @contextlib.asynccontextmanager
    async def open(self) -> AsyncIterator[Streams]:
        env = self.environment()
        executable = self.executable(env)
        cwd = self.config.cwd
        try:
            process = await anyio.open_process([executable, *self.config.args], env=env,
                                               cwd=cwd, start_new_session=True)
        except OSError as exc:
            raise ServerStartError(f"command {self.config.command!r} could not be run: "
                                   f"{exc.strerror or exc}") from None
        self.pid = process.pid
        self._process = process
        self.ended = anyio.Event()
        if self._on_spawn is not None:
            self._on_spawn(process.pid)
        read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_send, write_recv = anyio.create_memory_object_stream[SessionMessage](0)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._read_stdout, process, read_send)
                tg.start_soon(self._write_stdin, process, write_recv, read_send)
                tg.start_soon(self._read_stderr, process)
                try:
                    yield read_recv, write_send
                finally:
                    with anyio.CancelScope(shield=True):
                        await self._stop(process)
                        for stream in (read_recv, write_send, read_send, write_recv):
                            await stream.aclose()
                    tg.cancel_scope.cancel()
        finally:
            procs.kill_now(process.pid)
            if self._on_exit is not None:
                self._on_exit(process.pid)

    async def _read_stdout(self, process: anyio.abc.Process,
                           out: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
        assert process.stdout is not None
        buffer = b""
        try:
            async with out:
                async for chunk in process.stdout:
                    *lines, buffer = (buffer + chunk).split(b"\n")
                    for line in lines:
                        if line.strip():
                            await out.send(_parse(line))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass
        finally:
            if self.ended is not None:
                self.ended.set()

    async def _write_stdin(self, process: anyio.abc.Process,
                           messages: MemoryObjectReceiveStream[SessionMessage],
                           reader: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
        assert process.stdin is not None
        try:
            async with messages:
                async for message in messages:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((data + "\n").encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await reader.aclose()

    async def _read_stderr(self, process: anyio.abc.Process) -> None:
        assert process.stderr is not None
        buffer = b""
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async for chunk in process.stderr:
                *lines, buffer = (buffer + chunk).split(b"\n")
                for line in lines:
                    text = line.decode(errors="replace").rstrip()
                    if text:
                        self.stderr_tail.append(self.config.mask(text[:500]))

    async def _stop(self, process: anyio.abc.Process) -> None:
        """Close stdin, wait, then TERM and KILL the group and every descendant found."""
        extra = procs.descendants(process.pid) if process.returncode is None else set()
        assert process.stdin is not None
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
        await _wait(lambda: process.returncode is not None, GRACE)
        for sig in (signal.SIGTERM, getattr(signal, "SIGKILL", signal.SIGTERM)):
            if not _tree_alive(process.pid, extra):
                break
            self.signalled = self.signalled or process.returncode is None
            procs.signal_tree(process.pid, extra, sig)
            await _wait(lambda: not _tree_alive(process.pid, extra), GRACE)
        await _wait(lambda: process.returncode is not None, GRACE)
        self.returncode = process.returncode
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError, anyio.BrokenResourceError,
                                         anyio.ClosedResourceError):
                    await pipe.aclose()
        with anyio.move_on_after(GRACE), contextlib.suppress(OSError):
            await process.aclose()

    async def wait_exit(self) -> None:
        """Return once the server process exited or its stdout ended.

        Either can come first: a child that inherited stdout keeps the pipe open after the
        server died, and a server may close stdout and linger.
        """
        while not (self.ended is not None and self.ended.is_set()):
            if self._process is not None and self._process.returncode is not None:
                return
            await anyio.sleep(0.1)

    def exit_note(self) -> str:
        """How the server ended by itself (with its last stderr lines); "" if we stopped it."""
        if self.returncode is None or self.signalled:
            return ""
        note = f"the server process exited with code {self.returncode}"
        tail = self.stderr_summary()
        return f"{note} (stderr: {tail})" if tail else note

    def stderr_summary(self, lines: int = 3) -> str:
        """The last lines the server wrote to stderr, joined, for error messages."""
        return " | ".join(list(self.stderr_tail)[-lines:])


def _tree_alive(pgid: int, extra: set[int]) -> bool:
    return procs.group_alive(pgid) or any(procs.alive(p) for p in extra)


async def _wait(done: Callable[[], bool], seconds: float) -> None:
    with anyio.move_on_after(seconds):
        while not done():  # noqa: ASYNC110  exit codes and process groups have no event
            await anyio.sleep(_POLL)


def _parse(line: bytes) -> SessionMessage | Exception:
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        return exc

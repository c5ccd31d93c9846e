"""Background shell jobs: the session's registry, and the shell_output and shell_kill tools.

A long-running command (a dev server, a watch build) must not hold up the conversation: it runs
as a job the model checks on and stops, and the agent is told when it ends. The agent's
``aclose()`` calls ``ShellJobs.kill_all()`` so nothing outlives the session.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import enum
import itertools
import os
import signal
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field

from agent_ext.core import (
    ExecControl,
    Kind,
    Params,
    Permission,
    Tier,
    Tool,
    ToolContext,
    ToolInvocation,
    ToolResult,
)
from agent_ext.core.scratch import ScratchFolder

from ._proc import OutputLog, RunningProcess, spawn_async

JOB_NOT_FOUND = "shell_job_not_found"
#: Characters of output a completion notice carries.
NOTICE_TAIL = 2_000
#: Characters one shell_output call returns at most.
READ_LIMIT = 20_000
MAX_WAIT = 600.0
#: Seconds a background job may run before it is stopped; ``AGENT_EXT_SHELL_JOB_LIMIT`` sets
#: another limit (0: none).
JOB_TIME_LIMIT = 3600.0


def job_time_limit() -> float | None:
    """The background-job time limit in seconds, None for no limit."""
    raw = os.environ.get("AGENT_EXT_SHELL_JOB_LIMIT", "").strip()
    try:
        limit = float(raw) if raw else JOB_TIME_LIMIT
    except ValueError:
        limit = JOB_TIME_LIMIT
    return limit if limit > 0 else None


class JobState(str, enum.Enum):
    """A job's lifecycle: running, then exactly one of the three end states, never back."""

    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


@dataclass
class ShellJob:
    """One background command: its process, its state and how far the model has read."""

    id: str
    command: str
    description: str
    cwd: Path
    process: RunningProcess
    state: JobState = JobState.RUNNING
    read_offset: int = 0
    kill_requested: bool = False
    #: Seconds it may run before it is stopped (None: no limit), and the limit it was stopped
    #: at when it ran out of time.
    time_limit: float | None = None
    expired_after: float | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def transition(self, new: JobState) -> bool:
        """Move from running to an end state; False (and no change) for any other move."""
        with self._lock:
            if self.state is not JobState.RUNNING or new is JobState.RUNNING:
                return False
            self.state = new
            return True

    @property
    def log(self) -> OutputLog:
        return self.process.log

    @property
    def exit_code(self) -> int | None:
        return self.process.returncode

    def status_line(self) -> str:
        """``shell_1 (`cmd`): completed, exit code 0 after 1.2s`` and the like."""
        head = f"{self.id} (`{_short(self.command)}`)"
        elapsed = f"{self.process.elapsed:.1f}s"
        if self.state is JobState.RUNNING:
            return f"{head}: running for {elapsed} (pid {self.process.pid})"
        if self.state is JobState.CANCELLED and self.expired_after is not None:
            return (f"{head}: stopped at its time limit of {self.expired_after:g}s "
                    "(AGENT_EXT_SHELL_JOB_LIMIT sets it)")
        if self.state is JobState.CANCELLED:
            return f"{head}: stopped by shell_kill after {elapsed}"
        return f"{head}: {self.state.value}, {describe_exit(self.exit_code)} after {elapsed}"


class ShellJobs:
    """The session's shell processes and output logs (one per agent, in ``ctx.services``).

    Notices of finished jobs queue up for ``drain_notifications()``; listeners added with
    ``add_listener`` are called with each notice on the event loop that started the job.
    """

    def __init__(self) -> None:
        # Logs of a registry dropped without kill_all go when it is collected.
        self._logs_folder = ScratchFolder("agent_ext_shell_")
        self._jobs: dict[str, ShellJob] = {}
        self._foreground: set[RunningProcess] = set()
        self._ids = itertools.count(1)
        self._logs = itertools.count(1)
        self._lock = threading.Lock()
        self._notices: list[str] = []
        self._listeners: list[Callable[[str], None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._expiring: asyncio.Future[None] | None = None
        atexit.register(_kill_at_exit, weakref.ref(self))

    @classmethod
    def of(cls, ctx: ToolContext) -> ShellJobs:
        """The session's registry, created on first use."""
        return ctx.service_or_create(ShellJobs, cls)

    # -- logs --------------------------------------------------------------------------------

    def log_dir(self) -> Path:
        return self._logs_folder.path()

    def new_log(self, stem: str = "", *, eager: bool = False, head_chars: int = 5_000,
                tail_chars: int = 20_000, paced: bool = False) -> OutputLog:
        name = stem or f"command_{next(self._logs)}"
        return OutputLog(self.log_dir() / f"{name}.log", head_chars=head_chars,
                         tail_chars=tail_chars, eager=eager, paced=paced)

    # -- foreground processes (so kill_all reaches them too) ---------------------------------

    def track(self, process: RunningProcess) -> None:
        with self._lock:
            self._foreground.add(process)

    def untrack(self, process: RunningProcess) -> None:
        with self._lock:
            self._foreground.discard(process)

    # -- jobs --------------------------------------------------------------------------------

    async def start(self, command: str, cwd: Path, description: str = "") -> ShellJob:
        """Start ``command`` as a background job; raises ``OSError`` if it cannot start."""
        self._loop = asyncio.get_running_loop()
        job_id = f"shell_{next(self._ids)}"
        log = self.new_log(job_id, eager=True, paced=True)
        holder: list[ShellJob] = []
        ready = threading.Event()

        def finished(_process: RunningProcess) -> None:
            ready.wait(5)
            if holder:
                self._finish(holder[0])

        process = await spawn_async(command, cwd, log, finished)
        job = ShellJob(job_id, command, description, cwd, process)
        holder.append(job)
        with self._lock:
            self._jobs[job_id] = job
        ready.set()
        limit = job.time_limit = job_time_limit()
        if limit is not None:
            # A job that ends first makes the timer a no-op (it checks the state).
            self._loop.call_later(limit, self._expire, job, limit)
        return job

    def _expire(self, job: ShellJob, limit: float) -> None:
        """Stop a job that ran past the time limit, and tell the model why."""
        if job.state is not JobState.RUNNING:
            return
        job.kill_requested = True
        job.expired_after = limit

        async def stop() -> None:
            await asyncio.to_thread(job.process.kill)
            notice = f"Background job {job.status_line()}."
            with self._lock:
                self._notices.append(notice)
            for listener in list(self._listeners):
                self._call(listener, notice)

        self._expiring = asyncio.ensure_future(stop())

    def get(self, job_id: str) -> ShellJob | None:
        with self._lock:
            return self._jobs.get(job_id.strip())

    def jobs(self) -> list[ShellJob]:
        with self._lock:
            return list(self._jobs.values())

    async def kill(self, job_id: str) -> ShellJob | None:
        """Stop a job's whole process tree (bounded time); the job, or None if unknown."""
        job = self.get(job_id)
        if job is None or job.state is not JobState.RUNNING:
            return job
        job.kill_requested = True
        await asyncio.to_thread(job.process.kill)
        return job

    async def kill_all(self, *, remove_logs: bool = True) -> None:
        """Stop every running job and foreground command; then remove the session's logs."""
        running = [j for j in self.jobs() if j.state is JobState.RUNNING]
        for job in running:
            job.kill_requested = True
        with self._lock:
            foreground = list(self._foreground)
        await asyncio.gather(*(asyncio.to_thread(p.kill) for p in
                               [*(j.process for j in running), *foreground]))
        if remove_logs:
            await asyncio.to_thread(self.remove_logs)  # logs of up to 64 MB each

    def kill_all_sync(self, grace: float = 0.5) -> None:
        """``kill_all`` without an event loop (``atexit``); blocks about ``grace`` per process."""
        for job in self.jobs():
            if job.state is JobState.RUNNING:
                job.kill_requested = True
                job.process.kill(grace)
        with self._lock:
            foreground = list(self._foreground)
        for process in foreground:
            process.kill(grace)
        self.remove_logs()

    def remove_logs(self) -> None:
        self._logs_folder.remove()

    # -- notices -----------------------------------------------------------------------------

    def add_listener(self, callback: Callable[[str], None]) -> None:
        self._listeners.append(callback)

    def drain_notifications(self) -> list[str]:
        """Notices of jobs that ended since the last call (oldest first), then forgets them."""
        with self._lock:
            notices, self._notices = self._notices, []
        return notices

    def _finish(self, job: ShellJob) -> None:
        if job.kill_requested:
            job.transition(JobState.CANCELLED)
            return
        code = job.exit_code
        if not job.transition(JobState.COMPLETED if code == 0 else JobState.FAILED):
            return
        notice = completion_notice(job)
        with self._lock:
            self._notices.append(notice)
        for listener in list(self._listeners):
            self._call(listener, notice)

    def _call(self, listener: Callable[[str], None], notice: str) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(listener, notice)
                return
        with contextlib.suppress(Exception):
            listener(notice)


def _kill_at_exit(ref: weakref.ref[ShellJobs]) -> None:
    """At interpreter exit, stop what a session that was never closed left running."""
    jobs = ref()
    if jobs is not None:
        jobs.kill_all_sync()


def completion_notice(job: ShellJob) -> str:
    """What the model is told when a job ends on its own: status and the output's tail."""
    log = job.log
    tail = log.tail(NOTICE_TAIL).rstrip("\n")
    more = log.total - len(tail)
    lines = [f"Background job {job.status_line()}."]
    if tail:
        lines.append(f"Last {len(tail):,} of {log.total:,} output characters:" if more > 0
                     else "Output:")
        lines.append(tail)
    else:
        lines.append("It printed nothing.")
    if more > 0:
        lines.append(f"Full output: {log.path} (or shell_output with job_id={job.id!r}).")
    return "\n".join(lines)


def describe_exit(code: int | None) -> str:
    if code is None:
        return "exit code unknown"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"killed by {name}"
    return f"exit code {code}"


def _short(text: str, limit: int = 80) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 3] + "..."


# -- tools ------------------------------------------------------------------------------------


class ShellOutputParams(Params):
    job_id: str = Field(min_length=1)
    offset: int | None = Field(
        default=None, description="Where to read from; omit for new output, -N for the last N.")
    wait_seconds: float = Field(default=0, ge=0, le=MAX_WAIT)


class ShellOutputTool(Tool[ShellOutputParams]):
    name = "shell_output"
    description = (
        "Read a background shell job's status and the output since your last read.")
    kind = Kind.READ
    params_model = ShellOutputParams
    read_only = True
    defer = True
    search_hint = "background job output status bash shell log poll"

    def invocation(self, params: ShellOutputParams,
                   ctx: ToolContext) -> ToolInvocation[ShellOutputParams]:
        return _ShellOutputInvocation(self, params, ctx)


class _ShellOutputInvocation(ToolInvocation[ShellOutputParams]):
    def description(self) -> str:
        return f"shell_output {self.params.job_id}"

    async def execute(self, control: ExecControl) -> ToolResult:
        jobs = ShellJobs.of(self.ctx)
        job = jobs.get(self.params.job_id)
        if job is None:
            return unknown_job(jobs, self.params.job_id)
        deadline = time.monotonic() + self.params.wait_seconds
        while not control.cancelled.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0 or await job.process.wait(min(0.1, remaining)):
                break
        return read_job(job, self.params.offset)


def read_job(job: ShellJob, offset: int | None) -> ToolResult:
    """A job's status and its output from ``offset`` (default: since the last read)."""
    log = job.log
    if offset is None:
        start = job.read_offset
    elif offset < 0:
        start = max(0, log.total + offset)
    else:
        start = offset
    text, end, skipped = log.since(start, READ_LIMIT)
    job.read_offset = max(job.read_offset, end)
    lines = [f"Job {job.status_line()}."]
    if skipped:
        where = ((f"; {log.path} keeps the output's start and end" if log.capped
                  else f"; the full output is in {log.path}") if log.saved else "")
        lines.append(f"{skipped:,} characters skipped to fit this read{where}.")
    lines.append(f"Output characters {start + skipped:,}-{end:,} of {log.total:,} "
                 f"(next_offset={end}):" if text else
                 f"No new output (next_offset={end}).")
    if text:
        lines.append(text.rstrip("\n"))
    return ToolResult(llm_content="\n".join(lines))


def unknown_job(jobs: ShellJobs, job_id: str) -> ToolResult:
    known = ", ".join(j.id for j in jobs.jobs()) or "none"
    return ToolResult.fail(JOB_NOT_FOUND, f"No background shell job {job_id!r} in this session "
                                          f"(jobs: {known}). Use an id the shell tool returned.")


class ShellKillParams(Params):
    job_id: str = Field(min_length=1)


class ShellKillTool(Tool[ShellKillParams]):
    name = "shell_kill"
    description = "Stop a background shell job and every process it started."
    kind = Kind.EXECUTE
    params_model = ShellKillParams
    defer = True
    search_hint = "stop background job kill process bash shell terminate"

    def invocation(self, params: ShellKillParams,
                   ctx: ToolContext) -> ToolInvocation[ShellKillParams]:
        return _ShellKillInvocation(self, params, ctx)


class _ShellKillInvocation(ToolInvocation[ShellKillParams]):
    def description(self) -> str:
        return f"shell_kill {self.params.job_id}"

    def tier(self) -> Tier:
        return Tier.WRITE

    def default_permission(self) -> Permission:
        return Permission.ALLOW  # it only stops what this session started

    async def execute(self, control: ExecControl) -> ToolResult:
        jobs = ShellJobs.of(self.ctx)
        job = jobs.get(self.params.job_id)
        if job is None:
            return unknown_job(jobs, self.params.job_id)
        if job.state is not JobState.RUNNING:
            return ToolResult(llm_content=f"Job {job.status_line()}; nothing to stop.")
        await jobs.kill(job.id)
        tail = job.log.tail(NOTICE_TAIL).rstrip("\n")
        text = f"Stopped job {job.id} and its process tree. Job {job.status_line()}."
        if tail:
            text += f"\nLast output:\n{tail}"
        return ToolResult(llm_content=text)

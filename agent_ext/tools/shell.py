"""The shell tool: run a command with bash in the agent's working directory.

Each command runs in a new session with stdin closed, its output streamed live and kept with
bounded memory (head and tail; the rest in a log file), and a timeout or a cancel stops its
whole process tree. ``run_in_background`` hands long-running commands to ``ShellJobs``. A
plain ``sed -i 's/a/b/' file`` is presented and applied as a file edit (see ``_sed_edit``).
"""

from __future__ import annotations

import asyncio
import difflib
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator

from agent_ext.core import (
    ConfirmationDetails,
    ErrorCode,
    ExecControl,
    Kind,
    Params,
    Tool,
    ToolContext,
    ToolInvocation,
    ToolResult,
)

from ._proc import RunningProcess, spawn_async
from .shell_jobs import ShellJobs, describe_exit

if TYPE_CHECKING:
    from agent_ext.permissions.sed import SedEdit

DEFAULT_TIMEOUT = 120.0
MAX_TIMEOUT = 600.0
#: Output kept in memory per command: the first HEAD and the last TAIL characters.
HEAD_CHARS = 5_000
TAIL_CHARS = 20_000
TICK = 0.1
EMIT_INTERVAL = 0.2
EMIT_CHARS = 4_096
LIVE_LIMIT = 16_000
#: How long a command's background children may hold its output open after it exits.
LINGER = 1.0
# A `sed -i` edit is computed in the kernel (to show its diff) only when the file is this small
# and the regex's estimated work (SedEdit.work; 1e9 is about a tenth of a second) this low;
# otherwise it runs as the command itself, under the shell's timeout.
SED_PREVIEW_MAX_CHARS = 4_000_000
SED_PREVIEW_MAX_WORK = 5_000_000_000

Outcome = Literal["exit", "timeout", "cancelled", "linger"]


class ShellParams(Params):
    command: str = Field(min_length=1)
    description: str | None = Field(default=None, description="5-10 words for the user.")
    timeout: float = Field(default=DEFAULT_TIMEOUT,
                           description=f"Seconds, at most {MAX_TIMEOUT:g}.")
    run_in_background: bool = Field(
        default=False, description="For servers: returns a job id for shell_output, shell_kill.")

    @field_validator("timeout", mode="before")
    @classmethod
    def _seconds(cls, value: Any) -> Any:
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            return value
        if not math.isfinite(seconds) or seconds <= 0:
            return DEFAULT_TIMEOUT
        if seconds >= 10_000:
            seconds /= 1000
        return min(seconds, MAX_TIMEOUT)


class ShellTool(Tool[ShellParams]):
    name = "shell"
    description = (
        "Run a non-interactive bash command (stdin is closed) in the working directory and "
        "return its exit code and output. cd does not carry over between calls. Read, search "
        "and edit files with the file tools, not the shell.")
    kind = Kind.EXECUTE
    params_model = ShellParams
    search_hint = "bash terminal command run execute script"
    max_output_chars = 30_000
    truncate_keep = "both"

    def check(self, params: ShellParams, ctx: ToolContext) -> str | None:
        if not params.command.strip():
            return "`command` is blank; give the command to run"
        return None

    def invocation(self, params: ShellParams, ctx: ToolContext) -> ToolInvocation[ShellParams]:
        if not params.run_in_background:
            edit = recognise_sed(params.command)
            if edit is not None:
                return _SedInvocation(self, params, ctx, edit)
        return ShellInvocation(self, params, ctx)


class ShellInvocation(ToolInvocation[ShellParams]):
    """One shell call: what it runs and where, how it is confirmed, and running it."""

    def description(self) -> str:
        label = self.params.description or " ".join(self.params.command.split())
        label = label if len(label) <= 100 else label[:97] + "..."
        return f"shell: {label}" + (" (background)" if self.params.run_in_background else "")

    def command(self) -> str:
        return self.params.command

    def classifier_input(self) -> str:
        return self.params.command

    async def confirmation_details(self) -> ConfirmationDetails:
        where = str(self.ctx.cwd)
        summary = self.params.description or f"Run in {where}"
        return ConfirmationDetails(
            kind="exec", title="Run this shell command?", summary=summary, tool_name=self.tool.name,
            command=self.params.command, proposed=self.params.command,
            extra={"cwd": where, "description": self.params.description or "",
                   "background": self.params.run_in_background})

    def with_modification(self, proposed: str) -> ToolInvocation[ShellParams] | None:
        if not proposed.strip():
            return None
        params = self.params.model_copy(update={"command": proposed})
        return ShellInvocation(self.tool, params, self.ctx)

    async def execute(self, control: ExecControl) -> ToolResult:
        jobs = ShellJobs.of(self.ctx)
        if self.params.run_in_background:
            return await start_background(jobs, self.params, self.ctx.cwd)
        return await run_foreground(jobs, self.params.command, self.ctx.cwd,
                                    self.params.timeout, control)


class _SedInvocation(ShellInvocation):
    """A ``sed -i`` substitution shown as a diff and applied as a file edit, not run."""

    def __init__(self, tool: Tool[ShellParams], params: ShellParams, ctx: ToolContext,
                 edit: SedEdit, proposed: str | None = None) -> None:
        super().__init__(tool, params, ctx)
        self.edit = edit
        self.path = ctx.resolve(str(edit.file))
        self._proposed = proposed
        self._plan: SedPlan | None = None
        self._planned = False

    def locations(self) -> list[Path]:
        return [self.path]

    async def plan(self) -> SedPlan | None:
        if not self._planned:
            self._plan = await asyncio.to_thread(plan_sed, self.path, self.edit, self._proposed)
            self._planned = True
        return self._plan

    async def confirmation_details(self) -> ConfirmationDetails:
        plan = await self.plan()
        if plan is None:
            return await super().confirmation_details()
        return ConfirmationDetails(
            kind="edit", title=f"Apply this edit to {self.path.name}?",
            summary=self.params.description or f"sed edit of {self.path}",
            tool_name=self.tool.name, file_path=str(self.path), diff=plan.diff,
            original=plan.original.text, proposed=plan.proposed, command=self.params.command,
            extra={"cwd": str(self.ctx.cwd), "via": "sed"})

    def with_modification(self, proposed: str) -> ToolInvocation[ShellParams] | None:
        if self._planned and self._plan is None:  # the user saw (and edited) the command
            return super().with_modification(proposed)
        return _SedInvocation(self.tool, self.params, self.ctx, self.edit, proposed)

    async def execute(self, control: ExecControl) -> ToolResult:
        plan = await self.plan()
        if plan is None:  # not an editable text file, or too costly here: run the command
            return await super().execute(control)
        return await asyncio.to_thread(apply_sed, self.ctx, plan)


async def start_background(jobs: ShellJobs, params: ShellParams, cwd: Path) -> ToolResult:
    """Start a background job and say how to follow it."""
    try:
        job = await jobs.start(params.command, cwd, params.description or "")
    except OSError as exc:
        return _start_failed(cwd, exc)
    text = (f"Started background job {job.id} (pid {job.process.pid}). It keeps running; you "
            f"will be told when it ends. Read its output with shell_output(job_id=\"{job.id}\") "
            f"and stop it with shell_kill(job_id=\"{job.id}\"). Its output is also written to "
            f"{job.log.path}.")
    return ToolResult(llm_content=text, display=text)


async def run_foreground(jobs: ShellJobs, command: str, cwd: Path, timeout: float,
                         control: ExecControl) -> ToolResult:
    """Run ``command`` to its end, a timeout or a cancel; output streams to ``control``."""
    log = jobs.new_log(head_chars=HEAD_CHARS, tail_chars=TAIL_CHARS)
    try:
        process = await spawn_async(command, cwd, log)
    except OSError as exc:
        return _start_failed(cwd, exc)
    jobs.track(process)
    live = _Live(process, control)
    outcome: Outcome = "exit"
    try:
        exited_at: float | None = None
        deadline = process.started + timeout
        while not await process.wait(TICK):
            live.flush()
            now = time.monotonic()
            if control.cancelled.is_set():
                outcome = "cancelled"
            elif now >= deadline:
                outcome = "timeout"
            elif process.exited():
                exited_at = exited_at if exited_at is not None else now
                outcome = "linger" if now - exited_at >= LINGER else "exit"
            if outcome != "exit":
                await asyncio.to_thread(process.kill)
                break
    except BaseException:
        process.kill_soon()
        raise
    finally:
        jobs.untrack(process)
    live.flush(force=True)
    return shell_result(process, outcome, timeout)


class _Live:
    """Live output, throttled: at most every EMIT_INTERVAL unless EMIT_CHARS are waiting."""

    def __init__(self, process: RunningProcess, control: ExecControl) -> None:
        self.log = process.log
        self.control = control
        self.offset = 0
        self.last = time.monotonic()

    def flush(self, *, force: bool = False) -> None:
        pending = self.log.total - self.offset
        now = time.monotonic()
        if pending <= 0 or (not force and pending < EMIT_CHARS
                            and now - self.last < EMIT_INTERVAL):
            return
        text, self.offset, skipped = self.log.since(self.offset, LIVE_LIMIT)
        self.last = now
        if skipped:
            text = f"[... {skipped:,} characters not shown live ...]\n{text}"
        self.control.emit(text)


def shell_result(process: RunningProcess, outcome: Outcome, timeout: float) -> ToolResult:
    """The model's view of a finished command: status line, notes, bounded output."""
    log = process.log
    body = log.snapshot().rstrip("\n") or "(no output)"
    took = f"{process.elapsed:.2f}s"
    notes = []
    if log.cut:
        where = (f" The full output is in {log.path}; read or grep it there." if log.saved
                 else "")
        if log.saved and log.capped:
            where = (f" {log.path} keeps its start and end ({log.file_cap:,} characters; "
                     "AGENT_EXT_SHELL_LOG_MB sets the size); read or grep it there.")
        notes.append(f"The output was {log.total:,} characters: only its first {HEAD_CHARS:,} "
                     f"and last {TAIL_CHARS:,} are shown.{where}")
    if outcome == "timeout":
        first = (f"The command timed out after {timeout:g}s and was stopped with every process "
                 "it started. If it needs longer, raise timeout (max 600) or use "
                 "run_in_background=true.")
        text = "\n".join([first, *notes, "Output before the timeout:", body])
        return _marked(ToolResult.fail(ErrorCode.EXECUTION_TIMEOUT, text), log.cut)
    if outcome == "cancelled":
        first = (f"The user cancelled the command after {took}; it was stopped with every "
                 "process it started.")
        text = "\n".join([first, *notes, "Output before the cancel:", body])
        return _marked(ToolResult.fail(ErrorCode.EXECUTION_CANCELLED, text), log.cut)
    if outcome == "linger":
        notes.append("The command exited, but processes it started in the background kept its "
                     "output open, so they were stopped. Start long-running processes with "
                     "run_in_background=true.")
    status = describe_exit(process.returncode)
    text = "\n".join([f"{status[:1].upper()}{status[1:]} ({took})", *notes, body])
    return _marked(ToolResult(llm_content=text, display=text), log.cut)


def _marked(result: ToolResult, cut: bool) -> ToolResult:
    result.truncated = cut
    return result


def _start_failed(cwd: Path, exc: OSError) -> ToolResult:
    hint = ("the working directory does not exist; change it or pass an absolute path"
            if not cwd.is_dir() else "check that bash is installed")
    return ToolResult.fail(ErrorCode.EXECUTION_FAILED,
                           f"Could not start the command in {cwd}: {exc}; {hint}.")


# -- sed -i as a file edit ------------------------------------------------------------------
# Isolated here: recognising the command belongs to agent_ext.permissions.sed (imported on first
# use); reading, the prior-read gate and the atomic write to agent_ext.fs.


@dataclass(frozen=True)
class SedPlan:
    """The file before (``original``, a ``TextFile``) and after the edit, and their diff."""

    path: Path
    original: Any
    proposed: str
    diff: str


def recognise_sed(command: str) -> SedEdit | None:
    """The ``SedEdit`` for a plain ``sed -i`` substitution, or None."""
    from agent_ext.permissions.sed import parse_sed_edit  # noqa: PLC0415

    try:
        return parse_sed_edit(command)
    except Exception:  # noqa: BLE001  an unrecognised command simply runs as a command
        return None


def plan_sed(path: Path, edit: SedEdit, proposed: str | None = None) -> SedPlan | None:
    """Read the file and apply the edit in memory; None when it is not an editable text file or
    the edit would cost too much to compute in the kernel (see ``SED_PREVIEW_MAX_WORK``)."""
    from agent_ext.fs.textio import BinaryFileError, read_text  # noqa: PLC0415

    try:
        original = read_text(path)
        if proposed is None and (len(original.text) > SED_PREVIEW_MAX_CHARS
                                 or edit.work(original.text) > SED_PREVIEW_MAX_WORK):
            return None
        new = str(edit.apply(original.text)) if proposed is None else proposed
    except (OSError, BinaryFileError, ValueError):
        return None
    except Exception:  # noqa: BLE001  a sed form the edit cannot apply runs as a command
        return None
    diff = "".join(difflib.unified_diff(
        original.text.splitlines(keepends=True), new.splitlines(keepends=True),
        fromfile=f"a/{path.name}", tofile=f"b/{path.name}"))
    return SedPlan(path, original, new, diff)


def apply_sed(ctx: ToolContext, plan: SedPlan) -> ToolResult:
    """Write the planned edit atomically, in the file's encoding and line endings.

    Subject to the prior-read gate when the session keeps a ``ReadCache``; refused when the file
    changed after the edit was planned (what the user approved).
    """
    from agent_ext.fs import (  # noqa: PLC0415
        BinaryFileError,
        ReadCache,
        TextEncodeError,
        atomic_write,
        check_prior_read,
        read_text,
    )

    path = plan.path
    cache = ctx.service(ReadCache)
    if cache is not None:
        gate = check_prior_read(cache, path, "editing", expect_existing=True)
        if not gate.ok:
            return ToolResult.fail(gate.code or ErrorCode.EDIT_REQUIRES_PRIOR_READ, gate.message)
    try:
        current = read_text(path)
    except (OSError, BinaryFileError, ValueError) as exc:
        return ToolResult.fail(ErrorCode.FILE_CHANGED_SINCE_READ,
                               f"{path} could not be read again before the edit ({exc}); "
                               "nothing was changed. Check the file, then retry.")
    if current.text != plan.original.text:
        return ToolResult.fail(ErrorCode.FILE_CHANGED_SINCE_READ,
                               f"{path} changed after this edit was prepared; nothing was "
                               "changed. Run the command again to edit its current content.")
    if plan.proposed == current.text:
        return ToolResult(llm_content=f"No change: the sed expression matched nothing in {path}.")
    try:
        st = atomic_write(path, current.encode(plan.proposed))
    except (OSError, TextEncodeError) as exc:
        return ToolResult.fail(ErrorCode.FILE_WRITE_FAILURE,
                               f"Could not write {path}: {exc}. The file is unchanged.")
    if cache is not None:
        cache.record_write(path, st)
    lines = plan.diff.splitlines()
    added = sum(1 for ln in lines if ln.startswith("+") and not ln.startswith("+++"))
    removed = sum(1 for ln in lines if ln.startswith("-") and not ln.startswith("---"))
    return ToolResult(llm_content=f"Edited {path} (the sed command was applied as a file edit: "
                                  f"{added} line(s) added, {removed} removed).",
                      display=plan.diff, file_paths=[str(path)])

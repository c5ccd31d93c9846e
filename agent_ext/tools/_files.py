"""Shared plumbing of read_file, edit and write_file: session services, path arguments, file
snapshots, numbered lines and diffs.

The three tools must agree on what a path means, what "the file as read" is and how lines are
numbered, or a read would not license the edit that follows it.
"""

from __future__ import annotations

import abc
import asyncio
import copy
import difflib
import os
import stat
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from agent_ext.core import (
    ConfirmationDetails,
    ErrorCode,
    ExecControl,
    ParamsError,
    RememberedCall,
    Tier,
    Tool,
    ToolContext,
    ToolInvocation,
    ToolResult,
)
from agent_ext.fs import (
    BinaryFileError,
    EditHistory,
    ReadCache,
    TextEncodeError,
    TextFile,
    Verb,
    atomic_write,
    check_prior_read,
    decode_text,
    encode_text,
    sniff_binary,
)
from agent_ext.fs.cache import content_digest
from agent_ext.fs.lock import file_lock
from agent_ext.fs.matching import SNIPPET_MAX_LINES, snippet
from agent_ext.urls import ParsedURL, PathArg, URLError, URLRouter, parse_path_arg

from ._ignore import ReadDenied

S = TypeVar("S")
P = TypeVar("P")

MAX_LINE_CHARS = 2_000
#: A change refused because its file was never read shows the file when it is this small.
SHOWN_ON_REFUSAL_LINES = 400
SHOWN_ON_REFUSAL_CHARS = 20_000
_SNIFF_BYTES = 8192


def session_service(ctx: ToolContext, kind: type[S]) -> S:
    """The session's ``kind`` service (ReadCache, EditHistory, URLRouter), created on first use.

    The agent creates them up front; creating them here too keeps the tools usable with a bare
    ``ToolContext`` (tests, ``call_tool`` on a fresh context).
    """
    return ctx.service_or_create(kind, kind)


def parse_target(ctx: ToolContext, text: str) -> PathArg:
    """The tool's path argument parsed; raises ParamsError with what to write instead.

    A ``scheme://`` URL is checked against the session's router here, so an unknown scheme is
    refused before any permission prompt.
    """
    refuse_control_characters(text)
    router = session_service(ctx, URLRouter)
    try:
        arg = parse_path_arg(text, ctx.cwd, schemes=router.names(), unpeeled=router.unpeeled())
        if arg.url is not None:
            router.lookup(arg.url)
    except (ValueError, URLError) as err:
        raise ParamsError(str(err)) from None
    return arg


def target_locations(ctx: ToolContext, target: PathArg) -> list[Path]:
    """What a path argument touches: its path, or the files its URL's scheme says it reaches.

    An address the scheme cannot resolve stays in the list as written (``Path`` keeps its
    scheme), which the permission layer asks about rather than matching it as a path.
    """
    if target.url is not None:
        return [Path(p) for p in session_service(ctx, URLRouter).locations(target.url)]
    return [target.path] if target.path is not None else []


def parse_write_target(ctx: ToolContext, text: str) -> PathArg:
    """``parse_target`` for tools that write: a read selector (``a.py:10-20``) is refused."""
    arg = parse_target(ctx, text)
    if arg.selector is not None:
        raise ParamsError(f"`file_path` {text!r} ends in a read selector (:{arg.selector.text}), "
                          "which only read_file takes; give the plain path.")
    return arg


def refuse_control_characters(text: str, what: str = "the path") -> None:
    """Raise ParamsError when ``text`` holds a NUL or another control character.

    No file the tools work with has one in its name, and the operating system would cut a
    path at a NUL, so such a path is refused before any rule is matched or file opened.
    """
    for ch in text:
        if unicodedata.category(ch) == "Cc":
            name = "a NUL byte" if ch == "\x00" else f"the control character {ch!r}"
            raise ParamsError(f"{what} {text!r} contains {name}; give the path without it")


def call_id(control: ExecControl) -> str:
    """The id of the call being run, when the pipeline provides one (for the edit history)."""
    return control.call_id


class ReadAsked(Protocol):
    """The session's ask rules, for searches (the services key): True when an ask rule covers
    ``path`` but not the searched ``root``, so the search leaves the file out."""

    def __call__(self, path: Path, root: Path) -> bool: ...


class RefusalError(Exception):
    """A refusal for the model: a stable ``code`` and a message that says what to do next."""

    def __init__(self, code: str, message: str, *,
                 remembered_as: RememberedCall | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        #: How the model's history keeps the refused call (see ``RememberedCall``).
        self.remembered_as = remembered_as


@dataclass(frozen=True)
class Snapshot:
    """A file as read: its bytes, decoded text, identity and where its symlinks led."""

    path: Path
    real: str
    st: os.stat_result
    data: bytes
    text: TextFile


def open_regular(path: Path) -> tuple[int, os.stat_result]:
    """An fd and its fstat for a regular file. Never blocks on a FIFO; raises RefusalError."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags | getattr(os, "O_BINARY", 0))
    st = os.fstat(fd)
    if stat.S_ISREG(st.st_mode):
        return fd, st
    os.close(fd)
    if stat.S_ISDIR(st.st_mode):
        raise RefusalError(ErrorCode.TARGET_IS_DIRECTORY,
                           f"{path} is a directory, not a file. List it with ls, or give the path "
                           "of a file inside it.")
    raise RefusalError(ErrorCode.TARGET_NOT_REGULAR_FILE,
                       f"{path} is not a regular file (a pipe, socket or device); read it with the "
                       "shell tool if you must.")


def read_snapshot(path: Path) -> Snapshot:
    """Read and decode a text file, with the fstat taken before reading.

    Raises FileNotFoundError, RefusalError (not a regular file) or BinaryFileError.
    """
    fd, st = open_regular(path)
    with os.fdopen(fd, "rb") as f:
        data = f.read()
    kind = sniff_binary(data[:_SNIFF_BYTES])
    if kind is not None:
        raise BinaryFileError(os.fspath(path), kind)
    return Snapshot(path, os.path.realpath(path), st, data, decode_text(data))


def same_file(a: os.stat_result, b: os.stat_result) -> bool:
    """Same identity and fingerprint (device, inode, mtime in ns, size)."""
    return (a.st_dev, a.st_ino, a.st_mtime_ns, a.st_size) == (
        b.st_dev, b.st_ino, b.st_mtime_ns, b.st_size)


def fresh_read(cache: ReadCache, snap: Snapshot) -> bool:
    """Whether the bytes just read are the version the session's read cache knows."""
    return cache.check(snap.path, snap.st) == "fresh"


def split_lines(text: str) -> list[str]:
    """Lines as a reader counts them: a final newline ends the last line, it adds none."""
    if not text:
        return []
    lines = text.split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def number_lines(lines: Sequence[str], first: int, *, numbered: bool = True) -> tuple[str, int]:
    """``cat -n`` style text (``{n:>6}\\t{line}``) with over-long lines cut; and how many were."""
    out: list[str] = []
    cut = 0
    for n, line in enumerate(lines, first):
        shown_line = line
        if len(line) > MAX_LINE_CHARS:
            cut += 1
            shown_line = (f"{line[:MAX_LINE_CHARS]}... [line cut: {len(line):,} characters; "
                          "read it whole with the shell, e.g. cut or python]")
        out.append(f"{n:>6}\t{shown_line}" if numbered else shown_line)
    return "\n".join(out), cut


def unified_diff(label: str, old: str, new: str) -> tuple[str, int, int]:
    """A unified diff of two texts under ``label``, with the lines added and removed."""
    diff = list(difflib.unified_diff(_diff_lines(old), _diff_lines(new),
                                     fromfile=f"{label}\t(current)",
                                     tofile=f"{label}\t(proposed)", n=3))
    added = sum(1 for ln in diff[2:] if ln.startswith("+"))
    removed = sum(1 for ln in diff[2:] if ln.startswith("-"))
    return "".join(diff), added, removed


def _diff_lines(text: str) -> list[str]:
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1] + "\n\\ No newline at end of file\n")
    return lines


def shown(path: Path, cwd: Path) -> str:
    """A path as the user likes to see it in a title: relative under the cwd, else absolute."""
    try:
        return os.fspath(path.relative_to(cwd))
    except ValueError:
        return os.fspath(path)


def changed_message(target: str, when: str) -> str:
    return (f"{target} changed on disk {when} (edited by the user or another process); nothing "
            "was written. Read it again with read_file, then redo the change against its "
            "current content.")


@dataclass(frozen=True)
class ChangePlan:
    """What a write will do: the target, the state it was planned against, and the new text.

    ``original`` and ``proposed`` are ``\\n`` text (what the user sees and may edit); ``data`` is
    ``proposed`` encoded the way it will be written (files only).
    """

    target: str
    original: str
    proposed: str
    path: Path | None = None
    url: ParsedURL | None = None
    before: Snapshot | None = None
    like: TextFile | None = None
    data: bytes = b""
    real: str = ""
    note: str = ""
    verb: Verb = "editing"
    require_full: bool = False
    #: For a URL: ``original`` was read from it, so a change before the write can be seen.
    resolved: bool = False

    @property
    def created(self) -> bool:
        return self.path is not None and self.before is None

    @property
    def unchanged(self) -> bool:
        return self.before is not None and self.before.data == self.data


def read_checked(cache: ReadCache, path: Path, verb: Verb, *,
                 require_full: bool = False) -> Snapshot:
    """Read a file the gate let through, then check again that it is the version last read."""
    try:
        snap = read_snapshot(path)
    except FileNotFoundError:
        raise RefusalError(ErrorCode.FILE_CHANGED_SINCE_READ,
                           f"{path} was deleted or moved just now; nothing was written. Check "
                           "the path, then read it again.") from None
    except BinaryFileError as err:
        raise RefusalError(ErrorCode.EDIT_PREPARATION_FAILURE, str(err)) from None
    except OSError as err:
        raise RefusalError(ErrorCode.READ_CONTENT_FAILURE,
                           f"Could not read {path}: {err.strerror or err}. Nothing was "
                           "written.") from None
    answer = check_prior_read(cache, path, verb, expect_existing=True, require_full=require_full)
    if not answer.ok:
        raise RefusalError(answer.code or ErrorCode.FILE_CHANGED_SINCE_READ, answer.message)
    if not fresh_read(cache, snap) or not cache.content_matches(path, snap.data):
        raise RefusalError(ErrorCode.FILE_CHANGED_SINCE_READ,
                           changed_message(os.fspath(path), "since you last read it"))
    return snap


def gate(cache: ReadCache, path: Path, verb: Verb, *, require_full: bool = False) -> bool:
    """The prior-read gate before reading; whether the file exists. Raises RefusalError."""
    answer = check_prior_read(cache, path, verb, require_full=require_full)
    if not answer.ok:
        raise RefusalError(answer.code or ErrorCode.EDIT_REQUIRES_PRIOR_READ, answer.message)
    return answer.exists


def verify_unchanged(cache: ReadCache, plan: ChangePlan) -> None:
    """Right before writing: the target is still exactly what the plan was made from.

    Catches a change during the approval wait, a deletion, a directory or another file put in
    its place, and a symlink swapped to point elsewhere. Raises RefusalError.
    """
    assert plan.path is not None
    path, before = plan.path, plan.before
    real = os.path.realpath(path)
    if before is None:
        if path.exists():
            raise RefusalError(ErrorCode.ATTEMPT_TO_CREATE_EXISTING_FILE,
                               f"{path} was created by someone else while this change waited; "
                               "nothing was written. Read it, then edit it.")
        if real != plan.real:
            raise RefusalError(ErrorCode.FILE_CHANGED_SINCE_READ,
                               f"{path} now resolves to {real}, not {plan.real} (a symlink "
                               "changed); nothing was written. Check the path and retry.")
        return
    answer = check_prior_read(cache, path, plan.verb, expect_existing=True,
                              require_full=plan.require_full)
    if not answer.ok:
        raise RefusalError(answer.code or ErrorCode.FILE_CHANGED_SINCE_READ, answer.message)
    if real != before.real:
        raise RefusalError(ErrorCode.FILE_CHANGED_SINCE_READ,
                           f"{path} now points to {real}, not to {before.real} that you read (a "
                           "symlink changed); nothing was written. Read it again, then redo "
                           "the change.")
    try:
        fd, st = open_regular(path)
        with os.fdopen(fd, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise RefusalError(ErrorCode.FILE_CHANGED_SINCE_READ,
                           changed_message(os.fspath(path), "while this change waited")) from None
    if not same_file(st, before.st) or data != before.data:
        raise RefusalError(ErrorCode.FILE_CHANGED_SINCE_READ,
                           changed_message(os.fspath(path), "while this change waited"))


def edited_region(old: str | None, new: str) -> str:
    """``Showing lines a-b of n from the edited file:`` and the numbered lines around a change."""
    total = len(split_lines(new))
    if total == 0:
        return "The file is now empty."
    found = snippet(old, new)
    if found is None or (old is None and total > SNIPPET_MAX_LINES):
        return (f"The changed region is too large to show here ({total} lines in the file); "
                "read the file to see it.")
    start, end, text = found
    end = min(end, total)
    if end < start:
        start = max(1, total - 3)
        end = total
        text = "\n".join(split_lines(new)[start - 1:])
    numbered, _ = number_lines(text.split("\n")[:end - start + 1], start)
    return f"Showing lines {start}-{end} of {total} from the edited file:\n\n---\n\n{numbered}"


class ChangeInvocation(ToolInvocation[P]):
    """A call that changes a file (or a writable URL) once the user approved its diff.

    The plan (read, match, encode) is made once, when the approver is shown the diff, and
    checked against the file right before writing: a change during the approval wait refuses
    the write. Subclasses make the plan and word the result.
    """

    def __init__(self, tool: Tool[P], params: P, ctx: ToolContext, target: PathArg) -> None:
        super().__init__(tool, params, ctx)
        self.target = target
        self._plan: ChangePlan | RefusalError | None = None
        self._override: str | None = None

    @abc.abstractmethod
    def _plan_file(self, path: Path, cache: ReadCache) -> ChangePlan:
        """The plan for a file (runs in a worker thread); raises RefusalError."""

    @abc.abstractmethod
    async def _plan_url(self, url: ParsedURL, router: URLRouter) -> ChangePlan:
        """The plan for an internal URL; raises RefusalError or URLError."""

    @abc.abstractmethod
    def _message(self, plan: ChangePlan, text: str, modified: bool) -> str:
        """The success text for the model; ``modified``: the user edited the proposal."""

    def description(self) -> str:
        return f"{self.tool.name} {self._name()}"

    def _name(self) -> str:
        return self.target.url.href if self.target.url is not None else os.fspath(
            self.target.path or "")

    def locations(self) -> list[Path]:
        return target_locations(self.ctx, self.target)

    def tier(self) -> Tier:
        if self.target.url is None:
            return Tier.WRITE
        try:
            return max(Tier.WRITE, session_service(self.ctx, URLRouter).tier_for(self.target.url))
        except URLError:
            return Tier.EXEC

    async def plan(self) -> ChangePlan:
        """The change this call makes, computed once; raises RefusalError when it cannot."""
        if self._plan is None:
            try:
                if self.target.url is not None:
                    router = session_service(self.ctx, URLRouter)
                    await router.check_write(self.target.url)
                    self._plan = await self._plan_url(self.target.url, router)
                else:
                    assert self.target.path is not None
                    cache = session_service(self.ctx, ReadCache)
                    self._plan = await asyncio.to_thread(self._plan_file, self.target.path, cache)
            except RefusalError as problem:
                self._plan = problem
                if problem.code == ErrorCode.EDIT_REQUIRES_PRIOR_READ and self.target.path:
                    self._plan = await asyncio.to_thread(self._read_for_model, problem)
            except URLError as err:
                self._plan = RefusalError(err.code, str(err))
            except Exception as exc:  # noqa: BLE001  any failure to prepare is the model's error
                self._plan = RefusalError(ErrorCode.EDIT_PREPARATION_FAILURE,
                                          f"Error preparing {self.tool.name}: "
                                          f"{type(exc).__name__}: {exc}")
        if isinstance(self._plan, RefusalError):
            raise self._plan
        return self._plan

    def _read_for_model(self, problem: RefusalError) -> RefusalError:
        """The refusal of a change to a file never read, with the file's content added when a
        read of it would run unasked (inside the project, no deny or ask rule): the read is
        recorded, so the model can redo the change at once instead of spending a turn on it."""
        path = self.target.path
        assert path is not None
        if not self._readable_unasked(path):
            return problem
        try:
            if path.stat().st_size > 4 * SHOWN_ON_REFUSAL_CHARS:
                return problem  # too long to show whatever its encoding: not worth reading
            snap = read_snapshot(path)
        except (OSError, BinaryFileError, RefusalError):
            return problem
        lines = split_lines(snap.text.text)
        if len(lines) > SHOWN_ON_REFUSAL_LINES or len(snap.text.text) > SHOWN_ON_REFUSAL_CHARS:
            return problem
        cache = session_service(self.ctx, ReadCache)
        cache.record_read(path, full=True, cacheable=True, st=snap.st,
                          digest=content_digest(snap.data))
        numbered, _ = number_lines(lines, 1)
        hint = self._against(snap.text.text)
        read = RememberedCall("read_file", {"file_path": getattr(self.params, "file_path",
                                                                 os.fspath(path))}, numbered)
        return RefusalError(problem.code, (
            f"{path} had not been read in this session, so nothing was changed. It is read now: "
            f"here is all of it ({len(lines)} lines). Make the change again against this "
            f"content.{' ' + hint if hint else ''}\n\n{numbered}"), remembered_as=read)

    def _against(self, content: str) -> str:
        """What the refused call's own arguments would do to ``content``, for the model's
        next try ("" when there is nothing to add)."""
        return ""

    def _readable_unasked(self, path: Path) -> bool:
        found_denied = self.ctx.services.get(ReadDenied)
        found_asked = self.ctx.services.get(ReadAsked)
        denied: ReadDenied | None = found_denied if callable(found_denied) else None
        asked: ReadAsked | None = found_asked if callable(found_asked) else None
        if denied is None or asked is None:
            return False  # a policy that does not say: never show content on its behalf
        real = Path(os.path.realpath(path))
        root = Path(os.path.realpath(self.ctx.cwd))
        return (real.is_relative_to(root) and not denied(real) and not denied(path)
                and not asked(real, root))

    async def preflight(self) -> ToolResult | None:
        """The call's result when it cannot or need not write (before anyone is asked)."""
        try:
            plan = await self.plan()
        except RefusalError as problem:
            return ToolResult.fail(problem.code, problem.message,
                                   remembered_as=problem.remembered_as)
        return _unchanged_result(plan) if plan.unchanged else None

    async def confirmation_details(self) -> ConfirmationDetails:
        try:
            plan = await self.plan()
        except RefusalError as problem:
            return ConfirmationDetails(kind="info", title=f"{self.tool.name} will fail",
                                       summary=problem.message, tool_name=self.tool.name,
                                       file_path=self._name())
        # Off the loop: the line diff of a large file takes long enough to freeze the notebook.
        diff, added, removed = await asyncio.to_thread(unified_diff, plan.target, plan.original,
                                                       plan.proposed)
        action = ("Create" if plan.created
                  else "Overwrite" if plan.verb == "overwriting" else "Edit")
        name = shown(plan.path, self.ctx.cwd) if plan.path is not None else plan.target
        return ConfirmationDetails(
            kind="edit", title=f"{action} {name}", tool_name=self.tool.name,
            summary=f"{self.tool.name} {plan.target}: +{added} -{removed}",
            file_path=plan.target, diff=diff, original=plan.original, proposed=plan.proposed,
            extra={"added": added, "removed": removed, "created": plan.created})

    def with_modification(self, proposed: str) -> ChangeInvocation[P]:
        """This call writing the user's edited text instead (still checked for staleness)."""
        other = copy.copy(self)
        other._override = proposed
        return other

    async def execute(self, control: ExecControl) -> ToolResult:
        try:
            plan = await self.plan()
            text = plan.proposed if self._override is None else self._override
            modified = text != plan.proposed
            if plan.url is not None:
                await self._commit_url(plan, text)
            elif plan.unchanged and not modified:
                return _unchanged_result(plan)
            else:
                await asyncio.to_thread(self._commit_file, plan, text, call_id(control))
        except RefusalError as problem:
            return ToolResult.fail(problem.code, problem.message,
                                   remembered_as=problem.remembered_as)
        return await asyncio.to_thread(self._done, plan, text, modified)

    def _done(self, plan: ChangePlan, text: str, modified: bool) -> ToolResult:
        """The result of a change made: what the model is told, and the diff shown."""
        diff, _, _ = unified_diff(plan.target, plan.original, text)
        return ToolResult(llm_content=self._message(plan, text, modified),
                          display=diff or f"{plan.target}: no change",
                          file_paths=[os.fspath(plan.path)] if plan.path is not None else [])

    def _commit_file(self, plan: ChangePlan, text: str, cid: str) -> None:
        assert plan.path is not None
        cache = session_service(self.ctx, ReadCache)
        try:
            data = plan.data if text == plan.proposed else encode_text(text, plan.like)
        except TextEncodeError as err:
            message = f"Error executing {self.tool.name}: {err}. Nothing was written."
            raise RefusalError(ErrorCode.FILE_WRITE_FAILURE, message) from None
        try:
            # One writer at a time from the last check through the rename: another agent's
            # write lands wholly before this check or wholly after this write.
            with file_lock(plan.path):
                verify_unchanged(cache, plan)
                if plan.before is None:
                    plan.path.parent.mkdir(parents=True, exist_ok=True)
                st = atomic_write(plan.path, data)
                cache.record_write(plan.path, st, content_digest(data))
        except OSError as err:
            raise RefusalError(ErrorCode.FILE_WRITE_FAILURE,
                               f"Error executing {self.tool.name}: {err}") from None
        before = plan.before.data if plan.before is not None else None
        session_service(self.ctx, EditHistory).record(plan.path, before, data,
                                                      tool=self.tool.name, call_id=cid)

    async def _commit_url(self, plan: ChangePlan, text: str) -> None:
        assert plan.url is not None
        router = session_service(self.ctx, URLRouter)
        if plan.resolved:
            try:
                current = (await router.resolve(plan.url)).text
            except URLError:
                current = None
            if current != plan.original:
                raise RefusalError(ErrorCode.FILE_CHANGED_SINCE_READ,
                                   changed_message(plan.target, "while this change waited"))
        try:
            await router.write(plan.url, text)
        except URLError as err:
            raise RefusalError(err.code, f"Error executing {self.tool.name}: {err}") from None


def _unchanged_result(plan: ChangePlan) -> ToolResult:
    return ToolResult(llm_content=f"{plan.target} already has exactly this content; nothing "
                                  "was written.")

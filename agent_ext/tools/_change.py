"""Calls that change something once the user approved: planned once, checked again, applied.

``PlannedInvocation`` is what a file change (edit, write_file) and a notebook cell change
(notebook_edit) share: the plan (or the refusal) is made once, in ``preflight`` before anyone
is asked, shown as the approval's diff, and run as planned or as the user edited it.
``ChangeInvocation`` is the file (or writable URL) side: the plan is the file as read and the
text to write, checked against the file right before writing, so a change during the approval
wait refuses the write.
"""

from __future__ import annotations

import abc
import asyncio
import copy
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from agent_ext.core import (
    ConfirmationDetails,
    ErrorCode,
    ExecControl,
    RememberedCall,
    Tier,
    Tool,
    ToolContext,
    ToolInvocation,
    ToolRefusal,
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
    encode_text,
)
from agent_ext.fs.cache import content_digest
from agent_ext.fs.lines import split_lines
from agent_ext.fs.lock import file_lock
from agent_ext.fs.snapshot import Snapshot, open_regular, read_snapshot, same_file
from agent_ext.urls import ParsedURL, PathArg, URLError, URLRouter

from ._ignore import ReadDenied
from ._render import number_lines, shown, unified_diff
from ._targets import ReadAsked, session_service, target_locations, target_tier

P = TypeVar("P")
PlanT = TypeVar("PlanT")

#: A change refused because its file was never read shows the file when it is this small.
SHOWN_ON_REFUSAL_LINES = 400
SHOWN_ON_REFUSAL_CHARS = 20_000


def read_now(problem: ToolRefusal, where: str, content: str, read: RememberedCall, *,
             against: str, size: str = "", hint: str = "") -> ToolRefusal:
    """``problem`` (a change to ``where``, never read) with ``content``, read now, handed to
    the model, which redoes the change at once and remembers the call as ``read``."""
    return ToolRefusal(problem.code, (
        f"{where} had not been read in this session, so nothing was changed. It is read now: "
        f"here is all of it{size}. Make the change again against {against}.{hint}\n\n"
        f"{content}"), remembered_as=read)


class PlannedInvocation(ToolInvocation[P], Generic[P, PlanT]):
    """A call whose change is planned once and then shown, approved and applied.

    The plan, or the refusal that stands in for it, is memoised: ``preflight``, the approval's
    ``confirmation_details`` and ``execute`` all see the same one. ``with_modification`` gives
    the same call carrying the user's edited text (``_override``) for ``execute`` to apply.
    """

    def __init__(self, tool: Tool[P], params: P, ctx: ToolContext) -> None:
        super().__init__(tool, params, ctx)
        self._plan: PlanT | ToolRefusal | None = None
        self._override: str | None = None

    @abc.abstractmethod
    async def _make_plan(self) -> PlanT:
        """The change this call makes; raises ToolRefusal when it cannot be made."""

    @abc.abstractmethod
    def _preparation_failure(self, exc: Exception) -> ToolRefusal:
        """The refusal for an unexpected failure while planning (any is the model's error)."""

    @abc.abstractmethod
    async def _plan_details(self, plan: PlanT) -> ConfirmationDetails:
        """What the approver is shown for a plan that can be applied."""

    @abc.abstractmethod
    def _refusal_path(self) -> str | None:
        """The file named in the approval of a call that will fail."""

    async def _refused(self, problem: ToolRefusal) -> ToolRefusal:
        """The refusal the model gets for ``problem`` (a subclass may add what helps)."""
        return problem

    def _readable_unasked(self, path: Path) -> bool:
        """Whether a read of ``path`` would run unasked: inside the project, and no deny or ask
        rule covers it (a refused change may then show the model what it would have read)."""
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

    def _nothing_to_do(self, plan: PlanT) -> ToolResult | None:
        """The result of a plan that changes nothing, so nobody is asked; None to go on."""
        return None

    def _takes_modification(self) -> bool:
        """Whether the user may edit the proposal before approving it."""
        return True

    async def plan(self) -> PlanT:
        """The change this call makes, computed once; raises ToolRefusal when it cannot."""
        if self._plan is None:
            try:
                self._plan = await self._make_plan()
            except ToolRefusal as problem:
                self._plan = await self._refused(problem)
            except Exception as exc:  # noqa: BLE001  any failure to prepare is the model's error
                self._plan = self._preparation_failure(exc)
        if isinstance(self._plan, ToolRefusal):
            raise self._plan
        return self._plan

    async def preflight(self) -> ToolResult | None:
        """The call's result when it cannot or need not change anything (before anyone is
        asked)."""
        try:
            plan = await self.plan()
        except ToolRefusal as problem:
            return problem.result()
        return self._nothing_to_do(plan)

    async def confirmation_details(self) -> ConfirmationDetails:
        try:
            plan = await self.plan()
        except ToolRefusal as problem:
            return ConfirmationDetails(kind="info", title=f"{self.tool.name} will fail",
                                       summary=problem.message, tool_name=self.tool.name,
                                       file_path=self._refusal_path())
        return await self._plan_details(plan)

    def with_modification(self, proposed: str) -> PlannedInvocation[P, PlanT] | None:
        """This call applying the user's edited text instead (still checked for staleness)."""
        if not self._takes_modification():
            return None
        other = copy.copy(self)
        other._override = proposed
        return other


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
        raise ToolRefusal(ErrorCode.FILE_CHANGED_SINCE_READ,
                          f"{path} was deleted or moved just now; nothing was written. Check "
                          "the path, then read it again.") from None
    except BinaryFileError as err:
        raise ToolRefusal(ErrorCode.EDIT_PREPARATION_FAILURE, str(err)) from None
    except OSError as err:
        raise ToolRefusal(ErrorCode.READ_CONTENT_FAILURE,
                          f"Could not read {path}: {err.strerror or err}. Nothing was "
                          "written.") from None
    _check_prior_read(cache, path, verb, require_full)
    if cache.check(snap.path, snap.st) != "fresh" or not cache.content_matches(path, snap.data):
        raise ToolRefusal(ErrorCode.FILE_CHANGED_SINCE_READ,
                          changed_message(os.fspath(path), "since you last read it"))
    return snap


def gate(cache: ReadCache, path: Path, verb: Verb, *, require_full: bool = False) -> bool:
    """The prior-read gate before reading; whether the file exists. Raises ToolRefusal."""
    answer = check_prior_read(cache, path, verb, require_full=require_full)
    if not answer.ok:
        raise ToolRefusal(answer.code or ErrorCode.EDIT_REQUIRES_PRIOR_READ, answer.message)
    return answer.exists


def _check_prior_read(cache: ReadCache, path: Path, verb: Verb, require_full: bool) -> None:
    """The prior-read check of a file that exists; raises ToolRefusal when it fails."""
    answer = check_prior_read(cache, path, verb, expect_existing=True, require_full=require_full)
    if not answer.ok:
        raise ToolRefusal(answer.code or ErrorCode.FILE_CHANGED_SINCE_READ, answer.message)


def verify_unchanged(cache: ReadCache, plan: ChangePlan) -> None:
    """Right before writing: the target is still exactly what the plan was made from.

    Catches a change during the approval wait, a deletion, a directory or another file put in
    its place, and a symlink swapped to point elsewhere. Raises ToolRefusal.
    """
    assert plan.path is not None
    path, before = plan.path, plan.before
    real = os.path.realpath(path)
    if before is None:
        if path.exists():
            raise ToolRefusal(ErrorCode.ATTEMPT_TO_CREATE_EXISTING_FILE,
                              f"{path} was created by someone else while this change waited; "
                              "nothing was written. Read it, then edit it.")
        if real != plan.real:
            raise ToolRefusal(ErrorCode.FILE_CHANGED_SINCE_READ,
                              f"{path} now resolves to {real}, not {plan.real} (a symlink "
                              "changed); nothing was written. Check the path and retry.")
        return
    _check_prior_read(cache, path, plan.verb, plan.require_full)
    if real != before.real:
        raise ToolRefusal(ErrorCode.FILE_CHANGED_SINCE_READ,
                          f"{path} now points to {real}, not to {before.real} that you read (a "
                          "symlink changed); nothing was written. Read it again, then redo "
                          "the change.")
    try:
        fd, st = open_regular(path)
        with os.fdopen(fd, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise ToolRefusal(ErrorCode.FILE_CHANGED_SINCE_READ,
                          changed_message(os.fspath(path), "while this change waited")) from None
    if not same_file(st, before.st) or data != before.data:
        raise ToolRefusal(ErrorCode.FILE_CHANGED_SINCE_READ,
                          changed_message(os.fspath(path), "while this change waited"))


class ChangeInvocation(PlannedInvocation[P, ChangePlan]):
    """A call that changes a file (or a writable URL) once the user approved its diff.

    The plan (read, match, encode) is made once, when the approver is shown the diff, and
    checked against the file right before writing: a change during the approval wait refuses
    the write. Subclasses make the plan and word the result.
    """

    #: How the refusal of a read-only URL ends ("... so 'var://x' cannot be written.").
    read_only_url_tail = "be written."

    def __init__(self, tool: Tool[P], params: P, ctx: ToolContext, target: PathArg) -> None:
        super().__init__(tool, params, ctx)
        self.target = target

    @abc.abstractmethod
    def _plan_file(self, path: Path, cache: ReadCache) -> ChangePlan:
        """The plan for a file (runs in a worker thread); raises ToolRefusal."""

    @abc.abstractmethod
    async def _plan_url(self, url: ParsedURL, router: URLRouter) -> ChangePlan:
        """The plan for a writable internal URL; raises ToolRefusal (a URLError is one)."""

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
        return target_tier(self.ctx, self.target, Tier.WRITE)

    async def _make_plan(self) -> ChangePlan:
        url = self.target.url
        if url is not None:
            router = session_service(self.ctx, URLRouter)
            await router.check_write(url)
            if router.lookup(url)[1].read_only:
                raise ToolRefusal(ErrorCode.FILE_WRITE_FAILURE,
                                  f"{url.scheme}:// resources are read-only, so {url.href!r} "
                                  f"cannot {self.read_only_url_tail}")
            return await self._plan_url(url, router)
        assert self.target.path is not None
        cache = session_service(self.ctx, ReadCache)
        return await asyncio.to_thread(self._plan_file, self.target.path, cache)

    def _preparation_failure(self, exc: Exception) -> ToolRefusal:
        return ToolRefusal(ErrorCode.EDIT_PREPARATION_FAILURE,
                           f"Error preparing {self.tool.name}: {type(exc).__name__}: {exc}")

    async def _refused(self, problem: ToolRefusal) -> ToolRefusal:
        path = self.target.path
        if problem.code != ErrorCode.EDIT_REQUIRES_PRIOR_READ or path is None:
            return problem
        if path.suffix.lower() == ".ipynb":
            # Its JSON is not what the model means to change, nor what it should be shown.
            return ToolRefusal(problem.code, await self._in_cells(path) or (
                f"{path} is a notebook, so nothing was changed: change its cells with "
                "notebook_edit, by the cell ids read_file shows. To change its JSON itself, "
                f"read that first with read_file {json.dumps({'file_path': f'{path}:raw'})}."))
        return await asyncio.to_thread(self._read_for_model, problem)

    async def _in_cells(self, path: Path) -> str:
        """For a change aimed at a notebook's cells as if it were a text file: what the change
        is in notebook_edit terms ("" when there is nothing to say)."""
        return ""

    def _read_for_model(self, problem: ToolRefusal) -> ToolRefusal:
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
        except (OSError, BinaryFileError, ToolRefusal):
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
        return read_now(problem, str(path), numbered, read, against="this content",
                        size=f" ({len(lines)} lines)", hint=f" {hint}" if hint else "")

    def _against(self, content: str) -> str:
        """What the refused call's own arguments would do to ``content``, for the model's
        next try ("" when there is nothing to add)."""
        return ""

    def _nothing_to_do(self, plan: ChangePlan) -> ToolResult | None:
        return _unchanged_result(plan) if plan.unchanged else None

    def _refusal_path(self) -> str | None:
        return self._name()

    async def _plan_details(self, plan: ChangePlan) -> ConfirmationDetails:
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
                await asyncio.to_thread(self._commit_file, plan, text, control.call_id)
        except ToolRefusal as problem:
            return problem.result()
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
            raise ToolRefusal(ErrorCode.FILE_WRITE_FAILURE, message) from None
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
            raise ToolRefusal(ErrorCode.FILE_WRITE_FAILURE,
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
                raise ToolRefusal(ErrorCode.FILE_CHANGED_SINCE_READ,
                                  changed_message(plan.target, "while this change waited"))
        try:
            await router.write(plan.url, text)
        except URLError as err:
            raise ToolRefusal(err.code, f"Error executing {self.tool.name}: {err}") from None


def _unchanged_result(plan: ChangePlan) -> ToolResult:
    return ToolResult(llm_content=f"{plan.target} already has exactly this content; nothing "
                                  "was written.")

"""The shell tool on real processes: output, exit codes, cwd, stdin, timeouts, cancels, sed edits."""

from __future__ import annotations

import asyncio
import itertools
import os
import time
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent_ext import Agent
from agent_ext.core import ErrorCode, ExecControl, ToolContext, ToolResult
from agent_ext.models import ScriptedModel
from agent_ext.tools import BUILTINS, _cgroup
from agent_ext.tools._proc import LOG_CAP_CHARS, TRUNCATION_MARKER, OutputLog, log_cap
from agent_ext.tools.shell import ShellInvocation, ShellTool
from agent_ext.tools.shell_jobs import ShellJobs

pytestmark = [pytest.mark.timeout(60),
              pytest.mark.skipif(os.name != "posix", reason="POSIX shell semantics")]


def alive(pid: int) -> bool:
    """Running (a zombie waiting to be reaped counts as dead)."""
    stat = Path(f"/proc/{pid}/stat")
    if Path("/proc").is_dir():
        try:
            return stat.read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
        except (OSError, IndexError):
            return False
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def wait_pids(path: Path, count: int, timeout: float = 10) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            pids = [int(x) for x in path.read_text().split()]
            if len(pids) >= count:
                return pids
        time.sleep(0.02)
    raise AssertionError(f"only {path.read_text() if path.exists() else ''!r} in {path}")


def all_dead(pids: list[int], timeout: float = 5) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not any(alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
async def ctx(tmp_path: Path) -> AsyncIterator[ToolContext]:
    context = ToolContext(cwd=tmp_path)
    yield context
    jobs = context.service(ShellJobs)
    if jobs is not None:
        await jobs.kill_all()


async def run(ctx: ToolContext, args: dict[str, Any],
              control: ExecControl | None = None) -> ToolResult:
    built = ShellTool().build(args, ctx)
    assert not isinstance(built, ToolResult), built
    return await built.execute(control or ExecControl())


async def test_exit_code_and_merged_output_in_order(ctx: ToolContext) -> None:
    result = await run(ctx, {"command": "echo one; echo two >&2; echo three; exit 3"})
    assert not result.is_error
    assert result.text.splitlines()[0].startswith("Exit code 3 (")
    assert result.text.splitlines()[1:] == ["one", "two", "three"]
    ok = await run(ctx, {"command": "true"})
    assert ok.text.startswith("Exit code 0") and "(no output)" in ok.text


async def test_runs_in_cwd_with_inherited_env(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_EXT_TEST_VAR", "inherited-value")
    result = await run(ctx, {"command": "pwd; echo $AGENT_EXT_TEST_VAR"})
    assert result.text.splitlines()[1:] == [str(ctx.cwd), "inherited-value"]


async def test_stdin_is_closed(ctx: ToolContext) -> None:
    started = time.monotonic()
    result = await run(ctx, {"command": "cat; read line; echo rc=$?", "timeout": 20})
    assert "rc=1" in result.text
    assert time.monotonic() - started < 5


async def test_new_session(ctx: ToolContext) -> None:
    result = await run(ctx, {"command": "ps -o sid= -p $$; ps -o pgid= -p $$; echo $$"})
    sid, pgid, pid = (line.strip() for line in result.text.splitlines()[1:4])
    assert sid == pgid == pid
    assert int(sid) != os.getsid(0)


async def test_output_streams_live_and_throttled(ctx: ToolContext) -> None:
    seen: list[tuple[float, str]] = []
    control = ExecControl(on_output=lambda text: seen.append((time.monotonic(), text)))
    started = time.monotonic()
    result = await run(ctx, {"command": "for i in 1 2 3 4 5; do echo line$i; sleep 0.3; done"},
                       control)
    assert "".join(text for _, text in seen).split() == [f"line{i}" for i in range(1, 6)]
    assert len(seen) >= 3  # streamed, not one blob at the end
    assert seen[0][0] - started < 1.0
    gaps = [b[0] - a[0] for a, b in itertools.pairwise(seen)]
    assert all(gap >= 0.15 for gap in gaps)  # at most every ~200 ms for small output
    assert "line5" in result.text


async def test_timeout_kills_the_whole_tree(ctx: ToolContext, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    command = (f"bash -c 'sleep 100 & echo $! >> {pids}; sleep 100 & echo $! >> {pids}; "
               f"setsid bash -c \"echo \\$\\$ >> {pids}; exec sleep 100\" & wait' & "
               f"echo $! >> {pids}; wait")
    started = time.monotonic()
    result = await run(ctx, {"command": command, "timeout": 1.5})
    took = time.monotonic() - started
    assert result.error is not None and result.error.code == ErrorCode.EXECUTION_TIMEOUT
    assert "timed out after 1.5s" in result.text
    assert took < 6
    found = wait_pids(pids, 4)
    assert all_dead(found), [p for p in found if alive(p)]


async def test_timeout_escalates_to_sigkill(ctx: ToolContext, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    command = f"trap '' TERM; echo $$ >> {pids}; while true; do sleep 0.1; done"
    result = await run(ctx, {"command": command, "timeout": 0.5})
    assert result.error is not None and result.error.code == ErrorCode.EXECUTION_TIMEOUT
    assert all_dead(wait_pids(pids, 1))


async def test_cancel_event_stops_promptly(ctx: ToolContext, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    control = ExecControl()
    task = asyncio.ensure_future(run(ctx, {"command": f"sleep 100 & echo $! >> {pids}; "
                                                      f"echo $$ >> {pids}; wait"}, control))
    found = await asyncio.to_thread(wait_pids, pids, 2)
    control.cancelled.set()
    started = time.monotonic()
    result = await asyncio.wait_for(task, 5)
    assert time.monotonic() - started < 3
    assert result.error is not None and result.error.code == ErrorCode.EXECUTION_CANCELLED
    assert all_dead(found)


async def test_task_cancellation_kills_the_tree(ctx: ToolContext, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    task = asyncio.ensure_future(run(ctx, {"command": f"sleep 100 & echo $! >> {pids}; "
                                                      f"echo $$ >> {pids}; wait"}))
    found = await asyncio.to_thread(wait_pids, pids, 2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.to_thread(all_dead, found)


async def test_background_children_holding_output_are_stopped(ctx: ToolContext,
                                                              tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    started = time.monotonic()
    result = await run(ctx, {"command": f"sleep 100 & echo $! >> {pids}; echo started"})
    assert time.monotonic() - started < 5
    assert result.text.startswith("Exit code 0") and "started" in result.text
    assert "run_in_background=true" in result.text
    assert all_dead(wait_pids(pids, 1))


async def test_detached_children_with_redirected_output_survive(ctx: ToolContext,
                                                                tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    result = await run(ctx, {"command": f"nohup sleep 30 > /dev/null 2>&1 & echo $! > {pids}"})
    assert result.text.startswith("Exit code 0")
    pid = wait_pids(pids, 1)[0]
    try:
        assert alive(pid)
    finally:
        os.kill(pid, 9)


async def test_ten_megabytes_of_output_stay_bounded(ctx: ToolContext) -> None:
    tracemalloc.start()
    try:
        result = await run(ctx, {"command": "head -c 10000000 /dev/zero | tr '\\0' x; echo; "
                                            "echo THE-END"})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(result.text) <= 30_000
    assert peak < 5_000_000  # never the whole output in memory
    assert result.truncated
    assert result.text.rstrip().endswith("THE-END")
    assert "10,000,009 characters" in result.text
    path = result.text.split("The full output is in ")[1].split(";")[0]
    assert await asyncio.to_thread(os.path.getsize, path) == 10_000_009


async def test_budget_keeps_the_shell_result_whole(ctx: ToolContext, tmp_path: Path) -> None:
    from agent_ext.core.budget import OutputBudget, SpillStore

    result = await run(ctx, {"command": "seq 1 200000"})
    budget = OutputBudget(SpillStore(root=tmp_path / "spill"))
    tool = ShellTool()
    kept = budget.apply(result, tool_name=tool.name, max_output_chars=tool.max_output_chars,
                        truncate_keep=tool.truncate_keep)
    assert kept.text == result.text
    assert kept.text.rstrip().endswith("200000") and "\n1\n2\n3\n" in kept.text


async def test_timeout_parameter_coercion() -> None:
    tool = ShellTool()
    ctx = ToolContext()
    cases = {"30": 30.0, 120000: 120.0, 900: 600.0, -5: 120.0, 0.5: 0.5}
    for given, expected in cases.items():
        built = tool.build({"command": "true", "timeout": given}, ctx)
        assert isinstance(built, ShellInvocation)
        assert built.params.timeout == expected, given


async def test_missing_cwd_is_a_clear_error(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path / "gone")
    result = await run(ctx, {"command": "true"})
    assert result.error is not None and result.error.code == ErrorCode.EXECUTION_FAILED
    assert "does not exist" in result.text


async def test_invocation_surface(ctx: ToolContext) -> None:
    built = ShellTool().build({"command": "ls -la", "description": "List files"}, ctx)
    assert isinstance(built, ShellInvocation)
    assert built.command() == "ls -la"
    assert built.tier().name == "EXEC" and built.default_permission().value == "ask"
    details = await built.confirmation_details()
    assert details.kind == "exec" and details.command == "ls -la"
    assert details.extra["cwd"] == str(ctx.cwd) and details.summary == "List files"
    edited = built.with_modification("ls")
    assert isinstance(edited, ShellInvocation) and edited.command() == "ls"
    blank = ShellTool().build({"command": "   "}, ctx)
    assert isinstance(blank, ToolResult) and blank.is_error


# -- sed -i as a file edit ------------------------------------------------------------------


async def test_sed_is_confirmed_and_applied_as_an_edit(ctx: ToolContext) -> None:
    target = ctx.cwd / "notes.txt"
    target.write_bytes(b"alpha beta\r\nbeta gamma\r\n")
    built = ShellTool().build({"command": "sed -i 's/beta/BETA/g' notes.txt"}, ctx)
    assert isinstance(built, ShellInvocation)
    assert built.locations() == [target]
    details = await built.confirmation_details()
    assert details.kind == "edit" and details.file_path == str(target)
    assert "-alpha beta" in (details.diff or "") and "+alpha BETA" in (details.diff or "")
    assert details.proposed == "alpha BETA\nBETA gamma\n"
    result = await built.execute(ExecControl())
    assert not result.is_error, result.text
    assert target.read_bytes() == b"alpha BETA\r\nBETA gamma\r\n"  # CRLF kept
    assert result.file_paths == [str(target)]


async def test_sed_edit_needs_a_prior_read_when_the_session_tracks_reads(
        ctx: ToolContext) -> None:
    from agent_ext.fs import ReadCache

    target = ctx.cwd / "a.txt"
    target.write_text("x = 1\n")
    cache = ReadCache()
    ctx.services[ReadCache] = cache
    built = ShellTool().build({"command": "sed -i 's/1/2/' a.txt"}, ctx)
    assert isinstance(built, ShellInvocation)
    refused = await built.execute(ExecControl())
    assert refused.error is not None
    assert refused.error.code == ErrorCode.EDIT_REQUIRES_PRIOR_READ
    assert target.read_text() == "x = 1\n"
    cache.record_read(target, full=True, cacheable=True)
    again = ShellTool().build({"command": "sed -i 's/1/2/' a.txt"}, ctx)
    assert isinstance(again, ShellInvocation)
    done = await again.execute(ExecControl())
    assert not done.is_error, done.text
    assert target.read_text() == "x = 2\n"
    assert cache.check(target) == "fresh"  # the write is recorded as the agent's own


async def test_sed_edit_refuses_a_file_changed_after_confirmation(ctx: ToolContext) -> None:
    target = ctx.cwd / "a.txt"
    target.write_text("x = 1\n")
    built = ShellTool().build({"command": "sed -i 's/1/2/' a.txt"}, ctx)
    assert isinstance(built, ShellInvocation)
    await built.confirmation_details()
    target.write_text("x = 1\ny = 1\n")
    result = await built.execute(ExecControl())
    assert result.error is not None and result.error.code == ErrorCode.FILE_CHANGED_SINCE_READ
    assert target.read_text() == "x = 1\ny = 1\n"


async def test_sed_on_a_missing_file_runs_as_a_command(ctx: ToolContext) -> None:
    built = ShellTool().build({"command": "sed -i 's/1/2/' missing.txt"}, ctx)
    assert isinstance(built, ShellInvocation)
    details = await built.confirmation_details()
    assert details.kind == "exec"
    result = await built.execute(ExecControl())
    assert "No such file" in result.text and not result.text.startswith("Exit code 0")
    edited = built.with_modification("echo edited command")
    assert isinstance(edited, ShellInvocation) and edited.command() == "echo edited command"


async def test_sed_edit_takes_the_users_modification(ctx: ToolContext) -> None:
    target = ctx.cwd / "a.txt"
    target.write_text("x = 1\n")
    built = ShellTool().build({"command": "sed -i 's/1/2/' a.txt"}, ctx)
    assert isinstance(built, ShellInvocation)
    modified = built.with_modification("x = 3\n")
    assert modified is not None
    result = await modified.execute(ExecControl())
    assert not result.is_error and target.read_text() == "x = 3\n"


async def test_real_sed_module_when_present(ctx: ToolContext) -> None:
    sed = pytest.importorskip("agent_ext.permissions.sed")
    target = ctx.cwd / "b.txt"
    target.write_text("foo foo\n")
    command = "sed -i 's/foo/bar/g' b.txt"
    assert sed.parse_sed_edit(command) is not None
    result = await run(ctx, {"command": command})
    assert not result.is_error and target.read_text() == "bar bar\n"
    assert result.file_paths == [str(target)]


SHELL_AND_FRIENDS = ("shell", "shell_output", "shell_kill", "todo_write", "ask_user",
                     "web_fetch")

def test_the_builtins_register_and_load() -> None:
    from agent_ext.core import Registry

    reg = Registry()
    entries = [b for b in BUILTINS if b[0] in SHELL_AND_FRIENDS]
    assert [b[0] for b in entries] == list(SHELL_AND_FRIENDS)
    for name, spec, defer, aliases in entries:
        reg.register_lazy(name, spec, defer=defer, aliases=aliases)
    for name, _, defer, aliases in entries:
        tool = reg.get(aliases[0])
        assert tool.name == name and tool.problems() == []
        assert reg.is_deferred(name) == defer


def test_the_saved_log_keeps_start_and_end_past_its_cap(tmp_path: Path) -> None:
    log = OutputLog(tmp_path / "out.log", head_chars=10, tail_chars=10, file_cap=1600)
    lines = [f"line {i:05d}\n" for i in range(2000)]
    for line in lines:
        log.feed(line.encode())
    log.close()
    saved = (tmp_path / "out.log").read_text()
    assert log.capped and log.saved and log.total == sum(map(len, lines))
    assert len(saved) < 1600 + 200
    assert saved.startswith("line 00000\n")
    assert saved.endswith("line 01999\n")
    assert TRUNCATION_MARKER in saved and "characters left out" in saved


def test_the_log_cap_is_configurable(monkeypatch: pytest.MonkeyPatch) -> None:
    assert log_cap() == LOG_CAP_CHARS == 64 * 1024 * 1024
    monkeypatch.setenv("AGENT_EXT_SHELL_LOG_MB", "2")
    assert log_cap() == 2 * 1024 * 1024
    monkeypatch.setenv("AGENT_EXT_SHELL_LOG_MB", "many")
    assert log_cap() == LOG_CAP_CHARS


async def test_a_flood_of_output_stays_within_the_cap(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_EXT_SHELL_LOG_MB", "1")
    agent = Agent(ScriptedModel([]), cwd=tmp_path, mode="bypassPermissions", plugins=False,
                  mcp=False)
    try:
        result = await agent.call_tool("shell", {"command": "yes 0123456789 | head -c 20000000"})
        logs = [Path(p) for p in result.text.split() if p.endswith(".log")]
        sizes = [p.stat().st_size for p in logs if p.exists()]
    finally:
        await agent.aclose()
    assert "keeps its start and end" in result.text
    assert sizes and max(sizes) < 1.2 * 1024 * 1024


@pytest.mark.skipif(_cgroup.root() is None, reason="needs a control group this user may make")
async def test_a_process_that_clears_its_environment_and_detaches_is_still_stopped(
        tmp_path: Path) -> None:
    marker = f"agent_ext_detached_{os.getpid()}"
    agent = Agent(ScriptedModel([]), cwd=tmp_path, mode="bypassPermissions", plugins=False,
                  mcp=False)
    try:
        job = await agent.call_tool("shell", {
            "command": f"env -i setsid -f bash -c 'exec -a {marker} sleep 300'; sleep 300",
            "run_in_background": True})
        assert not job.is_error, job.text
        for _ in range(50):
            if _leftovers(marker):
                break
            await asyncio.sleep(0.1)
        assert _leftovers(marker), "the detached process never started: the test proves nothing"
        jobs = agent.context.service(ShellJobs)
        assert jobs is not None
        group = jobs.jobs()[0].process.group
        assert group is not None and group.path.exists()
    finally:
        await agent.aclose()
    await asyncio.sleep(0.3)
    assert not _leftovers(marker)
    assert not group.path.exists()


def _leftovers(marker: str) -> list[Path]:
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and marker.encode() in (proc / "cmdline").read_bytes():
                found.append(proc)
        except OSError:
            continue
    return found

"""Background shell jobs: start, read, notify, kill whole trees, one-way states, session cleanup."""

from __future__ import annotations

import asyncio
import gc
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent_ext.core import ExecControl, Tool, ToolContext, ToolResult
from agent_ext.tools._proc import OutputLog
from agent_ext.tools.shell import ShellTool
from agent_ext.tools.shell_jobs import (
    JOB_NOT_FOUND,
    JOB_TIME_LIMIT,
    JobState,
    ShellJobs,
    ShellKillTool,
    ShellOutputTool,
    job_time_limit,
)

from .test_tool_shell import alive, all_dead, wait_pids

pytestmark = [pytest.mark.timeout(60),
              pytest.mark.skipif(os.name != "posix", reason="POSIX process groups")]


@pytest.fixture
async def ctx(tmp_path: Path) -> AsyncIterator[ToolContext]:
    context = ToolContext(cwd=tmp_path)
    yield context
    jobs = context.service(ShellJobs)
    if jobs is not None:
        await jobs.kill_all()


async def call(tool: Tool[Any], ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    built = tool.build(args, ctx)
    assert not isinstance(built, ToolResult), built
    return await built.execute(ExecControl())


async def start(ctx: ToolContext, command: str) -> str:
    started = time.monotonic()
    result = await call(ShellTool(), ctx, {"command": command, "run_in_background": True})
    assert time.monotonic() - started < 2, "background start must return at once"
    assert not result.is_error, result.text
    return result.text.split("background job ")[1].split(" ")[0]


async def wait_state(ctx: ToolContext, job_id: str, timeout: float = 10) -> JobState:
    jobs = ShellJobs.of(ctx)
    job = jobs.get(job_id)
    assert job is not None
    await job.process.wait(timeout)
    return job.state


async def test_background_job_returns_at_once_and_reports_status(ctx: ToolContext) -> None:
    job_id = await start(ctx, "echo hello; sleep 0.3; echo bye")
    assert job_id == "shell_1"
    jobs = ShellJobs.of(ctx)
    job = jobs.get(job_id)
    assert job is not None and job.state is JobState.RUNNING
    assert job.log.path.exists()  # written from the start
    assert await wait_state(ctx, job_id) is JobState.COMPLETED
    assert job.exit_code == 0


async def test_shell_output_reads_new_output_since_last_read(ctx: ToolContext) -> None:
    job_id = await start(ctx, "printf 'fir%s\\n' st; sleep 0.5; printf 'sec%s\\n' ond; sleep 30")
    out = ShellOutputTool()
    deadline = time.monotonic() + 5
    first = await call(out, ctx, {"job_id": job_id})
    while "first" not in first.text and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
        first = await call(out, ctx, {"job_id": job_id})
    assert "running" in first.text and first.text.endswith("first")
    await asyncio.sleep(0.8)
    second = await call(out, ctx, {"job_id": job_id})
    assert second.text.endswith("second") and "first" not in second.text
    assert "Output characters 6-13 of 13 (next_offset=13)" in second.text
    nothing = await call(out, ctx, {"job_id": job_id})
    assert "No new output (next_offset=13)" in nothing.text
    again = await call(out, ctx, {"job_id": job_id, "offset": 0})
    assert again.text.endswith("first\nsecond")
    tail = await call(out, ctx, {"job_id": job_id, "offset": -7})
    assert tail.text.endswith("\nsecond") and "first" not in tail.text


async def test_shell_output_waits_for_the_end(ctx: ToolContext) -> None:
    job_id = await start(ctx, "sleep 0.5; echo done; exit 4")
    result = await call(ShellOutputTool(), ctx, {"job_id": job_id, "wait_seconds": 10})
    assert "failed, exit code 4" in result.text and "done" in result.text


async def test_unknown_job_is_an_error_listing_jobs(ctx: ToolContext) -> None:
    await start(ctx, "true")
    for tool in (ShellOutputTool(), ShellKillTool()):
        result = await call(tool, ctx, {"job_id": "shell_9"})
        assert result.error is not None and result.error.code == JOB_NOT_FOUND
        assert "shell_1" in result.text


async def test_shell_kill_stops_the_whole_tree_including_setsid(ctx: ToolContext,
                                                                tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    command = (f"echo $$ >> {pids}; sleep 100 & echo $! >> {pids}; "
               f"(sleep 100 & echo $! >> {pids}; wait) & "
               f"setsid bash -c 'echo $$ >> {pids}; sleep 100 & echo $! >> {pids}; wait' & "
               "echo ready; wait")
    job_id = await start(ctx, command)
    found = await asyncio.to_thread(wait_pids, pids, 5)
    assert all(alive(p) for p in found)
    started = time.monotonic()
    result = await call(ShellKillTool(), ctx, {"job_id": job_id})
    assert time.monotonic() - started < 6
    assert "Stopped job shell_1" in result.text and "ready" in result.text
    assert await asyncio.to_thread(all_dead, found), [p for p in found if alive(p)]
    job = ShellJobs.of(ctx).get(job_id)
    assert job is not None and job.state is JobState.CANCELLED
    assert ShellJobs.of(ctx).drain_notifications() == []  # the model asked for it: no notice
    again = await call(ShellKillTool(), ctx, {"job_id": job_id})
    assert "nothing to stop" in again.text


async def test_completion_notice_carries_the_tail(ctx: ToolContext) -> None:
    jobs = ShellJobs.of(ctx)
    heard: list[str] = []
    jobs.add_listener(heard.append)
    job_id = await start(ctx, "for i in $(seq 1 3000); do echo line$i; done; exit 3")
    assert await wait_state(ctx, job_id) is JobState.FAILED
    await asyncio.sleep(0.05)  # listeners run on the loop
    notices = jobs.drain_notifications()
    assert len(notices) == 1 and heard == notices
    notice = notices[0]
    assert notice.startswith("Background job shell_1") and "exit code 3" in notice
    assert notice.rstrip().splitlines()[-2] == "line3000"
    assert "line1\n" not in notice and len(notice) < 3_000
    assert "Full output:" in notice
    assert jobs.drain_notifications() == []


async def test_states_are_one_way(ctx: ToolContext) -> None:
    job_id = await start(ctx, "true")
    assert await wait_state(ctx, job_id) is JobState.COMPLETED
    job = ShellJobs.of(ctx).get(job_id)
    assert job is not None
    for state in JobState:
        assert not job.transition(state)
    assert job.state is JobState.COMPLETED
    assert await ShellJobs.of(ctx).kill(job_id) is job
    assert job.state is JobState.COMPLETED


async def test_kill_all_stops_jobs_and_foreground_commands(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path)
    pids = tmp_path / "pids"
    await start(ctx, f"sleep 100 & echo $! >> {pids}; wait")
    fg = asyncio.ensure_future(call(ShellTool(), ctx, {"command": f"sleep 100 & echo $! >> "
                                                                  f"{pids}; wait"}))
    found = await asyncio.to_thread(wait_pids, pids, 2)
    jobs = ShellJobs.of(ctx)
    log_dir = jobs.log_dir()
    await jobs.kill_all()
    result = await asyncio.wait_for(fg, 10)
    assert "killed by sigterm" in result.text.lower()
    assert await asyncio.to_thread(all_dead, found)
    assert all(j.state is JobState.CANCELLED for j in jobs.jobs())
    assert not log_dir.exists()


def test_logs_of_a_registry_dropped_without_kill_all_are_removed() -> None:
    jobs = ShellJobs()
    log_dir = jobs.log_dir()
    (log_dir / "command_1.log").write_text("output")
    del jobs
    gc.collect()
    assert not log_dir.exists()


def test_output_log_bounds_memory_and_reads_since(tmp_path: Path) -> None:
    log = OutputLog(tmp_path / "x.log", head_chars=10, tail_chars=20)
    log.feed(b"0123456789abcdef")
    assert not log.cut and log.snapshot() == "0123456789abcdef"
    assert not (tmp_path / "x.log").exists()
    log.feed(b"ghijklmnopqrstuvwxyz")
    assert log.cut and log.total == 36 and log.saved
    assert log.snapshot().startswith("0123456789\n") and log.snapshot().endswith(
        "ghijklmnopqrstuvwxyz")
    assert log.since(30, 100) == ("uvwxyz", 36, 0)
    assert log.since(0, 100) == ("ghijklmnopqrstuvwxyz", 36, 16)
    assert log.since(0, 4) == ("wxyz", 36, 32)
    log.feed("é".encode()[:1])
    log.feed("é".encode()[1:])
    log.close()
    assert log.tail(1) == "é"
    assert (tmp_path / "x.log").read_text(encoding="utf-8") == (
        "0123456789abcdefghijklmnopqrstuvwxyzé")


async def test_a_job_is_stopped_at_its_time_limit(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_EXT_SHELL_JOB_LIMIT", "1")
    ctx = ToolContext(cwd=tmp_path)
    pids = tmp_path / "pids"
    job = await ShellJobs.of(ctx).start(f"sleep 100 & echo $! >> {pids}; wait", tmp_path)
    found = await asyncio.to_thread(wait_pids, pids, 1)
    for _ in range(150):
        if job.state is not JobState.RUNNING:
            break
        await asyncio.sleep(0.1)
    assert job.state is JobState.CANCELLED
    assert "time limit of 1s" in job.status_line()
    assert await asyncio.to_thread(all_dead, found)
    await asyncio.sleep(0.2)
    assert any("time limit" in n for n in ShellJobs.of(ctx).drain_notifications())


def test_the_job_time_limit_is_configurable(monkeypatch: pytest.MonkeyPatch) -> None:
    assert job_time_limit() == JOB_TIME_LIMIT == 3600
    monkeypatch.setenv("AGENT_EXT_SHELL_JOB_LIMIT", "0")
    assert job_time_limit() is None
    monkeypatch.setenv("AGENT_EXT_SHELL_JOB_LIMIT", "90")
    assert job_time_limit() == 90


async def test_a_flooding_job_is_read_slowly_past_its_log_cap(
        ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the cap only a rolling end is kept, so the job is read at a bounded pace: the
    command waits on its pipe instead of keeping the cores (and the event loop) busy."""
    monkeypatch.setenv("AGENT_EXT_SHELL_LOG_MB", "1")
    job_id = await start(ctx, "yes flood-line")
    job = ShellJobs.of(ctx).get(job_id)
    assert job is not None
    for _ in range(200):
        if job.log.capped:
            break
        await asyncio.sleep(0.05)
    assert job.log.capped
    before = job.log.total
    await asyncio.sleep(1.0)
    read = job.log.total - before
    assert 0 < read < 8 * 2**20, read  # unpaced, yes writes hundreds of MB a second
    assert job.log.tail(100).endswith("flood-line\n")
    assert job.state is JobState.RUNNING

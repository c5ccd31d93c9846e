"""The notebook widgets' Python side, without a kernel: messages in, callbacks and traits out.

Messages are fed to the registered handler exactly as the JavaScript sends them.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from agent_ext.agent import RunResult
from agent_ext.agent import events as ev
from agent_ext.agent.approval import ApprovalRequest, Decision
from agent_ext.core import ConfirmationDetails, ErrorCode, Kind, Registry, ToolResult
from agent_ext.jupyter.widgets import (
    Answer,
    AskUserWidget,
    ConfirmDiffWidget,
    ConfirmGroupWidget,
    ProjectTrustWidget,
    ToolCatalogueWidget,
    TranscriptWidget,
    _assets,
)
from agent_ext.jupyter.widgets._base import Widget
from agent_ext.models import ToolCall, Usage
from agent_ext.trust import ProjectTrust, check_project

from .helpers import echo_tool


def project_trust(root: Path) -> ProjectTrust:
    """A project that asks for a server (with a secret env value) and an allow rule."""
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"x": {
        "command": "sh", "args": ["-c", "<b>hi</b>"], "env": {"TOKEN": "s3cret"}}}}))
    (root / ".agent_ext").mkdir(exist_ok=True)
    (root / ".agent_ext/settings.json").write_text(json.dumps({"permissions": {
        "allow": ["Bash"], "deny": ["Bash(rm *)"]}}))
    return check_project(root)

ORIGINAL = "def add(a, b):\n    return a + b\n"
PROPOSED = "def add(a, b):\n    \"\"\"Add.\"\"\"\n    return a + b\n"
MALFORMED: list[Any] = [
    None, "decision", [], {}, {"type": 3}, {"type": "decision"},
    {"type": "decision", "outcome": "maybe"},
    {"type": "decision", "outcome": "always", "scope": "everything"},
    {"type": "decision", "outcome": "approve", "persist": "forever"},
    {"type": "decision", "outcome": "reject", "feedback": ["not", "text"]},
    {"type": "decision", "outcome": "approve", "modified": 42},
    {"type": "unknown"},
]


def send(widget: Widget, content: Any) -> None:
    """Deliver a message the way ipywidgets does when the frontend sends one."""
    widget._handle_custom_msg(content, [])


def edit_request(**details: Any) -> ApprovalRequest:
    fields: dict[str, Any] = {"kind": "edit", "title": "Edit calc.py?", "summary": "Add a docstring",
                              "tool_name": "edit_file", "file_path": "calc.py",
                              "original": ORIGINAL, "proposed": PROPOSED}
    fields.update(details)
    return ApprovalRequest(call_id="c1", tool_name="edit_file",
                           details=ConfirmationDetails(**fields),
                           reason="edits need your approval", scopes=("file", "tool"))


def confirm(request: ApprovalRequest | None = None) -> tuple[ConfirmDiffWidget, list[Decision]]:
    widget = ConfirmDiffWidget(request or edit_request())
    got: list[Decision] = []
    widget.on_decision(got.append)
    return widget, got


# -- assets ---------------------------------------------------------------------------------------


def test_every_widget_loads_its_bundled_module_and_stylesheet() -> None:
    for name in ("confirm_diff", "transcript", "tool_catalogue", "ask_user", "project_trust"):
        assert "export default { render }" in _assets.asset(f"{name}.js")
        assert "--jp-" in _assets.asset(f"{name}.css")
    assert "export default { render }" in ConfirmDiffWidget._esm
    assert "ae-confirm" in ConfirmDiffWidget._css


def test_a_missing_asset_renders_a_message_instead_of_failing(monkeypatch: pytest.MonkeyPatch,
                                                              tmp_path: Any) -> None:
    monkeypatch.setattr(_assets, "_REPO_BUNDLE", tmp_path)
    esm = _assets.asset("nope.js")
    assert "nope.js is missing" in esm
    assert "export default" in esm
    assert _assets.asset("nope.css") == ""


# -- confirm_diff -------------------------------------------------------------------------------


def test_confirm_sends_the_request_as_plain_json() -> None:
    request = edit_request(extra={"cell_id": "a1", "when": object()})
    widget = ConfirmDiffWidget(request)
    assert widget.request["call_id"] == "c1"
    assert widget.request["scopes"] == ["file", "tool"]
    assert widget.request["reason"] == "edits need your approval"
    details = widget.request["details"]
    assert details["proposed"] == PROPOSED
    assert details["extra"]["cell_id"] == "a1"
    assert isinstance(details["extra"]["when"], str)
    assert widget.status == "pending"


def test_confirm_leaves_huge_texts_out_and_sends_a_diff(monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_ext.jupyter.widgets import confirm as module

    monkeypatch.setattr(module, "MAX_TEXT_CHARS", 10)
    details = ConfirmDiffWidget(edit_request()).request["details"]
    assert details["original"] is None
    assert details["proposed"] is None
    assert '+    """Add."""' in details["diff"]
    assert details["extra"]["too_large_to_edit"] is True


def test_ready_is_reported_once_to_callbacks_registered_before_and_after() -> None:
    widget, _ = confirm()
    calls: list[str] = []
    widget.on_ready(lambda: calls.append("before"))
    assert not widget.wait_ready(0)
    send(widget, {"type": "ready"})
    send(widget, {"type": "ready"})
    widget.on_ready(lambda: calls.append("after"))
    assert widget.ready
    assert calls == ["before", "after"]


@pytest.mark.parametrize(("message", "expected"), [
    ({"outcome": "approve", "modified": None, "feedback": None, "scope": None, "persist": "session"},
     Decision("approve", extra={"by": "user"})),
    ({"outcome": "reject", "modified": None, "feedback": "  use a type hint  ", "scope": None,
      "persist": "session"},
     Decision("reject", feedback="use a type hint", extra={"by": "user"})),
    ({"outcome": "reject", "feedback": "   "}, Decision("reject", extra={"by": "user"})),
    ({"outcome": "approve", "modified": PROPOSED + "# mine\n"},
     Decision("approve", modified=PROPOSED + "# mine\n", extra={"by": "user"})),
    ({"outcome": "approve", "modified": PROPOSED}, Decision("approve", extra={"by": "user"})),
    ({"outcome": "always", "scope": "tool", "persist": "project"},
     Decision("always", scope="tool", persist="project", extra={"by": "user"})),
    ({"outcome": "always", "scope": None}, Decision("always", scope="file", extra={"by": "user"})),
    ({"outcome": "cancel", "feedback": "ignored"}, Decision("cancel", extra={"by": "user"})),
])
def test_confirm_turns_each_decision_message_into_a_decision(message: dict[str, Any],
                                                            expected: Decision) -> None:
    widget, got = confirm()
    send(widget, {"type": "decision", **message})
    assert got == [expected]
    assert widget.decided == expected


def test_only_the_first_decision_counts() -> None:
    widget, got = confirm()
    send(widget, {"type": "decision", "outcome": "approve"})
    send(widget, {"type": "decision", "outcome": "reject"})
    late: list[Decision] = []
    widget.on_decision(late.append)
    assert [d.outcome for d in got] == ["approve"]
    assert [d.outcome for d in late] == ["approve"]


@pytest.mark.parametrize("message", MALFORMED)
def test_malformed_messages_are_ignored_silently(message: Any,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    widget, got = confirm()
    send(widget, message)
    assert got == []
    assert widget.decided is None
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == ""


def test_an_edit_for_a_proposal_that_takes_none_is_ignored() -> None:
    widget, got = confirm(edit_request(proposed=None))
    send(widget, {"type": "decision", "outcome": "approve", "modified": "x"})
    assert got == []


def test_a_failing_callback_does_not_break_the_handler(capsys: pytest.CaptureFixture[str]) -> None:
    widget, got = confirm()

    def broken(_decision: Decision) -> None:
        raise RuntimeError("boom")

    widget.on_decision(broken)
    send(widget, {"type": "decision", "outcome": "approve"})
    assert [d.outcome for d in got] == ["approve"]
    assert capsys.readouterr().out == ""


async def test_a_decision_from_a_subshell_thread_reaches_the_event_loop() -> None:
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Decision] = loop.create_future()
    widget, _ = confirm()
    threads: list[str] = []

    def hand_over(decision: Decision) -> None:
        threads.append(threading.current_thread().name)
        loop.call_soon_threadsafe(future.set_result, decision)

    widget.on_decision(hand_over)
    worker = threading.Thread(target=send, name="subshell",
                              args=(widget, {"type": "decision", "outcome": "reject"}))
    worker.start()
    decision = await asyncio.wait_for(future, 5)
    worker.join()
    assert decision.outcome == "reject"
    assert threads == ["subshell"]


def test_show_decided_locks_the_view_and_updates_the_fallback() -> None:
    widget, _ = confirm()
    widget.show_decided(Decision("reject", feedback="not now", extra={"by": "timeout"}),
                        note="No answer within 10 minutes; the call was rejected.")
    assert widget.status == "decided"
    assert widget.decision == {"outcome": "reject", "edited": False, "feedback": "not now",
                               "scope": None, "persist": "session", "by": "timeout",
                               "note": "No answer within 10 minutes; the call was rejected."}
    assert widget.decided is not None
    assert "No answer within 10 minutes" in widget.static_html()
    send(widget, {"type": "decision", "outcome": "approve"})
    assert widget.decided.outcome == "reject"


def test_withdraw_marks_the_request_cancelled() -> None:
    widget, _ = confirm()
    widget.withdraw("The run was cancelled.")
    assert widget.status == "cancelled"
    assert "The run was cancelled." in widget.static_text()


def test_confirm_fallback_shows_the_diff_escaped_and_the_decision() -> None:
    widget, _ = confirm(edit_request(title="<script>alert(1)</script>"))
    html = widget.static_html()
    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    assert "+    &quot;&quot;&quot;Add.&quot;&quot;&quot;" in html
    assert "Waiting for your decision" in html
    send(widget, {"type": "decision", "outcome": "always", "scope": "file", "persist": "project"})
    assert "You always allow edit_file on calc.py in this project" in widget.static_html()


def test_confirm_fallback_shows_a_command() -> None:
    request = ApprovalRequest("c2", "bash", ConfirmationDetails(
        kind="exec", title="Run a command?", summary="", command="rm -rf build"),
        reason="rm is not allowed outright")
    text = ConfirmDiffWidget(request).static_text()
    assert "$ rm -rf build" in text
    assert "Why you were asked: rm is not allowed outright" in text


# -- the mime bundle and display ----------------------------------------------------------------


def test_every_widget_adds_html_and_text_next_to_the_widget_view(tmp_path: Path) -> None:
    reg = Registry()
    reg.register(echo_tool("read_file", defer=False))
    widgets: list[Widget] = [confirm()[0], TranscriptWidget(), ToolCatalogueWidget(reg),
                             AskUserWidget("Which one?"), ProjectTrustWidget(project_trust(tmp_path))]
    for widget in widgets:
        bundle = widget._repr_mimebundle_()
        assert bundle is not None
        data, _ = bundle
        assert "application/vnd.jupyter.widget-view+json" in data
        assert data["text/html"].startswith('<div class="agent-ext-static')
        assert data["text/plain"]


def test_show_keeps_a_handle_and_finishing_updates_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from IPython import display as ipython_display

    updates: list[Any] = []

    class Handle:
        def update(self, obj: Any) -> None:
            updates.append(obj)

    monkeypatch.setattr(ipython_display, "display", lambda obj, display_id=False: Handle())
    widget = TranscriptWidget()
    widget.show()
    widget.finish()
    assert updates == [widget]


# -- transcript ---------------------------------------------------------------------------------


def call(call_id: str, name: str, args: str = "{}") -> ToolCall:
    return ToolCall(call_id, name, args)


def kinds(widget: TranscriptWidget) -> list[str]:
    return [item["kind"] for item in widget.items]


def test_transcript_streams_text_into_one_item_per_block() -> None:
    widget = TranscriptWidget()
    widget.add_event(ev.RunStarted("hi", "demo-model"))
    widget.add_event(ev.ReasoningDelta("Think"))
    widget.add_event(ev.ReasoningDelta("ing."))
    widget.add_event(ev.TextDelta("Hello"))
    widget.add_event(ev.TextDelta(", world"))
    widget.add_event(ev.ToolCallStarted(call("1", "bash", '{"command": "ls"}'), "bash: ls"))
    widget.add_event(ev.TextDelta("After."))
    assert kinds(widget) == ["run", "reasoning", "text", "tool", "text"]
    assert widget.items[0]["model"] == "demo-model"
    assert widget.items[1]["text"] == "Thinking."
    assert widget.items[2]["text"] == "Hello, world"
    assert widget.items[2]["rev"] == 1
    assert [item["id"] for item in widget.items] == [1, 2, 3, 4, 5]


def test_transcript_follows_a_tool_call_to_its_result() -> None:
    widget = TranscriptWidget()
    widget.add_event(ev.ToolCallStarted(call("1", "bash", '{"command": "make"}'), "bash: make"))
    tool = widget.items[0]
    assert tool["status"] == "running"
    assert tool["title"] == "bash: make"
    assert '"command": "make"' in tool["args"]
    widget.add_event(ev.ToolOutput("1", "x" * 3000))
    assert len(widget.items[0]["output"]) == 2001
    widget.add_event(ev.ToolCallFinished(call("1", "bash"), ToolResult("y" * 5000), 1.23456))
    done = widget.items[0]
    assert done["status"] == "done"
    assert done["seconds"] == 1.235
    assert "output" not in done
    assert done["preview"].startswith("y" * 1500)
    assert "3500 more characters" in done["preview"]
    assert done["rev"] == 3


@pytest.mark.parametrize(("code", "status"), [
    (ErrorCode.EXECUTION_DENIED, "denied"),
    (ErrorCode.EXECUTION_CANCELLED, "cancelled"),
    (ErrorCode.EXECUTION_FAILED, "error"),
])
def test_transcript_maps_error_results_to_statuses(code: str, status: str) -> None:
    widget = TranscriptWidget()
    widget.add_event(ev.ToolCallStarted(call("1", "bash"), "bash"))
    widget.add_event(ev.ToolCallFinished(call("1", "bash"), ToolResult.fail(code, "it failed"), 0.1))
    assert widget.items[0]["status"] == status
    assert widget.items[0]["error"] == "it failed"


def test_transcript_shows_approvals_on_the_tool_card() -> None:
    widget = TranscriptWidget()
    request = edit_request()
    widget.add_event(ev.ToolCallStarted(call("c1", "edit_file"), "edit calc.py"))
    widget.add_event(ev.ApprovalRequested(request))
    assert widget.items[0]["status"] == "waiting"
    assert widget.items[0]["reason"] == "edits need your approval"
    widget.add_event(ev.ApprovalResolved(request, Decision.reject("no")))
    assert widget.items[0]["status"] == "denied"
    assert len(widget.items) == 1


def test_transcript_marks_reads_and_searches_for_grouping() -> None:
    reg = Registry()
    reg.register(echo_tool("fetch_doc", kind=Kind.READ, defer=False))
    widget = TranscriptWidget(registry=reg)
    for i, name in enumerate(["fetch_doc", "read_file", "grep", "tool_search", "bash"]):
        widget.add_event(ev.ToolCallStarted(call(str(i), name), name))
    assert [item.get("group") for item in widget.items] == ["read", "read", "search", "search",
                                                           None]


def test_transcript_reads_the_todo_list_of_todo_write() -> None:
    widget = TranscriptWidget()
    args = ('{"todos": [{"content": "Read", "status": "completed"}, '
            '{"content": "Fix", "status": "in-progress"}, {"text": "Test"}, "junk"]}')
    widget.add_event(ev.ToolCallStarted(call("1", "todo_write", args), "todo_write"))
    assert widget.items[0]["todos"] == [
        {"content": "Read", "status": "completed"},
        {"content": "Fix", "status": "in_progress"},
        {"content": "Test", "status": "pending"},
    ]
    assert "args" not in widget.items[0]


def test_transcript_usage_notices_and_the_end_of_the_run() -> None:
    widget = TranscriptWidget(price_per_mtok=(3.0, 15.0))
    widget.add_event(ev.UsageUpdated(Usage(10, 5), Usage(1_000_000, 100_000), estimated=True))
    assert widget.usage == {"input_tokens": 1_000_000, "output_tokens": 100_000,
                            "estimated": True, "cost": 4.5}
    widget.add_event(ev.Notice("stopped after 3 model turns", "warning"))
    widget.add_event(ev.ToolCallStarted(call("1", "bash"), "bash"))
    result = RunResult(text="", stop_reason="cancelled")
    widget.add_event(ev.RunFinished(result))
    assert widget.status == "cancelled"
    assert widget.items[0] == {"id": 1, "rev": 0, "kind": "notice", "level": "warning",
                               "text": "stopped after 3 model turns"}
    assert widget.items[1]["status"] == "cancelled"
    assert "Cancelled" in widget.static_text()


def test_finish_without_usage_events_takes_the_result_usage() -> None:
    widget = TranscriptWidget()
    widget.finish(RunResult(text="ok", usage=Usage(7, 3)))
    assert widget.status == "done"
    assert widget.usage["input_tokens"] == 7


def test_transcript_never_raises_on_a_strange_event() -> None:
    widget = TranscriptWidget()
    widget.add_event(object())  # type: ignore[arg-type]
    widget.add_event(ev.ToolOutput("unknown-call", "text"))
    assert widget.items == []


def test_synced_items_are_snapshots() -> None:
    widget = TranscriptWidget()
    widget.add_event(ev.TextDelta("a"))
    synced = widget.items
    widget.add_event(ev.TextDelta("b"))
    assert synced[0]["text"] == "a"
    assert widget.items[0]["text"] == "ab"


async def test_streamed_text_is_synced_in_batches_while_the_loop_runs() -> None:
    widget = TranscriptWidget()
    widget.add_event(ev.TextDelta("a"))
    for piece in "bcdef":
        widget.add_event(ev.TextDelta(piece))
    assert widget.items[0]["text"] == "a"
    await asyncio.sleep(0.2)
    assert widget.items[0]["text"] == "abcdef"


async def test_live_output_from_a_tool_thread_is_synced_on_the_loop() -> None:
    widget = TranscriptWidget()
    widget.add_event(ev.ToolCallStarted(call("1", "bash"), "bash"))
    widget.add_event(ev.TextDelta("x"))
    widget.add_event(ev.TextDelta("y"))
    worker = threading.Thread(target=widget.add_event, args=(ev.ToolOutput("1", "line\n"),))
    worker.start()
    worker.join()
    assert "output" not in widget.items[0]
    await asyncio.sleep(0.2)
    assert widget.items[0]["output"] == "line\n"


def test_transcript_fallback_escapes_model_text() -> None:
    widget = TranscriptWidget()
    widget.add_event(ev.TextDelta("<img src=x onerror=alert(1)> done"))
    widget.add_event(ev.ToolCallStarted(call("1", "bash"), "bash: ls"))
    widget.add_event(ev.ToolCallFinished(call("1", "bash"), ToolResult("a.py"), 0.5))
    html = widget.static_html()
    assert "<img" not in html
    assert "&lt;img src=x onerror=alert(1)&gt; done" in html
    assert "<details><summary>[done] <code>bash</code> bash: ls (0.50 s)</summary><pre>a.py</pre>" in html


# -- tool catalogue -----------------------------------------------------------------------------


def catalogue() -> tuple[ToolCatalogueWidget, Registry]:
    reg = Registry()
    reg.register(echo_tool("read_file", "Read a file from disk.", defer=False, read_only=True))
    reg.register(echo_tool("create_pull_request", "Open a pull request on GitHub."))
    reg.register(echo_tool("list_issues", "List the issues of a repository."))
    reg.register(echo_tool("send_email", "Send an email message."))
    return ToolCatalogueWidget(reg), reg


def by_name(widget: ToolCatalogueWidget) -> dict[str, dict[str, Any]]:
    return {tool["name"]: tool for tool in widget.tools}


def test_catalogue_lists_every_tool_with_its_state() -> None:
    widget, _ = catalogue()
    tools = by_name(widget)
    assert list(tools) == ["create_pull_request", "list_issues", "read_file", "send_email"]
    assert tools["read_file"]["deferred"] is False
    assert tools["read_file"]["read_only"] is True
    assert tools["create_pull_request"]["deferred"] is True
    assert tools["create_pull_request"]["revealed"] is False
    assert tools["create_pull_request"]["description"] == "Open a pull request on GitHub."


def test_catalogue_search_answers_with_the_tool_search_ranking() -> None:
    widget, reg = catalogue()
    send(widget, {"type": "search", "query": "open a pull request"})
    expected = [hit.name for hit in reg.search("open a pull request", 4, everything=True).hits]
    assert widget.results == expected
    assert widget.results[0] == "create_pull_request"
    assert widget.results_for == "open a pull request"
    send(widget, {"type": "search", "query": "   "})
    assert widget.results == []


def test_catalogue_select_sends_the_schema() -> None:
    widget, _ = catalogue()
    send(widget, {"type": "select", "name": "list_issues"})
    assert widget.selected_schema["name"] == "list_issues"
    assert widget.selected_schema["parameters"]["properties"] == {"x": {"type": "string"}}
    send(widget, {"type": "select", "name": "nope"})
    assert "no tool named 'nope'" in widget.selected_schema["error"]


def test_catalogue_toggles_act_on_the_registry() -> None:
    widget, reg = catalogue()
    send(widget, {"type": "reveal", "name": "send_email"})
    assert "send_email" in reg.revealed
    assert by_name(widget)["send_email"]["revealed"] is True
    send(widget, {"type": "unreveal", "name": "send_email"})
    assert "send_email" not in reg.revealed
    send(widget, {"type": "disable", "name": "list_issues"})
    assert reg.is_disabled("list_issues")
    assert by_name(widget)["list_issues"]["disabled"] is True
    send(widget, {"type": "select", "name": "list_issues"})
    assert "enable it" in widget.selected_schema["error"]
    send(widget, {"type": "enable", "name": "list_issues"})
    assert not reg.is_disabled("list_issues")
    assert by_name(widget)["list_issues"]["disabled"] is False


def test_catalogue_reports_what_it_cannot_do() -> None:
    widget, reg = catalogue()
    send(widget, {"type": "reveal", "name": "read_file"})
    assert "not deferred" in widget.message
    send(widget, {"type": "disable", "name": "ghost"})
    assert "no tool named 'ghost'" in widget.message
    send(widget, {"type": "search", "query": ["not", "text"]})
    send(widget, {"type": "disable"})
    assert reg.names() == ["create_pull_request", "list_issues", "read_file", "send_email"]


def test_catalogue_fallback_lists_the_tools() -> None:
    widget, _ = catalogue()
    html = widget.static_html()
    assert "<code>create_pull_request</code>" in html
    assert "deferred" in html
    assert "read_file [read-only]" in widget.static_text()


# -- ask_user -----------------------------------------------------------------------------------

QUESTION = {"question": "Which database?", "multi_select": False,
            "options": [{"label": "SQLite", "description": "A file"}, "Postgres", {"x": 1}]}


def test_ask_normalises_the_question() -> None:
    widget = AskUserWidget(QUESTION)
    assert widget.question == {
        "question": "Which database?", "multi_select": False, "allow_text": True,
        "options": [{"label": "SQLite", "description": "A file"},
                    {"label": "Postgres", "description": ""}],
    }
    assert AskUserWidget("Name?").question["allow_text"] is True


def test_ask_reports_the_answer_once() -> None:
    widget = AskUserWidget(QUESTION)
    got: list[Answer] = []
    widget.on_answer(got.append)
    send(widget, {"type": "answer", "choices": ["Postgres"], "text": " replicas "})
    send(widget, {"type": "answer", "choices": ["SQLite"], "text": ""})
    assert got == [Answer(("Postgres",), "replicas")]
    assert widget.answered == Answer(("Postgres",), "replicas")
    assert "You answered: Postgres — “replicas”" in widget.static_html()


@pytest.mark.parametrize("message", [
    {"type": "answer", "choices": ["MySQL"], "text": ""},
    {"type": "answer", "choices": ["SQLite", "Postgres"], "text": ""},
    {"type": "answer", "choices": [], "text": "  "},
    {"type": "answer", "choices": "SQLite"},
    {"type": "answer", "choices": [], "text": 5},
])
def test_ask_ignores_malformed_answers(message: dict[str, Any]) -> None:
    widget = AskUserWidget(QUESTION)
    got: list[Answer] = []
    widget.on_answer(got.append)
    send(widget, message)
    assert got == []


def test_ask_takes_several_choices_when_allowed_and_no_text_when_not() -> None:
    widget = AskUserWidget({**QUESTION, "multi_select": True, "allow_text": False})
    send(widget, {"type": "answer", "choices": ["SQLite", "Postgres"], "text": "extra"})
    assert widget.answered is None
    send(widget, {"type": "answer", "choices": ["SQLite", "Postgres", "SQLite"], "text": ""})
    assert widget.answered == Answer(("SQLite", "Postgres"), "")


def test_ask_shows_answers_and_withdrawals_set_from_python() -> None:
    widget = AskUserWidget(QUESTION)
    widget.show_answer(Answer(("SQLite",), ""))
    assert widget.status == "answered"
    assert widget.answer == {"choices": ["SQLite"], "text": ""}
    other = AskUserWidget(QUESTION)
    other.withdraw()
    assert other.status == "cancelled"
    assert "no longer waiting" in other.static_text()


# -- project_trust ------------------------------------------------------------------------------


def test_trust_widget_sends_each_item_and_no_env_value(tmp_path: Path) -> None:
    widget = ProjectTrustWidget(project_trust(tmp_path))
    request = widget.request
    assert request["changed"] is False
    assert {i["key"] for i in request["items"]} == {"x", "permissions.allow"}
    server = next(i for i in request["items"] if i["kind"] == "server")
    assert server["value"] == {"command": "sh", "args": ["-c", "<b>hi</b>"], "env": ["TOKEN"]}
    assert request["narrowing"] == ["deny: Bash(rm *) (.agent_ext/settings.json)"]
    assert "s3cret" not in str(request)


@pytest.mark.parametrize("answer", ["trust", "once", "distrust"])
def test_trust_widget_takes_the_first_answer_only(answer: str, tmp_path: Path) -> None:
    widget = ProjectTrustWidget(project_trust(tmp_path))
    got: list[str] = []
    widget.on_answer(got.append)
    for message in ({"type": "answer", "answer": "maybe"}, {"type": "answer"},
                    {"type": "answer", "answer": answer}, {"type": "answer", "answer": "trust"}):
        send(widget, message)
    assert got == [answer]
    late: list[str] = []
    widget.on_answer(late.append)
    assert late == [answer]


def test_trust_widget_fallback_is_escaped_and_shows_the_outcome(tmp_path: Path) -> None:
    widget = ProjectTrustWidget(project_trust(tmp_path))
    assert "Waiting for your answer" in widget.static_text()
    assert "&lt;b&gt;hi&lt;/b&gt;" in widget.static_html()
    widget.show_answer("distrust")
    assert widget.status == "decided" and widget.decision == {"answer": "distrust"}
    assert "Not trusted" in widget.static_text()
    other = ProjectTrustWidget(project_trust(tmp_path))
    other.withdraw("Nothing was trusted.")
    assert other.status == "cancelled" and other.static_text().endswith("Nothing was trusted.")


def group_of(*ids: str) -> ConfirmGroupWidget:
    return ConfirmGroupWidget([ApprovalRequest(i, "edit_file", ConfirmationDetails(
        kind="edit", title=f"Edit {i}.py", summary="", tool_name="edit_file",
        file_path=f"{i}.py", original="a\n", proposed="b\n"), reason="edits ask")
        for i in ids])


def test_a_group_settles_once_every_request_is_decided() -> None:
    widget = group_of("c1", "c2")
    settled: list[dict[str, Decision]] = []
    widget.on_settled(settled.append)
    assert [r["call_id"] for r in widget.requests] == ["c1", "c2"]
    send(widget, {"type": "decision", "call_id": "c2", "outcome": "reject",
                  "feedback": "not\nthis one"})
    send(widget, {"type": "decision", "call_id": "nope", "outcome": "approve"})
    send(widget, {"type": "decision", "call_id": "c2", "outcome": "approve"})
    assert settled == []
    send(widget, {"type": "decision", "call_id": "c1", "outcome": "approve"})
    assert len(settled) == 1
    assert {k: d.outcome for k, d in settled[0].items()} == {"c1": "approve", "c2": "reject"}
    assert settled[0]["c2"].feedback == "not\nthis one"


def test_a_cancel_settles_a_group_at_once_and_the_fallback_shows_each_card() -> None:
    widget = group_of("c1", "c2", "c3")
    settled: list[dict[str, Decision]] = []
    widget.on_settled(settled.append)
    send(widget, {"type": "decision", "call_id": "c1", "outcome": "cancel"})
    assert [list(s) for s in settled] == [["c1"]]
    widget.withdraw("Withdrawn: the run was cancelled.")
    text = widget.static_text()
    assert text.startswith("The agent proposes 3 changes")
    assert text.count("Withdrawn: the run was cancelled.") == 2
    assert "You cancelled the run." in text
    assert "<strong>The agent proposes 3 changes</strong>" in widget.static_html()


def test_a_group_needs_distinct_call_ids() -> None:
    with pytest.raises(ValueError, match="distinct call ids"):
        group_of("c1", "c1")


def test_alive_messages_only_mark_the_widget_seen() -> None:
    widget, got = confirm()
    widget.last_seen = 0.0
    send(widget, {"type": "alive"})
    assert widget.last_seen > 0 and got == [] and not widget.ready

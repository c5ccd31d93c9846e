"""Tool calls written as text: which texts are calls, which stay text, and streaming hold-back."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from agent_ext.core import Registry
from agent_ext.models import inband as ib
from agent_ext.tools import register_builtins


@pytest.fixture(scope="module")
def resolve() -> Callable[[str], str | None]:
    registry = Registry()
    register_builtins(registry)
    return registry.resolve


def calls(text: str, resolve: Callable[[str], str | None]) -> list[tuple[str, dict[str, Any]]]:
    found = ib.parse(text, resolve)
    return [] if found is None else [(c.name, c.arguments) for c in found.calls]


READ = {"file_path": "app.py"}
CALL = json.dumps({"name": "read_file", "arguments": READ})


@pytest.mark.parametrize(("text", "fmt"), [
    (f"<tool_call>\n{CALL}\n</tool_call>", "tool_call tag"),
    (f"<tool_call>{CALL}</tool_call>", "tool_call tag"),
    (f"```json\n{CALL}\n```", "json fence"),
    (f"```tool_call\n{CALL}\n```", "json fence"),
    (f"```\n{CALL}\n```", "json fence"),
    (CALL, "bare JSON"),
    (f"  {CALL}  \n", "bare JSON"),
])
def test_each_format_is_one_call(text: str, fmt: str, resolve) -> None:
    found = ib.parse(text, resolve)
    assert found is not None and found.format == fmt
    assert [(c.name, c.arguments) for c in found.calls] == [("read_file", READ)]
    assert found.prose == ""


@pytest.mark.parametrize("text", [
    '{{"name": "read_file", "arguments": {"file_path": "app.py"}}}',         # doubled braces
    '{"name": "read_file", "parameters": {"file_path": "app.py"}}',          # parameters
    '{"name": "read_file", "arguments": "{\\"file_path\\": \\"app.py\\"}"}',  # a JSON string
    "{'name': 'read_file', 'arguments': {'file_path': 'app.py'}}",           # single quotes
    '{"name": "read_file", "arguments": {"file_path": "app.py",},}',         # trailing commas
    '{"type": "function", "function": {"name": "read_file", "arguments": {"file_path": "app.py"}}}',
    '{"name": "Read", "arguments": {"file_path": "app.py"}}',                # an alias
])
def test_variants_small_models_write(text: str, resolve) -> None:
    assert calls(text, resolve) == [("read_file", READ)]


def test_a_list_and_several_blocks_are_several_calls(resolve) -> None:
    listed = json.dumps([{"name": "read_file", "arguments": READ},
                         {"name": "ls", "arguments": {"path": "."}}])
    assert [n for n, _ in calls(listed, resolve)] == ["read_file", "ls"]
    other = json.dumps({"name": "ls", "arguments": {"path": "."}})
    two = f"<tool_call>{CALL}</tool_call>\n<tool_call>{other}</tool_call>"
    assert [n for n, _ in calls(two, resolve)] == ["read_file", "ls"]


def test_calls_are_read_up_to_the_first_repeat(resolve) -> None:
    other = json.dumps({"name": "ls", "arguments": {"path": "."}})
    looped = "\n".join([CALL, other, CALL, other, CALL])
    found = ib.parse(looped, resolve)
    assert found is not None and [c.name for c in found.calls] == ["read_file", "ls"]
    assert found.left_out == 3 and found.prose == ""


def test_prose_around_a_call_is_kept_and_the_call_is_not(resolve) -> None:
    text = f"I'll read the file first.\n```json\n{CALL}\n```\nThen I will fix it."
    found = ib.parse(text, resolve)
    assert found is not None
    assert found.prose == "I'll read the file first.\nThen I will fix it."
    assert "read_file" not in found.prose


def test_multiline_strings_in_an_edit(resolve) -> None:
    args = {"file_path": "app.py", "old_string": "    return x + 1\n", "new_string": "    return x\n"}
    text = "<tool_call>\n" + json.dumps({"name": "edit", "arguments": args}) + "\n</tool_call>"
    assert calls(text, resolve) == [("edit", args)]


@pytest.mark.parametrize("text", [
    # A JSON answer to a plain question: no tool by that name.
    '{"name": "Ada", "age": 36}',
    '```json\n{"name": "Ada", "age": 36}\n```',
    # A known tool name but not the shape of a call.
    '{"name": "read_file", "description": "reads files"}',
    # An unknown tool.
    '{"name": "delete_everything", "arguments": {}}',
    # JSON inside an explanation with code: a python fence makes it all text.
    f"Call it like this:\n```python\nagent.call_tool('read_file', {READ})\n```\nor\n```json\n{CALL}\n```",
    # Inline JSON in a sentence is not a call.
    f"The model might write {CALL} here.",
    # A call that was cut off is never guessed at.
    '{"name": "read_file", "arguments": {"file_path": "app',
    # One good call next to a block that is not a call: nothing is read.
    f'```json\n{CALL}\n```\n```json\n{{"name": "Ada", "age": 36}}\n```',
    "",
    "Plain text with no JSON at all.",
])
def test_stays_text(text: str, resolve) -> None:
    assert ib.parse(text, resolve) is None


def test_disabled_tools_are_not_called(resolve) -> None:
    registry = Registry()
    register_builtins(registry)
    registry.disable("read_file")
    from agent_ext.agent.honest import resolver

    assert ib.parse(CALL, resolver(registry)) is None
    assert ib.parse(CALL, resolve) is not None


def test_a_cut_call_is_recognised(resolve) -> None:
    assert ib.looks_like_cut_call('<tool_call>\n{"name": "edit", "arguments": {"old_', resolve)
    assert ib.looks_like_cut_call('Sure.\n{"name": "write_file", "arguments": {"con', resolve)
    assert not ib.looks_like_cut_call('{"name": "Ada", "bio": "a long', resolve)
    assert not ib.looks_like_cut_call(CALL, resolve)
    assert not ib.looks_like_cut_call("An answer that simply ran long and", resolve)


@pytest.mark.parametrize(("mode", "local", "on"), [
    ("auto", True, True), ("auto", False, False), ("always", False, True),
    ("never", True, False)])
def test_modes(mode: str, local: bool, on: bool) -> None:
    assert ib.mode_applies(mode, local=local) is on


def stream(text: str, resolve, size: int = 3) -> tuple[list[str], str]:
    hold = ib.StreamHold(resolve)
    shown = [hold.feed(text[i:i + size]) for i in range(0, len(text), size)]
    return shown, hold.finish(ib.parse(text, resolve))


def test_stream_hold_hides_a_call_and_shows_the_prose(resolve) -> None:
    text = f"Reading it.\n<tool_call>\n{CALL}\n</tool_call>\nDone soon."
    shown, rest = stream(text, resolve)
    seen = "".join(shown) + rest
    assert "read_file" not in seen and "<tool" not in seen
    assert seen.startswith("Reading it.") and seen.rstrip().endswith("Done soon.")


@pytest.mark.parametrize("text", [
    "Here is code:\n```python\nprint({'name': 1})\n```\nThat prints a dict.",
    '{"name": "Ada", "age": 36}\nThat is the user.',
    "No JSON, just words, for a while.",
])
def test_stream_hold_shows_text_that_is_no_call_in_full(text: str, resolve) -> None:
    shown, rest = stream(text, resolve)
    assert "".join(shown) + rest == text


def test_stream_hold_lets_code_flow_before_the_answer_ends(resolve) -> None:
    text = "Sure:\n```python\nx = 1\ny = 2\n```\n" + "more words " * 20
    shown, _ = stream(text, resolve)
    # Everything after the fence's language line is shown while streaming, not at the end.
    assert "".join(shown).startswith("Sure:\n```python\nx = 1")

"""FunctionTool and @tool: typed functions and raw schemas become tools."""

from __future__ import annotations

import asyncio
import threading
from typing import Literal

import pytest

from agent_ext import tool
from agent_ext.core import (
    ErrorCode,
    ExecControl,
    FunctionTool,
    ImagePart,
    Kind,
    TextPart,
    ToolContext,
    ToolInvocation,
    ToolResult,
)


@tool(kind=Kind.READ, read_only=True, defer=False)
def lookup(user_id: int, verbose: bool = False, fields: list[str] | None = None) -> dict[str, object]:
    """Look up a user record.

    Longer explanation that stays in the description.

    Args:
        user_id: The numeric id of the user.
        verbose: Include every field,
            even the rarely used ones.
        fields: Only these fields.
    """
    return {"id": user_id, "verbose": verbose, "fields": fields}


async def run(t: FunctionTool, args: object, ctx: ToolContext | None = None) -> ToolResult:
    built = t.build(args, ctx)  # type: ignore[arg-type]
    if isinstance(built, ToolResult):
        return built
    return await built.execute(ExecControl())


def test_signature_and_docstring_become_the_declaration() -> None:
    decl = lookup.declaration()
    assert decl.name == "lookup"
    assert decl.description == "Look up a user record.\n\nLonger explanation that stays in the description."
    props = decl.parameters["properties"]
    assert props["user_id"] == {"type": "integer", "description": "The numeric id of the user."}
    assert props["verbose"]["description"] == "Include every field, even the rarely used ones."
    assert props["fields"]["type"] == "array"
    assert decl.parameters["required"] == ["user_id"]
    assert decl.parameters["additionalProperties"] is False


def test_the_decorated_function_still_works() -> None:
    assert lookup(3) == {"id": 3, "verbose": False, "fields": None}


async def test_typed_call_coerces_and_returns_json() -> None:
    result = await run(lookup, {"user_id": "7", "verbose": "true", "fields": '["name"]'})
    assert not result.is_error
    assert '"id": 7' in result.text and '"verbose": true' in result.text and '"name"' in result.text


async def test_typed_call_errors_name_the_field() -> None:
    result = await run(lookup, {"user_id": "seven"})
    assert result.error is not None and result.error.code == ErrorCode.INVALID_TOOL_PARAMS
    assert "`user_id`" in result.error.message


def test_literal_becomes_enum() -> None:
    @tool
    def paint(colour: Literal["red", "blue"]) -> str:
        """Paint it."""
        return colour

    assert paint.declaration().parameters["properties"]["colour"]["enum"] == ["red", "blue"]
    assert paint.defer is True  # user tools are deferred unless asked otherwise


async def test_sync_handlers_run_off_the_event_loop() -> None:
    loop_thread = threading.get_ident()

    @tool
    def where() -> str:
        """Report the thread."""
        return str(threading.get_ident())

    result = await run(where, {})
    assert result.text != str(loop_thread)


async def test_async_handler_and_context_injection(tmp_path: object) -> None:
    @tool
    async def cwd_of(ctx: ToolContext, suffix: str = "") -> str:
        """Tell the working directory."""
        await asyncio.sleep(0)
        return f"{ctx.cwd}{suffix}"

    assert "ctx" not in cwd_of.declaration().parameters["properties"]
    result = await run(cwd_of, {"suffix": "!"}, ToolContext(cwd=tmp_path))  # type: ignore[arg-type]
    assert result.text == f"{tmp_path}!"


async def test_return_values_become_parts() -> None:
    png = ImagePart(b"\x89PNG...", "image/png")

    @tool
    def picture() -> list[object]:
        """Return a picture."""
        return [TextPart("caption"), png]

    result = await run(picture, {})
    assert result.parts == [TextPart("caption"), png]


async def test_raw_schema_tool() -> None:
    seen = {}

    def handler(**kwargs: object) -> str:
        seen.update(kwargs)
        return "ok"

    t = FunctionTool(handler, name="raw", description="Raw schema tool.",
                     parameters={"type": "object", "properties": {"n": {"type": "integer"}},
                                 "required": ["n"]})
    assert (await run(t, {"n": "4"})).text == "ok"
    assert seen == {"n": 4}
    bad = await run(t, {"m": 1})
    assert bad.error is not None and "`m`" in bad.error.message and "`n` is required" in bad.error.message


def test_invocation_defaults_fail_closed() -> None:
    t = FunctionTool(lambda: "x", name="writer", description="Writes.",
                     parameters={"type": "object", "properties": {}})
    built = t.build({})
    assert isinstance(built, ToolInvocation)
    assert built.default_permission().value == "ask"
    assert built.tier().name == "EXEC"
    assert built.classifier_input() == ""
    assert t.concurrency_safe is False and t.read_only is False


@pytest.mark.parametrize(("kind", "read_only", "parallel"), [
    (Kind.READ, True, True), (Kind.SEARCH, True, True), (Kind.FETCH, True, True),
    (Kind.READ, False, False),   # a reading kind that writes something too: one at a time
    (Kind.OTHER, True, False),   # changes nothing, but its kind does not say it only looks
    (Kind.THINK, True, False),
])
def test_concurrency_safety_is_derived_from_kind_and_read_only(kind: Kind, read_only: bool,
                                                               parallel: bool) -> None:
    t = FunctionTool(lambda: None, name="t", description="T.", kind=kind, read_only=read_only)
    assert t.concurrency_safe is parallel and t.problems() == []


def test_a_read_only_tool_of_a_kind_that_changes_things_is_refused() -> None:
    for kind in (Kind.EDIT, Kind.DELETE, Kind.MOVE, Kind.EXECUTE):
        t = FunctionTool(lambda: None, name="t", description="T.", kind=kind, read_only=True)
        assert t.problems() == [f"kind {kind.value!r} changes things, so it cannot be read-only"]


def test_varargs_cannot_become_parameters() -> None:
    def spread(*args: int) -> None:
        """Nope."""

    with pytest.raises(TypeError, match=r"\*args"):
        FunctionTool(spread)


class _Service:
    """A session service for the test below."""


def test_a_session_service_is_made_once_whichever_thread_asks_first() -> None:
    from agent_ext.core import ToolContext

    ctx = ToolContext()
    made: list[_Service] = []

    def factory() -> _Service:
        made.append(_Service())
        return made[-1]

    got: list[_Service] = []
    threads = [threading.Thread(target=lambda: got.append(ctx.service_or_create(_Service, factory)))
               for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert len(made) == 1 and got == made * 8
    ctx.services[_Service] = "not a _Service"
    assert isinstance(ctx.service_or_create(_Service, factory), _Service) and len(made) == 2

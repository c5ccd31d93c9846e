"""Argument validation: coercions models need, and every malformed shape named in the error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import Field

from agent_ext import Agent
from agent_ext.core import (
    ErrorCode,
    ExecControl,
    Params,
    Tool,
    ToolContext,
    ToolInvocation,
    ToolResult,
)
from agent_ext.core.params import (
    ParamsError,
    argument_problem,
    parse_arguments,
    schema_for,
    validate_json_schema,
)
from agent_ext.models import ScriptedModel


class Opts(Params):
    depth: int = 1
    label: str = "x"


class EditParams(Params):
    file_path: str = Field(description="Path of the file.")
    count: int = 1
    replace_all: bool = False
    options: Opts | None = None
    tags: list[str] = Field(default_factory=list)


class _Inv(ToolInvocation[EditParams]):
    async def execute(self, control: ExecControl) -> ToolResult:
        return ToolResult(llm_content=self.params.model_dump_json())


class EditLike(Tool[EditParams]):
    name = "edit_like"
    description = "An edit-shaped tool for tests."
    params_model = EditParams
    max_string_chars = 1000

    def invocation(self, params: EditParams, ctx: ToolContext) -> ToolInvocation[EditParams]:
        return _Inv(self, params, ctx)


def build(args: Any) -> ToolInvocation[EditParams] | ToolResult:
    return EditLike().build(args)


def params_of(args: Any) -> EditParams:
    built = build(args)
    assert isinstance(built, ToolInvocation), built
    return built.params


def error_of(args: Any) -> str:
    built = build(args)
    assert isinstance(built, ToolResult), built
    assert built.error is not None
    assert built.error.code == ErrorCode.INVALID_TOOL_PARAMS
    return built.error.message


def test_models_coercions_are_accepted() -> None:
    p = params_of({"file_path": "a.py", "count": "5", "replace_all": "true",
                   "options": '{"depth": "2"}', "tags": '["a", "b"]'})
    assert (p.count, p.replace_all, p.options, p.tags) == (5, True, Opts(depth=2), ["a", "b"])


def test_whole_arguments_as_json_string_and_double_encoded() -> None:
    assert params_of('{"file_path": "a.py"}').file_path == "a.py"
    assert params_of('"{\\"file_path\\": \\"b.py\\"}"').file_path == "b.py"


def test_number_where_string_expected_is_coerced() -> None:
    assert params_of({"file_path": 12}).file_path == "12"


def test_null_for_optional_means_default() -> None:
    p = params_of({"file_path": "a.py", "count": None, "replace_all": None, "options": None})
    assert (p.count, p.replace_all, p.options) == (1, False, None)


@pytest.mark.parametrize(
    ("args", "field", "fragment"),
    [
        ({}, "file_path", "is required"),
        ({"file_path": None}, "file_path", ""),
        ({"file_path": "a", "count": "many"}, "count", "integer"),
        ({"file_path": "a", "count": [1]}, "count", "integer"),
        ({"file_path": "a", "replace_all": "perhaps"}, "replace_all", "bool"),
        ({"file_path": "a", "colour": "red"}, "colour", "not a parameter"),
        ({"file_path": "a", "options": {"depth": 1, "bogus": 2}}, "options.bogus", "not a parameter"),
        ({"file_path": "a", "options": "{not json"}, "options", ""),
        ({"file_path": "a" * 1001}, "file_path", "too long"),
        ({"file_path": {"nested": 1}}, "file_path", "string"),
        ({"file_path": "a", "tags": "not-a-list"}, "tags", "list"),
    ],
)
def test_malformed_arguments_name_the_field(args: dict[str, Any], field: str, fragment: str) -> None:
    message = error_of(args)
    assert f"`{field}`" in message
    assert fragment in message
    assert message.startswith("invalid parameters for edit_like:")


@pytest.mark.parametrize("args", ["[1, 2]", "not json", "42", 3.5, ["file_path"]])
def test_arguments_that_are_not_an_object(args: Any) -> None:
    message = error_of(args)
    assert "JSON object" in message


def test_several_problems_are_reported_at_once() -> None:
    message = error_of({"count": "x", "extra": 1})
    assert "`file_path`" in message and "`count`" in message and "`extra`" in message


def test_empty_argument_text_is_an_empty_object() -> None:
    assert parse_arguments("  ") == {}
    assert parse_arguments(None) == {}


def test_schema_has_no_titles_or_refs_and_is_closed() -> None:
    schema = schema_for(EditParams)
    text = repr(schema)
    assert "title" not in text and "$ref" not in text and "$defs" not in text
    assert schema["additionalProperties"] is False
    assert schema["properties"]["options"]["properties"]["depth"]["type"] == "integer"
    assert schema["properties"]["options"]["additionalProperties"] is False
    assert schema["required"] == ["file_path"]
    assert schema["properties"]["file_path"]["description"] == "Path of the file."


RAW = {
    "type": "object",
    "properties": {
        "repo": {"type": "string"},
        "limit": {"type": "integer"},
        "draft": {"type": "boolean"},
        "labels": {"type": "array", "items": {"type": "string"}},
        "ratio": {"type": "number"},
    },
    "required": ["repo"],
}


def test_raw_schema_coercions() -> None:
    out = validate_json_schema(RAW, {"repo": 5, "limit": "3", "draft": "false",
                                     "labels": '["x"]', "ratio": "0.5"})
    assert out == {"repo": "5", "limit": 3, "draft": False, "labels": ["x"], "ratio": 0.5}


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ({}, "`repo` is required"),
        ({"repo": "a", "other": 1}, "`other` is not a parameter"),
        ({"repo": "a", "limit": "lots"}, "`limit`"),
        ({"repo": "a", "labels": [1]}, "`labels.0`"),
        ({"repo": "x" * 50}, "`repo` is too long"),
        ({"repo": None}, "`repo`"),
    ],
)
def test_raw_schema_errors_name_the_field(args: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ParamsError) as info:
        validate_json_schema(RAW, args, max_string_chars=20)
    assert fragment in str(info.value)


def test_raw_schema_open_objects_keep_extra_keys() -> None:
    schema = {**RAW, "additionalProperties": True}
    assert validate_json_schema(schema, {"repo": "a", "x": 1})["x"] == 1


def test_a_failing_tool_check_never_raises() -> None:
    class Broken(EditLike):
        def check(self, params: EditParams, ctx: ToolContext) -> str | None:
            raise RuntimeError("boom")

    built = Broken().build({"file_path": "a"})
    assert isinstance(built, ToolResult)
    assert built.error is not None and built.error.code == ErrorCode.EXECUTION_FAILED
    assert "boom" in built.error.message


async def test_deep_or_huge_arguments_are_an_error_result_not_a_crash(tmp_path: Path) -> None:
    agent = Agent(ScriptedModel([]), cwd=tmp_path, plugins=False, mcp=False)
    deep: dict[str, Any] = {"file_path": "x"}
    inner = deep
    for _ in range(5_000):
        inner["x"] = {}
        inner = inner["x"]
    as_text = '{"file_path": "x", "a": ' + "[" * 100_000 + "]" * 100_000 + "}"
    huge = {"file_path": "x", "a": list(range(200_000))}
    try:
        for args in (deep, as_text, huge, json.dumps({"file_path": "x", "a": [[[[1]]]] * 30_000})):
            result = await agent.call_tool("read_file", args)
            assert result.error is not None and result.error.code == "invalid_tool_params"
            assert "nest deeper" in result.text or "more than" in result.text
    finally:
        await agent.aclose()


def test_argument_problem_is_iterative() -> None:
    assert argument_problem({"a": [1, {"b": 2}]}) is None
    nested: list[Any] = []
    for _ in range(100_000):
        nested = [nested]
    assert "nest deeper" in (argument_problem(nested) or "")


def test_arguments_too_long_in_all_are_refused() -> None:
    from agent_ext.core.params import MAX_ARGUMENT_CHARS, MAX_STRING_CHARS
    assert argument_problem({"content": "z" * MAX_STRING_CHARS}) is None
    half = "z" * (MAX_ARGUMENT_CHARS // 2 + 1)
    problem = argument_problem({"a": half, "b": [half]})
    assert problem is not None and "characters" in problem and "in a file" in problem


def test_oversized_json_text_is_refused_before_it_is_decoded(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_ext.core.params import MAX_ARGUMENT_CHARS

    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("decoded")

    text = json.dumps({"content": "z" * MAX_ARGUMENT_CHARS})
    monkeypatch.setattr(json, "loads", refuse)
    with pytest.raises(ParamsError, match="characters"):
        parse_arguments(text)


def test_a_huge_list_is_refused_without_walking_it() -> None:
    problem = argument_problem({"a": list(range(5_000_000))})
    assert problem is not None and "100,000 values" in problem

"""Tools from plain Python: a typed function, or a JSON schema plus a handler.

``@agent_ext.tool`` turns a function into a ``FunctionTool``: the signature becomes the schema
(through pydantic), the docstring's first paragraph the description and its ``Args:`` section
the parameter descriptions. A parameter annotated ``ToolContext`` receives the session context
and is not shown to the model. Sync handlers run in a worker thread.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, get_type_hints, overload

from pydantic import Field, create_model

from .kinds import Kind
from .params import Params, validate_json_schema, validate_model
from .result import ImagePart, Part, TextPart, ToolResult
from .tool import ExecControl, Tool, ToolContext, ToolInvocation, TruncateKeep

Handler = Callable[..., Any]


class FunctionTool(Tool[dict[str, Any]]):
    """A tool made from a function (typed signature) or from a raw JSON schema and a handler."""

    def __init__(
        self,
        handler: Handler,
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: Mapping[str, Any] | None = None,
        kind: Kind = Kind.OTHER,
        read_only: bool = False,
        defer: bool = True,
        search_hint: str = "",
        server: str | None = None,
        max_output_chars: float | None = None,
        truncate_keep: TruncateKeep = "both",
    ) -> None:
        self.handler = handler
        self.name = name or str(getattr(handler, "__name__", ""))
        summary, arg_docs = _parse_docstring(inspect.getdoc(handler) or "")
        self.description = description or summary
        self.kind = kind
        self.read_only = read_only
        self.defer = defer
        self.search_hint = search_hint
        self.server = server
        self.max_output_chars = max_output_chars
        self.truncate_keep = truncate_keep
        self._ctx_param = _context_parameter(handler)
        self._schema = dict(parameters) if parameters is not None else None
        self.params_model = None if parameters is not None else _model_from_signature(
            handler, self._ctx_param, arg_docs)

    def parameters_schema(self) -> dict[str, Any]:
        if self._schema is not None:
            return self._schema
        return super().parameters_schema()

    def validate_params(self, raw: dict[str, Any]) -> dict[str, Any]:
        if self._schema is not None:
            return validate_json_schema(self._schema, raw, max_string_chars=self.max_string_chars)
        self._check_lengths(raw)
        assert self.params_model is not None
        validated = validate_model(self.params_model, raw)
        return {k: getattr(validated, k) for k in type(validated).model_fields}

    def invocation(self, params: dict[str, Any],
                   ctx: ToolContext) -> ToolInvocation[dict[str, Any]]:
        return _FunctionInvocation(self, params, ctx)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Still callable as the plain function it wraps."""
        return self.handler(*args, **kwargs)


class _FunctionInvocation(ToolInvocation[dict[str, Any]]):
    tool: FunctionTool

    def description(self) -> str:
        args = ", ".join(f"{k}={_short(v)}" for k, v in self.params.items())
        return f"{self.tool.name}({args})"

    async def execute(self, control: ExecControl) -> ToolResult:
        kwargs = dict(self.params)
        if self.tool._ctx_param is not None:
            kwargs[self.tool._ctx_param] = self.ctx
        handler = self.tool.handler
        if inspect.iscoroutinefunction(handler):
            value = await handler(**kwargs)
        else:
            value = await asyncio.to_thread(handler, **kwargs)
            if inspect.isawaitable(value):
                value = await _await(value)
        return to_result(value)


async def _await(value: Awaitable[Any]) -> Any:
    return await value


def to_result(value: Any) -> ToolResult:
    """A handler's return value as a result: text, parts, images, or JSON for data."""
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, str):
        return ToolResult(llm_content=value, display=value)
    if isinstance(value, (TextPart, ImagePart)):
        return ToolResult(llm_content=[value])
    if isinstance(value, list) and value and all(isinstance(v, Part) for v in value):
        parts: list[Part] = list(value)
        return ToolResult(llm_content=parts)
    if value is None:
        return ToolResult(llm_content="")
    try:
        text = json.dumps(value, ensure_ascii=False, default=str, indent=1)
    except (TypeError, ValueError):
        text = repr(value)
    return ToolResult(llm_content=text, display=text)


@overload
def tool(fn: Handler, /) -> FunctionTool: ...
@overload
def tool(*, name: str | None = None, description: str | None = None, kind: Kind = Kind.OTHER,
         read_only: bool = False, defer: bool = True, search_hint: str = "",
         max_output_chars: float | None = None) -> Callable[[Handler], FunctionTool]: ...


def tool(fn: Handler | None = None, /,
         **options: Any) -> FunctionTool | Callable[[Handler], FunctionTool]:
    """Make a tool of a typed Python function: ``@tool`` or ``@tool(defer=False, ...)``."""
    if fn is not None:
        return FunctionTool(fn, **options)

    def wrap(f: Handler) -> FunctionTool:
        return FunctionTool(f, **options)

    return wrap


def _context_parameter(fn: Handler) -> str | None:
    try:
        hints = get_type_hints(fn)
    except (NameError, TypeError):
        return None
    return next((n for n, h in hints.items() if h is ToolContext), None)


def _model_from_signature(fn: Handler, skip: str | None, docs: dict[str, str]) -> type[Params]:
    sig = inspect.signature(fn)
    try:
        hints = get_type_hints(fn)
    except (NameError, TypeError) as exc:
        raise TypeError(f"cannot read the type hints of {fn!r}: {exc}") from None
    fields: dict[str, Any] = {}
    for pname, param in sig.parameters.items():
        if pname == skip:
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"{fn.__name__}: *args/**kwargs cannot become tool parameters")
        annotation = hints.get(pname, Any)
        default = ... if param.default is param.empty else param.default
        fields[pname] = (annotation, Field(default, description=docs.get(pname)))
    model: type[Params] = create_model(
        f"{fn.__name__}_params", __base__=Params, **fields)
    return model


_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters)\s*:\s*$", re.IGNORECASE)
_ARG_LINE = re.compile(r"^\s*(\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The description (text outside an ``Args:`` section) and per-argument descriptions."""
    summary: list[str] = []
    args: dict[str, str] = {}
    current: str | None = None
    indent: int | None = None  # the indentation of argument lines in the section
    in_args = False
    for line in doc.splitlines():
        if _ARGS_HEADER.match(line):
            in_args, current, indent = True, None, None
            continue
        depth = len(line) - len(line.lstrip())
        if in_args and line.strip() and depth == 0:
            in_args = False
        if not in_args:
            summary.append(line)
            continue
        m = _ARG_LINE.match(line)
        if m and (indent is None or depth == indent):
            indent, current = depth, m.group(1)
            args[current] = m.group(3).strip()
        elif current and line.strip():
            args[current] += " " + line.strip()
    return "\n".join(summary).strip(), args


def _short(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."

"""The tool abstraction: a definition the model sees, validated into an invocation that runs.

A ``Tool`` is what the model is told about (name, description, JSON schema) plus how to turn
arguments into a ``ToolInvocation``. ``build()`` validates first and never raises: bad arguments
come back as an ``invalid_tool_params`` result the model can act on. A built invocation is
trusted; it tells the permission layer what it touches and runs with ``execute()``.

Four things classify a tool and its calls, each saying something the others do not: ``kind`` is
what the tool does (the UI shows it); ``read_only`` says it changes nothing outside the
conversation, so its calls are allowed unasked; an invocation's ``tier()`` is how much that one
call can do (a shell call that only lists files is the read tier); and concurrency safety is not
declared but derived: a read-only tool of a kind that only looks (``CONCURRENCY_SAFE_KINDS``)
runs side by side with others. Defaults fail closed: a tool is not read-only unless it says so,
and an invocation asks for permission and counts as the exec tier unless it says otherwise.
"""

from __future__ import annotations

import abc
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, TypeVar, cast

from .errors import ErrorCode
from .kinds import CONCURRENCY_SAFE_KINDS, MUTATOR_KINDS, Kind, Permission, Tier
from .params import (
    MAX_STRING_CHARS,
    Params,
    ParamsError,
    parse_arguments,
    schema_for,
    validate_model,
)
from .result import ToolResult

if TYPE_CHECKING:
    from .registry import Registry

P = TypeVar("P")
T = TypeVar("T")
TruncateKeep = Literal["head", "tail", "both"]


@dataclass(frozen=True)
class ToolDeclaration:
    """Exactly what the model is sent for one tool."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    #: What the compact profile sends instead of the description's first sentence ("": that).
    compact_description: str = field(default="", compare=False)
    #: Parameter descriptions the compact profile keeps, by name, as the compact text of each.
    compact_params: Mapping[str, str] = field(default_factory=dict, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description,
                "parameters": dict(self.parameters)}


#: Guards the first creation of a session service (tools may run on worker threads).
_SERVICES_LOCK = threading.Lock()


@dataclass
class ToolContext:
    """The session a call belongs to: working directory, registry, and upper layers' services.

    Services are keyed by their type so that ``core`` needs to know none of them
    (``ctx.service(ReadCache)``).
    """

    cwd: Path = field(default_factory=Path.cwd)
    registry: Registry | None = None
    services: dict[type, object] = field(default_factory=dict)

    def service(self, kind: type[T]) -> T | None:
        found = self.services.get(kind)
        return cast("T", found) if found is not None else None

    def service_or_create(self, kind: type[T], factory: Callable[[], T]) -> T:
        """The session's ``kind`` service, made by ``factory`` on first use (once, whichever
        thread asks first)."""
        found = self.services.get(kind)
        if isinstance(found, kind):
            return found
        with _SERVICES_LOCK:
            found = self.services.get(kind)
            if not isinstance(found, kind):
                found = self.services[kind] = factory()
            return found

    def resolve(self, path: str | Path) -> Path:
        """An absolute path: ``~`` expanded, relative paths taken from ``cwd``, ``..`` folded."""
        p = Path(path).expanduser()
        if not p.is_absolute():
            p = self.cwd / p
        return Path(_normpath(str(p)))


def _normpath(path: str) -> str:
    import os.path  # noqa: PLC0415  (kept local: the only os.path use in core)

    return os.path.normpath(path)


@dataclass
class ExecControl:
    """What a running call may use: a cancellation flag and a live-output callback."""

    cancelled: threading.Event = field(default_factory=threading.Event)
    on_output: Callable[[str], None] | None = None
    #: The model's id for this call (edit history and spill files name it).
    call_id: str = ""

    def emit(self, text: str) -> None:
        if self.on_output is not None:
            self.on_output(text)


@dataclass
class ConfirmationDetails:
    """What an approver is shown before a call runs.

    ``kind`` is one of ``edit`` (file or cell change: ``diff``, ``original``, ``proposed``),
    ``exec`` (``command``), ``mcp`` or ``info``. ``proposed`` is what edit-then-approve lets the
    user change.
    """

    kind: Literal["edit", "exec", "mcp", "info"]
    title: str
    summary: str
    tool_name: str = ""
    file_path: str | None = None
    diff: str | None = None
    original: str | None = None
    proposed: str | None = None
    command: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class ToolInvocation(Generic[P]):
    """A validated call, ready for permission checks and execution."""

    def __init__(self, tool: Tool[P], params: P, ctx: ToolContext) -> None:
        self.tool = tool
        self.params = params
        self.ctx = ctx

    def description(self) -> str:
        """One line for transcripts and approval prompts."""
        return self.tool.name

    def locations(self) -> list[Path]:
        """Resolved absolute paths this call touches (what path rules match on)."""
        return []

    def command(self) -> str | None:
        """The shell command this call runs (what ``Bash(...)`` rules match on), if any."""
        return None

    def url(self) -> str | None:
        """The URL this call fetches (what ``WebFetch(domain:...)`` rules match on), if any."""
        return None

    def default_permission(self) -> Permission:
        return Permission.ALLOW if self.tool.read_only else Permission.ASK

    def tier(self) -> Tier:
        return Tier.READ if self.tool.read_only else Tier.EXEC

    async def confirmation_details(self) -> ConfirmationDetails:
        return ConfirmationDetails(kind="info", title=f"Allow {self.tool.name}?",
                                   summary=self.description(), tool_name=self.tool.name)

    def classifier_input(self) -> str:
        """What an auto-mode classifier sees of this call; empty means "nothing to judge"."""
        return ""

    async def preflight(self) -> ToolResult | None:
        """A result that makes asking pointless (the call would fail), or None to go on.

        Runs after a deny decision and before an approval prompt, so the user is never asked
        about an edit that cannot land.
        """
        return None

    def with_modification(self, proposed: str) -> ToolInvocation[P] | None:
        """The call with the user's edited proposal applied, or None if it cannot take edits."""
        return None

    @abc.abstractmethod
    async def execute(self, control: ExecControl) -> ToolResult:
        """Run the call. Exceptions are turned into error results by the caller."""


class Tool(abc.ABC, Generic[P]):
    """A tool definition. Subclasses set the class attributes and implement ``invocation``.

    With ``params_model`` (a ``Params`` subclass) the schema and validation come from pydantic;
    otherwise override ``parameters_schema`` and ``validate_params``.
    """

    name: str = ""
    description: str = ""
    kind: Kind = Kind.OTHER
    params_model: type[Params] | None = None
    #: Calls change nothing outside the conversation: allowed unasked, at the read tier.
    read_only: bool = False
    #: Deferred tools are left out of the declarations until revealed by tool_search.
    defer: bool = False
    #: Never deferred, even when registered with ``defer=True`` (tool_search itself).
    always_load: bool = False
    #: Extra words tool_search matches on (weighted between name and description).
    search_hint: str = ""
    #: The MCP server (or plugin) an external tool comes from; None for built-ins.
    server: str | None = None
    #: Per-result output budget; None uses the global one, ``float("inf")`` means self-managed.
    max_output_chars: float | None = None
    truncate_keep: TruncateKeep = "both"
    max_string_chars: int = MAX_STRING_CHARS
    #: The compact profile's description (small context windows, small models): what such a
    #: model most needs to call the tool right; "" sends the description's first sentence.
    compact_description: str = ""
    #: Parameter descriptions the compact profile sends (by name); all others are dropped.
    compact_params: ClassVar[Mapping[str, str]] = {}

    @property
    def concurrency_safe(self) -> bool:
        """Whether calls may run side by side: a read-only tool whose kind only looks."""
        return self.read_only and self.kind in CONCURRENCY_SAFE_KINDS

    def parameters_schema(self) -> dict[str, Any]:
        if self.params_model is None:
            raise NotImplementedError(f"{type(self).__name__} needs params_model or its own schema")
        return schema_for(self.params_model)

    def declaration(self) -> ToolDeclaration:
        return ToolDeclaration(self.name, self.description, self.parameters_schema(),
                               self.compact_description, dict(self.compact_params))

    def validate_params(self, raw: dict[str, Any]) -> P:
        if self.params_model is None:
            raise NotImplementedError(
                f"{type(self).__name__} needs params_model or its own validation")
        self._check_lengths(raw)
        return cast("P", validate_model(self.params_model, raw))

    def _check_lengths(self, raw: Mapping[str, Any]) -> None:
        long = [k for k, v in raw.items() if isinstance(v, str) and len(v) > self.max_string_chars]
        if long:
            raise ParamsError("; ".join(
                f"`{k}` is too long ({len(raw[k])} characters, at most {self.max_string_chars})"
                for k in long))

    def check(self, params: P, ctx: ToolContext) -> str | None:
        """The tool's own checks after schema validation; return a reason to refuse, or None."""
        return None

    @abc.abstractmethod
    def invocation(self, params: P, ctx: ToolContext) -> ToolInvocation[P]:
        """Bind validated parameters into an invocation."""

    def build(self, args: Mapping[str, Any] | str | None,
              ctx: ToolContext | None = None) -> ToolInvocation[P] | ToolResult:
        """Validate ``args``; an invocation, or an ``invalid_tool_params`` error result."""
        ctx = ctx if ctx is not None else ToolContext()
        try:
            params = self.validate_params(parse_arguments(args))
            problem = self.check(params, ctx)
            if problem:
                return self._invalid(problem)
            return self.invocation(params, ctx)
        except ParamsError as exc:
            return self._invalid(str(exc))
        except Exception as exc:  # noqa: BLE001  a tool's own check must not crash the loop
            return ToolResult.fail(ErrorCode.EXECUTION_FAILED,
                                   f"{self.name}: could not prepare the call: "
                                   f"{type(exc).__name__}: {exc}")

    def _invalid(self, reason: str) -> ToolResult:
        return ToolResult.fail(ErrorCode.INVALID_TOOL_PARAMS,
                               f"invalid parameters for {self.name}: {reason}")

    def problems(self) -> list[str]:
        """Everything wrong with this definition (empty when it can be registered)."""
        found = []
        if not self.name:
            found.append("it has no name")
        if not self.description:
            found.append("it has no description")
        if self.read_only and self.kind in MUTATOR_KINDS:
            found.append(f"kind {self.kind.value!r} changes things, so it cannot be read-only")
        try:
            schema = self.parameters_schema()
        except Exception as exc:  # noqa: BLE001  reported with the others, not raised alone
            found.append(f"its parameter schema failed: {exc}")
        else:
            if schema.get("type") != "object":
                found.append("its parameter schema must be a JSON object schema")
        return found

"""The tool framework: tools, invocations, results, the registry and output budgets.

Nothing here imports the rest of agent_ext, Jupyter or IPython.
"""

from .errors import (
    AgentExtError,
    ErrorCode,
    ToolLoadError,
    ToolRegistrationError,
    UnknownToolError,
)
from .function_tool import FunctionTool, tool
from .kinds import CONCURRENCY_SAFE_KINDS, MUTATOR_KINDS, Kind, Permission, Tier
from .params import Params, ParamsError
from .registry import Registry
from .result import ImagePart, Part, RememberedCall, TextPart, ToolError, ToolRefusal, ToolResult
from .tool import (
    ConfirmationDetails,
    ExecControl,
    Tool,
    ToolContext,
    ToolDeclaration,
    ToolInvocation,
)

__all__ = [
    "CONCURRENCY_SAFE_KINDS",
    "MUTATOR_KINDS",
    "AgentExtError",
    "ConfirmationDetails",
    "ErrorCode",
    "ExecControl",
    "FunctionTool",
    "ImagePart",
    "Kind",
    "Params",
    "ParamsError",
    "Part",
    "Permission",
    "Registry",
    "RememberedCall",
    "TextPart",
    "Tier",
    "Tool",
    "ToolContext",
    "ToolDeclaration",
    "ToolError",
    "ToolInvocation",
    "ToolLoadError",
    "ToolRefusal",
    "ToolRegistrationError",
    "ToolResult",
    "UnknownToolError",
    "tool",
]

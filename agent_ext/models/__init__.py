"""Model layer: provider-neutral types, and the scripted model tests and the demo use."""

from .scripted import ScriptedModel, ScriptExhaustedError, call
from .types import Message, ModelRequest, ModelResponse, ToolCall, ToolReturn, Usage

__all__ = [
    "Message",
    "ModelRequest",
    "ModelResponse",
    "ScriptExhaustedError",
    "ScriptedModel",
    "ToolCall",
    "ToolReturn",
    "Usage",
    "call",
]

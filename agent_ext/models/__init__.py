"""Model layer: provider-neutral types, the adapters' protocol, the scripted and demo models.

The provider adapters (``openai_chat``, ``anthropic_messages``) are imported only when chosen.
"""

from .base import Model, ModelError
from .config import ResolvedModel, resolve_model
from .demo import DemoModel
from .scripted import ScriptedModel, ScriptExhaustedError, call
from .types import Message, ModelRequest, ModelResponse, ToolCall, ToolReturn, Usage

__all__ = [
    "DemoModel",
    "Message",
    "Model",
    "ModelError",
    "ModelRequest",
    "ModelResponse",
    "ResolvedModel",
    "ScriptExhaustedError",
    "ScriptedModel",
    "ToolCall",
    "ToolReturn",
    "Usage",
    "call",
    "resolve_model",
]

"""The output budget: no tool result floods the model's context.

Every result passes ``OutputBudget.apply`` when its call finishes (persistence gate for huge
outputs, the tool's own truncation, a 2x safety pass) and every model turn passes
``OutputBudget.apply_batch`` (image budget and a water-filled character budget across the
turn's results). Whatever is cut is saved in a private session folder (``SpillStore``) that the
model can page through with read_file.
"""

from __future__ import annotations

from .config import (
    BATCH_CUT_PREFIX,
    DIGEST_LABEL,
    OUTPUT_TOO_LARGE_PREFIX,
    PERSISTED_CLOSE_TAG,
    PERSISTED_OPEN_TAG,
    TRUNCATED_PREFIX,
    TRUNCATION_MARKER,
    BudgetConfig,
)
from .output import BatchItem, OutputBudget
from .store import SpillError, SpillRecord, SpillStore, normalize_call_id
from .text import SEPARATOR, is_already_truncated, truncate_text, water_fill

__all__ = [
    "BATCH_CUT_PREFIX",
    "DIGEST_LABEL",
    "OUTPUT_TOO_LARGE_PREFIX",
    "PERSISTED_CLOSE_TAG",
    "PERSISTED_OPEN_TAG",
    "SEPARATOR",
    "TRUNCATED_PREFIX",
    "TRUNCATION_MARKER",
    "BatchItem",
    "BudgetConfig",
    "OutputBudget",
    "SpillError",
    "SpillRecord",
    "SpillStore",
    "is_already_truncated",
    "normalize_call_id",
    "truncate_text",
    "water_fill",
]

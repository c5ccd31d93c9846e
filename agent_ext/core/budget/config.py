"""Limits and fixed markers shared by the output-budget layer."""

from __future__ import annotations

from dataclasses import dataclass

#: Every spill wrapper starts with this, so content that already carries it is not cut again.
TRUNCATED_PREFIX = "Tool output was too large and has been truncated"
#: Marks where a head/tail split removed content.
TRUNCATION_MARKER = "... [CONTENT TRUNCATED] ..."
PERSISTED_OPEN_TAG = "<persisted-output>"
PERSISTED_CLOSE_TAG = "</persisted-output>"
#: Starts a persisted stub (inside the envelope, or alone when nothing could be saved).
OUTPUT_TOO_LARGE_PREFIX = "Output too large ("
DIGEST_LABEL = "Full output sha256: "
#: Starts the preview a batch-budget cut leaves behind.
BATCH_CUT_PREFIX = "Tool output truncated to fit this turn's output budget."

MB = 2**20


@dataclass(frozen=True)
class BudgetConfig:
    """Character, line, file and image limits for tool results.

    ``threshold_chars`` and ``line_cap`` bound one result; ``batch_chars`` bounds all results of one
    model turn (0 or less disables it). The persistence gate fires above ``threshold_chars +
    gate_headroom``; the headroom is wider than a stub so a stub never triggers the gate again.
    """

    threshold_chars: int = 25_000
    line_cap: int = 1_000
    batch_chars: int = 200_000
    preview_chars: int = 2_000
    gate_headroom: int = 3_000
    max_spill_bytes: int = 50 * MB
    session_spill_bytes: int = 500 * MB
    max_images_per_result: int = 4
    max_image_bytes_per_result: int = 5 * MB
    max_images_per_batch: int = 8
    max_image_bytes_per_batch: int = 10 * MB
    #: Tools that page or cap their own output; spilling them first would hide the body.
    #: Tools that bound their own output (read_file pages, web_fetch has max_chars).
    gate_exempt_tools: frozenset[str] = frozenset({"read_file", "read_mcp_resource",
                                                   "web_fetch"})
    #: How far past its budget a result may grow (e.g. by appended context) before it is cut again.
    combined_pass_factor: int = 2

    @property
    def gate_chars(self) -> int:
        """Above this many characters a result is persisted before any other truncation."""
        return self.threshold_chars + self.gate_headroom

"""The budget the scheduler applies to each tool result, and to all results of one model turn."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from agent_ext.core.result import ImagePart, Part, TextPart, ToolResult

from .config import TRUNCATED_PREFIX, BudgetConfig
from .store import SpillError, SpillRecord, SpillStore
from .text import (
    artifact_path,
    encode,
    fit_preview,
    format_bytes,
    is_already_truncated,
    persisted_stub,
    sha256_hex,
    spill_wrapper,
    truncate_text,
    unpersisted_reason,
    unsaved_note,
    water_fill,
)

if TYPE_CHECKING:
    from agent_ext.core.tool import TruncateKeep

BatchItem = tuple[str, str, ToolResult]


@dataclass(frozen=True)
class _Limits:
    chars: int
    lines: int | None


class OutputBudget:
    """Bounds what tool results put into the model's context; full outputs go to ``store``.

    ``apply`` runs per result as soon as a call finishes; ``apply_batch`` runs once per model turn
    over all its results. Inputs are never changed: a result that needs no change is returned as
    is, otherwise a copy with ``truncated=True`` where text was cut. Nothing here raises for a
    budget problem: a failure to save keeps a bounded preview with a note instead.
    """

    def __init__(self, store: SpillStore, config: BudgetConfig | None = None) -> None:
        self.store = store
        self.config = config if config is not None else store.config

    # -- per result ------------------------------------------------------------------------

    def apply(self, result: ToolResult, *, tool_name: str, max_output_chars: float | None = None,
              truncate_keep: TruncateKeep = "both", call_id: str | None = None) -> ToolResult:
        """Bound one result: persistence gate, per-tool truncation, then the combined 2x pass.

        ``max_output_chars`` is the tool's own budget (None: the global threshold and line cap;
        ``inf``: self-managed, never truncated here). ``call_id`` names the persisted file.
        """
        try:
            if result.is_error:
                return self._apply_error(result, tool_name, call_id)
            return self._apply_success(result, tool_name, max_output_chars, truncate_keep, call_id)
        except Exception as exc:  # noqa: BLE001  a budget failure must not turn a success into an error
            return self._fallback(result, exc)

    def combined_pass(self, result: ToolResult, *, tool_name: str,
                      max_output_chars: float | None = None,
                      truncate_keep: TruncateKeep = "both") -> ToolResult:
        """Cut again only if the text grew past twice its budget (e.g. after appended context).

        ``apply`` already ends with this pass; call it again after adding text to a result.
        """
        try:
            text = result.text
            new_text, cut = self._combined(text, tool_name, max_output_chars, truncate_keep)
            if not cut:
                return result
            return _rebuild(result, new_text, _images(result), [], truncated=True)
        except Exception as exc:  # noqa: BLE001  see apply
            return self._fallback(result, exc)

    def _apply_success(self, result: ToolResult, tool_name: str, max_output_chars: float | None,
                       keep: TruncateKeep, call_id: str | None) -> ToolResult:
        cfg = self.config
        images = _images(result)
        text = result.text
        if not text.strip() and not images:
            return replace(result, llm_content=f"({tool_name} completed with no output)")

        new_text, cut, gated = text, False, False
        if (tool_name not in cfg.gate_exempt_tools and not result.truncated
                and cfg.threshold_chars > 0 and len(text) > cfg.gate_chars
                and not is_already_truncated(text)):
            stub = self._persist_stub(call_id, text)
            if stub is not None and len(stub) < len(text):
                new_text, cut, gated = stub, True, True
        if not gated and not result.truncated and not _starts_truncated(result):
            limits = self._limits(max_output_chars, 1)
            if limits is not None:
                new_text, cut = self._truncate(new_text, tool_name, limits, keep)
        new_text, again = self._combined(new_text, tool_name, max_output_chars, keep)
        cut = cut or again

        keep_images, note = _limit_images(
            images, cfg.max_images_per_result, cfg.max_image_bytes_per_result,
            scope="the per-result image budget", count_limit=cfg.max_images_per_result,
            byte_limit=cfg.max_image_bytes_per_result)
        if cut:
            kept = [img for i, img in enumerate(images) if i in keep_images]
            return _rebuild(result, new_text, kept, [note] if note else [], truncated=True)
        if note is not None:
            return _drop_images(result, keep_images, note)
        return result

    def _apply_error(self, result: ToolResult, tool_name: str, call_id: str | None) -> ToolResult:
        """Persist an oversized error message; errors are otherwise passed through whole."""
        text = result.text
        if self.config.threshold_chars <= 0 or len(text) <= self.config.gate_chars:
            return result
        stub = self._persist_stub(call_id, text)
        if stub is None:
            limits = self._limits(None, 1)
            assert limits is not None
            stub, _ = self._truncate(text, tool_name, limits, "both")
        if len(stub) >= len(text):
            return result
        return _rebuild(result, stub, _images(result), [], truncated=True)

    def _fallback(self, result: ToolResult, exc: Exception) -> ToolResult:
        """An in-memory cut when budgeting itself failed unexpectedly; never raises."""
        try:
            text = result.text
            cfg = self.config
            if cfg.threshold_chars <= 0 or len(text) <= cfg.threshold_chars:
                return result
            body, _ = truncate_text(text, max_chars=cfg.threshold_chars, max_lines=cfg.line_cap)
            note = unsaved_note(f"{type(exc).__name__}: {exc}")
            return _rebuild(result, body + note, _images(result), [], truncated=True)
        except Exception:  # noqa: BLE001  the last resort is the untouched result
            return result

    def _limits(self, max_output_chars: float | None, factor: int) -> _Limits | None:
        """The character and line budget for a tool, or None where truncation is disabled."""
        cfg = self.config
        if max_output_chars is None:
            if cfg.threshold_chars <= 0 or cfg.line_cap <= 0:
                return None
            return _Limits(cfg.threshold_chars * factor, cfg.line_cap * factor)
        if math.isnan(max_output_chars) or math.isinf(max_output_chars) or max_output_chars <= 0:
            return None
        # A tool's own budget is in characters only: its line structure is its own business.
        return _Limits(int(max_output_chars) * factor, None)

    def _combined(self, text: str, tool_name: str, max_output_chars: float | None,
                  keep: TruncateKeep) -> tuple[str, bool]:
        limits = self._limits(max_output_chars, self.config.combined_pass_factor)
        if limits is None or len(text) <= limits.chars:
            return text, False
        return self._truncate(text, tool_name, limits, keep)

    def _truncate(self, text: str, tool_name: str, limits: _Limits,
                  keep: TruncateKeep) -> tuple[str, bool]:
        """Cut ``text`` and spill the whole of it; keep the original when that is not shorter."""
        body, cut = truncate_text(text, max_chars=limits.chars, max_lines=limits.lines, keep=keep)
        if not cut:
            return text, False
        record: SpillRecord | None = None
        try:
            record = self.store.spill(tool_name, text)
        except SpillError as exc:
            out = body + unsaved_note(exc.reason)
        else:
            out = spill_wrapper(body, path=record.path, chars=record.chars, size=record.bytes,
                                sha256=record.sha256, keep=keep)
        if len(out) >= len(text):
            if record is not None:
                self.store.discard(record)
            return text, False
        return out, True

    def _persist_stub(self, call_id: str | None, text: str) -> str | None:
        """Persist ``text`` and return its stub; None when the disk write itself failed."""
        preview_chars = self.config.preview_chars
        try:
            record = self.store.persist(call_id or "", text)
        except SpillError as exc:
            if exc.kind == "io":
                return None
            data = encode(text)
            return persisted_stub(text, size=len(data), sha256=sha256_hex(data),
                                  preview_chars=preview_chars,
                                  reason=unpersisted_reason(exc.reason))
        stub = persisted_stub(text, size=record.bytes, sha256=record.sha256,
                              preview_chars=preview_chars, path=record.path)
        if len(stub) >= len(text):
            self.store.discard(record)
        return stub

    # -- per batch -------------------------------------------------------------------------

    def apply_batch(self, items: Sequence[BatchItem]) -> list[ToolResult]:
        """Bound one model turn's results, given as ``(call_id, tool_name, result)`` in order.

        Images beyond the turn's image budget are dropped with a note. When the text of all
        results exceeds ``batch_chars``, each gets a water-fill share; results over their share
        are saved once (largest first, so the session budget goes to the biggest outputs) and
        replaced by a head/tail preview that fits the share and names the saved file. Returns the
        results in the same order.
        """
        cfg = self.config
        results = self._batch_images([r for _, _, r in items])
        if cfg.batch_chars <= 0:
            return results
        texts = [r.text for r in results]
        if sum(map(len, texts)) <= cfg.batch_chars:
            return results
        shares = water_fill([len(t) for t in texts], cfg.batch_chars)
        over = sorted((i for i, t in enumerate(texts) if len(t) > shares[i]),
                      key=lambda i: len(texts[i]), reverse=True)
        for i in over:
            path = artifact_path(texts[i])
            if path is None:
                try:
                    path = str(self.store.persist(items[i][0], texts[i]).path)
                except Exception:  # noqa: BLE001  the preview is still bounded without a file
                    path = None
            fitted = fit_preview(texts[i], shares[i], path)
            results[i] = _rebuild(results[i], fitted, _images(results[i]), [], truncated=True)
        return results

    def _batch_images(self, results: list[ToolResult]) -> list[ToolResult]:
        """Keep images in model order while the turn's image budget lasts; note the rest."""
        cfg = self.config
        count, size = 0, 0
        out: list[ToolResult] = []
        for result in results:
            images = _images(result)
            keep, note = _limit_images(
                images, cfg.max_images_per_batch - count, cfg.max_image_bytes_per_batch - size,
                scope="this turn's image budget", count_limit=cfg.max_images_per_batch,
                byte_limit=cfg.max_image_bytes_per_batch)
            count += len(keep)
            size += sum(len(images[i].data) for i in keep)
            out.append(result if note is None else _drop_images(result, keep, note))
        return out


def _limit_images(images: list[ImagePart], max_count: int, max_bytes: int, *, scope: str,
                  count_limit: int, byte_limit: int) -> tuple[set[int], str | None]:
    """Positions of the images kept (in order, while they fit) and a note on the dropped ones."""
    keep: set[int] = set()
    dropped: list[int] = []
    used = 0
    for i, image in enumerate(images):
        if len(keep) < max_count and used + len(image.data) <= max_bytes:
            keep.add(i)
            used += len(image.data)
        else:
            dropped.append(i)
    if not dropped:
        return keep, None
    listed = ", ".join(f"image {i + 1} ({images[i].mime_type}, "
                       f"{format_bytes(len(images[i].data))})" for i in dropped)
    return keep, (f"[agent_ext left out {len(dropped)} of {len(images)} images from this result "
                  f"to stay within {scope} (at most {count_limit} images, "
                  f"{format_bytes(byte_limit)}): {listed}. Request them one at a time if you "
                  f"need them.]")


def _starts_truncated(result: ToolResult) -> bool:
    """Whether any text part starts with the wrapper prefix (a tool or an earlier pass cut it).

    Only a prefix at the start counts: output that merely mentions it is still bounded.
    """
    return any(p.text.startswith(TRUNCATED_PREFIX) for p in result.parts
               if isinstance(p, TextPart))


def _images(result: ToolResult) -> list[ImagePart]:
    if isinstance(result.llm_content, str):
        return []
    return [p for p in result.llm_content if isinstance(p, ImagePart)]


def _rebuild(result: ToolResult, text: str, images: list[ImagePart], notes: list[str], *,
             truncated: bool) -> ToolResult:
    """A copy of ``result`` with its text replaced, the given images and notes appended.

    A plain-string result stays a string when it has no images or notes. An error message longer
    than the new text is replaced by it, so the error cannot carry the flood back in.
    """
    parts: list[Part] = [TextPart(text), *images, *(TextPart(n) for n in notes)]
    content: str | list[Part]
    if len(parts) == 1 and isinstance(parts[0], TextPart) and isinstance(result.llm_content, str):
        content = parts[0].text
    else:
        content = parts
    error = result.error
    if error is not None and len(error.message) > len(text):
        error = replace(error, message=text)
    return replace(result, llm_content=content, error=error, truncated=truncated)


def _drop_images(result: ToolResult, keep: set[int], note: str) -> ToolResult:
    """A copy of ``result`` without the images not in ``keep`` (positions), plus ``note``."""
    parts: list[Part] = []
    n = 0
    for part in result.parts:
        if isinstance(part, ImagePart):
            n += 1
            if n - 1 not in keep:
                continue
        parts.append(part)
    parts.append(TextPart(note))
    return replace(result, llm_content=parts)

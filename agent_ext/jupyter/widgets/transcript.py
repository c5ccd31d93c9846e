"""The transcript widget: a run's events as small items that the view renders as they stream.

Each item has an ``id`` and a ``rev`` (bumped on every change) so the view patches only what
changed. Items stay small: tool results become previews and live output keeps its tail.
Streamed text is synced at most every few tenths of a second while an event loop runs.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from typing import TYPE_CHECKING, Any

import traitlets

from agent_ext.agent import events as ev
from agent_ext.core import ErrorCode, Kind

from ._assets import asset
from ._base import Widget, log
from ._static import cut, esc, wrap

if TYPE_CHECKING:
    from agent_ext.agent.agent import RunResult
    from agent_ext.core import Registry

PREVIEW_CHARS = 1500
#: Characters kept of the diff of an edit a mode or rule allowed.
DIFF_CHARS = 20_000
OUTPUT_TAIL_CHARS = 2000
ARGS_CHARS = 600
TITLE_CHARS = 200
MAX_TODOS = 50
_READ_NAMES = ("read", "view", "cat", "list", "ls", "open")
_SEARCH_NAMES = ("grep", "search", "find", "glob", "rg")
_TODO_STATUS = {
    "pending": "pending", "todo": "pending", "in_progress": "in_progress",
    "in-progress": "in_progress", "active": "in_progress", "doing": "in_progress",
    "completed": "completed", "complete": "completed", "done": "completed",
}
_STATUS_TEXT = {"running": "running", "waiting": "waiting for you", "done": "done",
                "error": "error", "denied": "denied", "cancelled": "cancelled"}


def tail(text: str, limit: int) -> str:
    """The last ``limit`` characters, marked as cut."""
    return text if len(text) <= limit else "…" + text[-limit:]


def todos_from(arguments: str) -> list[dict[str, str]] | None:
    """The todo list of a ``todo_write`` call, or None when the arguments hold none."""
    try:
        data = json.loads(arguments or "{}")
    except ValueError:
        return None
    raw = data.get("todos") if isinstance(data, dict) else None
    if not isinstance(raw, list):
        return None
    out = []
    for entry in raw[:MAX_TODOS]:
        if not isinstance(entry, dict):
            continue
        text = next((entry[k] for k in ("content", "text", "title", "task")
                     if isinstance(entry.get(k), str)), "")
        status = _TODO_STATUS.get(str(entry.get("status", "pending")).lower(), "pending")
        out.append({"content": cut(text, 300), "status": status})
    return out


def args_preview(arguments: str) -> str:
    """The call's arguments, pretty-printed and cut to a preview."""
    try:
        text = json.dumps(json.loads(arguments or "{}"), indent=2, ensure_ascii=False)
    except ValueError:
        text = arguments
    return cut(text, ARGS_CHARS)


class TranscriptWidget(Widget):
    """Renders one run. Pass it as an event sink (``add_event``); ``finish`` ends it.

    ``registry`` (optional) tells read and search tools apart for grouping; without it tool
    names decide. ``price_per_mtok`` (input, output dollars) adds a cost to the usage line.
    """

    _esm = asset("transcript.js")
    _css = asset("transcript.css")

    items = traitlets.List(traitlets.Dict()).tag(sync=True)
    usage = traitlets.Dict().tag(sync=True)
    status = traitlets.Unicode("running").tag(sync=True)

    def __init__(self, *, registry: Registry | None = None,
                 price_per_mtok: tuple[float, float] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.registry = registry
        self.price_per_mtok = price_per_mtok
        self._items: list[dict[str, Any]] = []
        self._by_call: dict[str, dict[str, Any]] = {}
        self._next_id = 1
        self._mutex = threading.RLock()
        self._flush_pending = False
        self._text_open: dict[str, Any] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- events -----------------------------------------------------------------------------------

    def add_event(self, event: ev.Event) -> None:
        """Map one agent event to items; never raises (a broken view must not stop the run)."""
        try:
            with self._mutex:
                streaming = self._apply(event)
            if isinstance(event, ev.RunFinished):
                return
            if streaming:
                self._schedule()
            else:
                self.flush()
        except Exception:  # noqa: BLE001  the run goes on even if its view cannot
            log.exception("TranscriptWidget could not show %s", type(event).__name__)

    __call__ = add_event

    def _apply(self, event: ev.Event) -> bool:
        """Update the items; True when the event only streamed text into an open item."""
        if isinstance(event, ev.TextDelta | ev.ReasoningDelta):
            kind = "text" if isinstance(event, ev.TextDelta) else "reasoning"
            if self._text_open is not None and self._text_open["kind"] == kind:
                self._text_open["text"] += event.text
                self._touch(self._text_open)
                return True
            if not event.text:
                return True
            self._text_open = self._add({"kind": kind, "text": event.text})
            return False
        self._text_open = None
        if isinstance(event, ev.RunStarted):
            self.status = "running"
            self._add({"kind": "run", "model": event.model})
        elif isinstance(event, ev.ToolCallStarted):
            self._call_started(event)
        elif isinstance(event, ev.ToolOutput):
            item = self._by_call.get(event.call_id)
            if item is not None:
                item["output"] = tail(item.get("output", "") + event.text, OUTPUT_TAIL_CHARS)
                self._touch(item)
                return True
        elif isinstance(event, ev.ToolCallFinished):
            self._call_finished(event)
        elif isinstance(event, ev.CallAllowed):
            item = self._tool_item(event.call_id, event.tool_name, "")
            item["allowed"] = cut(event.reason, 300)
            self._touch(item)
        elif isinstance(event, ev.ApprovalRequested):
            item = self._tool_item(event.request.call_id, event.request.tool_name,
                                   event.request.details.summary)
            item.update(status="waiting", reason=cut(event.request.reason, 500))
            self._touch(item)
        elif isinstance(event, ev.ApprovalResolved):
            item = self._tool_item(event.request.call_id, event.request.tool_name, "")
            outcome = event.decision.outcome
            item["status"] = {"reject": "denied", "cancel": "cancelled"}.get(outcome, "running")
            self._touch(item)
        elif isinstance(event, ev.UsageUpdated):
            self.usage = self._usage(event.total.input_tokens, event.total.output_tokens,
                                     estimated=event.estimated)
        elif isinstance(event, ev.Notice):
            level = event.level if event.level in ("info", "setup", "warning", "error") else "info"
            self._add({"kind": "notice", "level": level, "text": cut(event.text, 2000)})
        elif isinstance(event, ev.RunFinished):
            self.finish(event.result)
        return False

    def _call_started(self, event: ev.ToolCallStarted) -> None:
        call = event.call
        item = self._tool_item(call.id, call.name, event.description)
        item["status"] = "running"
        group = self._group_of(call.name)
        if group:
            item["group"] = group
        todos = todos_from(call.arguments) if call.name == "todo_write" else None
        if todos is not None:
            item["todos"] = todos
        else:
            item["args"] = args_preview(call.arguments)
        self._touch(item)

    def _call_finished(self, event: ev.ToolCallFinished) -> None:
        result = event.result
        item = self._tool_item(event.call.id, event.call.name, event.call.name)
        item["seconds"] = round(event.seconds, 3)
        if result.error is None:
            item.pop("output", None)
            item["status"] = "done"
            item["preview"] = cut(result.text, PREVIEW_CHARS)
            diff = result.display if isinstance(result.display, str) else ""
            if item.get("allowed") and diff.startswith("--- "):
                item["diff"] = cut(diff, DIFF_CHARS)  # what ran unasked, to check afterwards
        else:
            item["status"] = {ErrorCode.EXECUTION_DENIED: "denied",
                              ErrorCode.EXECUTION_CANCELLED: "cancelled"}.get(result.error.code,
                                                                              "error")
            item["error"] = cut(result.error.message, PREVIEW_CHARS)
        self._touch(item)

    def _tool_item(self, call_id: str, name: str, title: str) -> dict[str, Any]:
        item = self._by_call.get(call_id)
        if item is None:
            item = self._add({"kind": "tool", "call_id": call_id, "name": name,
                              "title": cut(title or name, TITLE_CHARS), "status": "running"})
            self._by_call[call_id] = item
        elif title and title != name:
            item["title"] = cut(title, TITLE_CHARS)
        return item

    def _group_of(self, name: str) -> str | None:
        if self.registry is not None:
            try:
                kind = self.registry.get(name).kind
            except Exception:  # noqa: BLE001  unknown or broken tools just are not grouped
                kind = None
            if kind is not None:
                return {Kind.READ: "read", Kind.SEARCH: "search"}.get(kind)
        lowered = name.lower()
        if any(word in lowered for word in _SEARCH_NAMES):
            return "search"
        if lowered.startswith(_READ_NAMES):
            return "read"
        return None

    def _usage(self, tokens_in: int, tokens_out: int, *, estimated: bool) -> dict[str, Any]:
        usage: dict[str, Any] = {"input_tokens": tokens_in, "output_tokens": tokens_out,
                                 "estimated": estimated}
        if self.price_per_mtok is not None:
            usage["cost"] = (tokens_in * self.price_per_mtok[0]
                             + tokens_out * self.price_per_mtok[1]) / 1e6
        return usage

    # -- items and syncing ----------------------------------------------------------------------

    def _add(self, item: dict[str, Any]) -> dict[str, Any]:
        item = {"id": self._next_id, "rev": 0, **item}
        self._next_id += 1
        self._items.append(item)
        return item

    @staticmethod
    def _touch(item: dict[str, Any]) -> None:
        item["rev"] += 1

    def flush(self) -> None:
        """Sync the items to the view now."""
        with self._mutex:
            self._flush_pending = False
            snapshot = [dict(item) for item in self._items]
        self.items = snapshot

    def _delay(self) -> float:
        """Longer runs sync streamed text less often: every sync sends the whole list."""
        return min(1.0, 0.05 + 0.002 * len(self._items))

    def _schedule(self) -> None:
        """Sync soon: on the run's event loop (reached from other threads too), else now."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            known = self._loop
            if known is not None and known.is_running() and not known.is_closed():
                known.call_soon_threadsafe(self._schedule)
            else:
                self.flush()
            return
        self._loop = loop
        with self._mutex:
            if self._flush_pending:
                return
            self._flush_pending = True
        loop.call_later(self._delay(), self._flush_if_pending)

    def _flush_if_pending(self) -> None:
        if self._flush_pending:
            self.flush()

    # -- the end --------------------------------------------------------------------------------

    def finish(self, result: RunResult | None = None, *, status: str | None = None) -> None:
        """End the run: final status, unfinished calls closed, final sync and saved fallback."""
        if status is None:
            reason = result.stop_reason if result is not None else "end"
            status = {"cancelled": "cancelled", "error": "error"}.get(reason, "done")
        with self._mutex:
            self._text_open = None
            for item in self._by_call.values():
                if item.get("status") in ("running", "waiting"):
                    item["status"] = "cancelled" if status != "done" else "done"
                    self._touch(item)
        if result is not None and not self.usage:
            self.usage = self._usage(result.usage.input_tokens, result.usage.output_tokens,
                                     estimated=False)
        self.flush()
        self.status = status
        self.refresh_display()

    # -- static fallback ------------------------------------------------------------------------

    def _static_item(self, item: dict[str, Any]) -> str:
        kind = item.get("kind")
        if kind == "text":
            return f'<div style="white-space: pre-wrap">{esc(item.get("text", ""))}</div>'
        if kind == "reasoning":
            text = esc(item.get("text", ""))
            return f"<details><summary>Reasoning</summary><pre>{text}</pre></details>"
        if kind == "notice":
            text = re.sub(r"`([^`\n]+)`", r"<code>\1</code>", esc(item.get("text", "")))
            return f"<p><strong>{text}</strong></p>" if item.get("level") == "setup" else (
                f"<p><em>{text}</em></p>")
        if kind == "run":
            return f"<p><small>agent_ext · {esc(item.get('model', ''))}</small></p>"
        status = _STATUS_TEXT.get(str(item.get("status")), str(item.get("status")))
        took = item.get("seconds")
        seconds = f" ({took:.2f} s)" if isinstance(took, float | int) else ""
        body = ""
        if item.get("todos"):
            marks = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}
            body = "<ul>" + "".join(f"<li>{marks.get(t['status'], '[ ]')} {esc(t['content'])}</li>"
                                    for t in item["todos"]) + "</ul>"
        if item.get("diff"):
            body += f"<pre>{esc(item['diff'])}</pre>"
        detail = item.get("error") or item.get("preview")
        if detail:
            body += f"<pre>{esc(detail)}</pre>"
        allowed = f" · {esc(item['allowed'])}" if item.get("allowed") else ""
        return (f"<details><summary>[{esc(status)}] <code>{esc(item.get('name', ''))}</code> "
                f"{esc(item.get('title', ''))}{allowed}{esc(seconds)}</summary>{body}</details>")

    def _footer(self) -> str:
        parts = [{"running": "Running", "done": "Done", "error": "Stopped by an error",
                  "cancelled": "Cancelled"}.get(self.status, self.status)]
        if self.usage:
            mark = "~" if self.usage.get("estimated") else ""
            parts.append(f"{mark}{self.usage.get('input_tokens', 0):,} tokens in · "
                         f"{mark}{self.usage.get('output_tokens', 0):,} out")
            if isinstance(self.usage.get("cost"), float | int):
                parts.append(f"${self.usage['cost']:.4f}")
        return " · ".join(parts)

    def static_html(self) -> str:
        with self._mutex:
            items = [dict(item) for item in self._items]
        body = "\n".join(self._static_item(item) for item in items)
        return wrap("transcript", f"{body}\n<p><small>{esc(self._footer())}</small></p>")

    def static_text(self) -> str:
        with self._mutex:
            items = [dict(item) for item in self._items]
        lines = []
        for item in items:
            if item.get("kind") in ("text", "notice"):
                lines.append(str(item.get("text", "")))
            elif item.get("kind") == "tool":
                lines.append(f"[{item.get('status')}] {item.get('name')}: {item.get('title', '')}")
        lines.append(self._footer())
        return "\n".join(lines)


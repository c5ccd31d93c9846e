"""The base of agent_ext's widgets: the ready message, safe message handling, static fallbacks.

Widget messages can arrive on a kernel subshell thread (JupyterLab 4.4+), and output printed in
a comm handler shows nowhere, so handlers here never print and never raise: malformed messages
are logged and dropped, and callbacks are called as they are, on the thread the message came
on. Callers that resume asyncio code hand over with ``loop.call_soon_threadsafe``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import anywidget
import traitlets

log = logging.getLogger("agent_ext.jupyter.widgets")
log.addHandler(logging.NullHandler())


def call_safely(callback: Callable[..., object], *args: object) -> None:
    """Call a user callback; a failure is logged, never raised into the comm handler."""
    try:
        callback(*args)
    except Exception:
        log.exception("agent_ext widget callback %r failed", callback)


T = TypeVar("T")


class OneAnswer(Generic[T]):
    """A widget's one answer: the user's, or one given from elsewhere to show. It is set once;
    callbacks waiting for it are called when the user's comes in (at once if it is in)."""

    def __init__(self, lock: threading.RLock) -> None:
        self._lock = lock
        self.value: T | None = None
        self._callbacks: list[Callable[[T], object]] = []

    def on(self, callback: Callable[[T], object]) -> None:
        with self._lock:
            if self.value is None:
                self._callbacks.append(callback)
                return
            value = self.value
        call_safely(callback, value)

    def keep(self, value: T) -> None:
        """Record ``value`` unless there is an answer already (callbacks are not called)."""
        with self._lock:
            if self.value is None:
                self.value = value

    def settle(self, value: T, widget: str) -> None:
        """The user's answer: recorded and passed to the waiting callbacks; a second is
        ignored (and logged)."""
        with self._lock:
            if self.value is not None:
                log.info("%s ignored a second answer", widget)
                return
            self.value = value
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            call_safely(callback, value)


class Widget(anywidget.AnyWidget):
    """An anywidget with a ready signal, guarded messages and a static HTML fallback.

    Views of a widget that waits for an answer send ``{"type": "alive"}`` every ``beat``
    seconds; ``last_seen`` is when any view last spoke, so a caller can tell that every page
    showing it was closed.
    """

    #: Seconds between a waiting view's "alive" messages (0: views send none).
    beat = traitlets.Float(0.0).tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        #: ``time.monotonic()`` of the latest message from any view (creation time until one).
        self.last_seen = time.monotonic()
        self._lock = threading.RLock()
        self._ready = threading.Event()
        self._ready_callbacks: list[Callable[[], object]] = []
        #: The IPython DisplayHandle from show() (untyped in IPython).
        self._display_handle: Any = None
        self.on_msg(self._receive)

    # -- ready ----------------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        """Whether a frontend has rendered this widget (it sent ``{"type": "ready"}``)."""
        return self._ready.is_set()

    def on_ready(self, callback: Callable[[], object]) -> None:
        """Call ``callback()`` once, when the first view renders (now, if one already has)."""
        with self._lock:
            if not self._ready.is_set():
                self._ready_callbacks.append(callback)
                return
        call_safely(callback)

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Block until a view renders or ``timeout`` passes; True when one did."""
        return self._ready.wait(timeout)

    # -- messages -------------------------------------------------------------------------------

    def _receive(self, _widget: object, content: object, _buffers: object = None) -> None:
        try:
            if not isinstance(content, dict) or not isinstance(content.get("type"), str):
                log.warning("%s ignored a malformed message: %.200r", type(self).__name__, content)
                return
            self.last_seen = time.monotonic()
            if content["type"] == "alive":
                return
            if content["type"] == "ready":
                self._mark_ready()
            else:
                self._handle(content["type"], content)
        except Exception:
            log.exception("%s could not handle a message: %.200r", type(self).__name__, content)

    def _mark_ready(self) -> None:
        with self._lock:
            if self._ready.is_set():
                return
            self._ready.set()
            callbacks, self._ready_callbacks = self._ready_callbacks, []
        for callback in callbacks:
            call_safely(callback)

    def _handle(self, kind: str, content: dict[str, Any]) -> None:
        """Handle a message other than ready; raising is fine (it is logged and dropped)."""
        log.warning("%s ignored a message of type %r", type(self).__name__, kind)

    # -- display and the static fallback --------------------------------------------------------

    def static_html(self) -> str:
        """The widget's current state as plain HTML, for notebooks opened without a kernel."""
        raise NotImplementedError

    def static_text(self) -> str:
        """The widget's current state as plain text."""
        raise NotImplementedError

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, metadata = bundle
        try:
            data = {**data, "text/plain": self.static_text(), "text/html": self.static_html()}
        except Exception:
            log.exception("%s could not render its static fallback", type(self).__name__)
        return data, metadata

    def show(self) -> None:
        """Display the widget with a display id, so later state reaches the saved fallback too."""
        from IPython import display as ipython_display  # noqa: PLC0415  (notebooks only)

        show: Any = ipython_display.display
        self._display_handle = show(self, display_id=True)

    def refresh_display(self) -> None:
        """Re-publish the output (widget view plus static fallback) if shown with ``show()``."""
        if self._display_handle is not None:
            try:
                self._display_handle.update(self)
            except Exception:
                log.exception("%s could not update its display", type(self).__name__)


class Asking(Widget, Generic[T]):
    """A widget that asks once and shows the outcome it is given.

    The view sends messages of type ``_message``; ``_take`` turns one into the answer (None while
    it is incomplete; raising on a malformed one) and the first answer goes to the ``on_answer``
    callbacks, on the thread the message came on: keep them to ``loop.call_soon_threadsafe``.
    The caller shows the outcome (``_show``) or withdraws the question; the view reads the
    outcome from the ``_outcome_trait`` trait and ``status``.
    """

    _message = "answer"
    _outcome_trait = "decision"
    #: The note of a withdrawal given none, and the fallback's sentence while nobody answered.
    _withdrawn = "This question is no longer waiting for you."
    _waiting = "Waiting for your answer (it can be given only while the kernel runs)."

    status = traitlets.Unicode("pending").tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._answer_of: OneAnswer[T] = OneAnswer(self._lock)

    @property
    def answered(self) -> T | None:
        """The answer that counts, once there is one (the user's, or one given to show)."""
        return self._answer_of.value

    def on_answer(self, callback: Callable[[T], object]) -> None:
        """Call ``callback(answer)`` when the user answers (now, if they already have)."""
        self._answer_of.on(callback)

    def withdraw(self, note: str | None = None) -> None:
        """Show that the question went away unanswered (the run ended or was cancelled)."""
        self._publish("cancelled", **{self._outcome_trait: {"note": note or self._withdrawn}})

    def _show(self, value: T, status: str, /, **traits: Any) -> None:
        """Keep ``value`` as the answer (unless the user's is in) and show the outcome in
        ``traits``."""
        self._answer_of.keep(value)
        self._publish(status, **traits)

    def _publish(self, status: str, /, **traits: Any) -> None:
        with self.hold_sync():
            for name, value in traits.items():
                setattr(self, name, value)
            self.status = status
        self.refresh_display()

    def _handle(self, kind: str, content: dict[str, Any]) -> None:
        if kind != self._message:
            super()._handle(kind, content)
            return
        answer = self._take(content)
        if answer is not None:
            self._answer_of.settle(answer, self._label())

    def _label(self) -> str:
        """This widget in the log."""
        return type(self).__name__

    def _take(self, content: dict[str, Any]) -> T | None:
        """The answer ``content`` gives; ValueError or TypeError when it is malformed."""
        raise NotImplementedError

    def _said(self, answered: Callable[[T], str]) -> str:
        """The static fallback's sentence: the withdrawal's note, that it waits, or what
        ``answered`` says of the answer."""
        if self.status == "cancelled":
            return str(getattr(self, self._outcome_trait).get("note") or self._withdrawn)
        answer = self._answer_of.value
        return self._waiting if answer is None else answered(answer)

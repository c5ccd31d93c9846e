"""The scripted HTTP server both fakes share: one reply per request, every request recorded.

A reply is an ``SSE`` stream, a ``Status`` (an error or any plain JSON answer), or a function of
the ``Recorded`` request that returns one of those. Each response closes its connection, so a
server shuts down without waiting on idle keep-alive sockets.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class SSE:
    """A 200 event stream.

    ``events`` are dicts (encoded by the fake's dialect) or raw ``str`` frames sent verbatim.
    ``cut_after`` drops the connection after that many events, without ending the body properly.
    ``done`` sends the dialect's end marker (OpenAI's ``data: [DONE]``). ``delay`` waits before
    the response starts and ``interval`` between events.
    """

    events: Sequence[Any]
    cut_after: int | None = None
    done: bool = True
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0
    interval: float = 0.0


@dataclass(frozen=True)
class Status:
    """A plain response: ``body`` as JSON (dict/list) or text (str), with extra ``headers``."""

    status: int
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass(frozen=True)
class Recorded:
    """One request the fake received (header names lower-cased; ``body`` parsed when JSON)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes


Reply = SSE | Status | Callable[[Recorded], SSE | Status]


def free_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class FakeServer:
    """A scripted server on 127.0.0.1; use as a context manager.

    Requests beyond the script get a 500 naming the fake, so a test that asks for more than it
    scripted fails loudly rather than hanging. Requests to other paths than ``scripted`` (a
    client asking the server about itself, e.g. its context window) are answered from ``info``
    (path -> Status; 404 otherwise), recorded in ``info_requests`` and use no script.
    """

    prefix = ""
    #: Path endings answered from the script; empty: every path.
    scripted: tuple[str, ...] = ()

    def __init__(self, script: Iterable[Reply] = (),
                 info: Mapping[str, Status] | None = None) -> None:
        self._script: list[Reply] = list(script)
        self.info: dict[str, Status] = dict(info or {})
        self.info_requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.requests: list[Recorded] = []
        self.errors: list[BaseException] = []
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- what a dialect provides -------------------------------------------------------------

    def encode(self, event: Any) -> bytes:
        """One SSE frame for ``event``."""
        raise NotImplementedError

    def end_marker(self) -> bytes:
        """What ends a stream when ``SSE.done`` is set (nothing by default)."""
        return b""

    def exhausted(self, request: Recorded) -> Status:
        return Status(500, {"error": {"message": f"the fake server has no reply scripted for "
                                                 f"request #{len(self.requests)}"}})

    # -- public API --------------------------------------------------------------------------

    @property
    def port(self) -> int:
        assert self._httpd is not None, "start the fake with `with` first"
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """What to pass to the SDK as ``base_url``."""
        return self.url + self.prefix

    @property
    def remaining(self) -> int:
        """Scripted replies not used yet."""
        with self._lock:
            return len(self._script)

    @property
    def bodies(self) -> list[Any]:
        """The JSON bodies of every request, in order."""
        return [r.body for r in self.requests]

    def add(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    def start(self) -> FakeServer:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- request handling --------------------------------------------------------------------

    def _next_reply(self, request: Recorded) -> SSE | Status:
        path = request.path.split("?", 1)[0]
        if self.scripted and not path.endswith(self.scripted):
            with self._lock:
                self.info_requests.append(request)
            return self.info.get(path) or Status(404, {"error": {"message": f"no {path}"}})
        with self._lock:
            self.requests.append(request)
            reply = self._script.pop(0) if self._script else None
        if reply is None:
            return self.exhausted(request)
        return reply(request) if callable(reply) else reply

    def _wait(self, seconds: float) -> bool:
        """Sleep unless the server is stopping; True when it is."""
        return seconds > 0 and self._stopping.wait(seconds)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: FakeServer
    timeout = 10

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: tests read ``fake.requests`` instead."""

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _serve(self) -> None:
        self.close_connection = True
        try:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            request = Recorded(self.command, self.path,
                               {k.lower(): v for k, v in self.headers.items()}, body, raw)
            reply = self.fake._next_reply(request)
            if self.fake._wait(reply.delay):
                return
            if isinstance(reply, Status):
                self._send_status(reply)
            else:
                self._send_stream(reply)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            pass
        except Exception as exc:  # recorded: a handler thread must never raise
            self.fake.errors.append(exc)

    def _send_status(self, reply: Status) -> None:
        if isinstance(reply.body, str):
            data, ctype = reply.body.encode(), "text/plain"
        else:
            data, ctype = json.dumps(reply.body).encode(), "application/json"
        self.send_response(reply.status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        self.send_header("connection", "close")
        for k, v in reply.headers.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _send_stream(self, reply: SSE) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("connection", "close")
        for k, v in reply.headers.items():
            self.send_header(k, v)
        self.end_headers()
        for n, event in enumerate(reply.events):
            if reply.cut_after is not None and n >= reply.cut_after:
                return  # no closing chunk: the client sees the body end early
            if n and self.fake._wait(reply.interval):
                return
            frame = event.encode() if isinstance(event, str) else self.fake.encode(event)
            self._chunk(frame)
        if reply.cut_after is not None:
            return
        if reply.done:
            self._chunk(self.fake.end_marker())
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _chunk(self, data: bytes) -> None:
        if data:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

"""web_fetch against a real HTTP server on 127.0.0.1: conversion, redirects, limits, errors."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from agent_ext.core import ErrorCode, ExecControl, ToolContext, ToolResult
from agent_ext.tools import web_fetch as wf
from agent_ext.tools._html import html_to_text
from agent_ext.tools.web_fetch import WebFetchTool

pytestmark = pytest.mark.timeout(60)

PAGE = """<!doctype html><html><head><title>Test  Page</title>
<style>body { color: red }</style><script>alert("x")</script></head>
<body><h1>Welcome</h1><p>Read the <a href="/docs">docs</a> first.</p>
<ul><li>alpha</li><li>beta</li></ul><pre><code>print("hi")
</code></pre></body></html>"""


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def send(self, status: int, body: bytes, ctype: str | None = "text/plain",
             headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        if ctype:
            self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def redirect(self, location: str, status: int = 302) -> None:
        self.send(status, b"", None, {"Location": location})

    def do_GET(self) -> None:
        path = self.path
        port = self.server.server_address[1]
        if path == "/page":
            self.send(200, PAGE.encode(), "text/html; charset=utf-8")
        elif path == "/latin1":
            self.send(200, "<p>caf\xe9</p>".encode("latin-1"), "text/html; charset=iso-8859-1")
        elif path == "/json":
            self.send(200, b'{"b": [1, 2], "a": "\\u00e9"}', "application/json")
        elif path == "/text":
            self.send(200, b"plain  text\n  kept as is", "text/plain")
        elif path == "/long":
            self.send(200, b"y" * 200_000, "text/plain")
        elif path == "/binary":
            self.send(200, b"\x89PNG\r\n\x1a\n" + b"\0" * 100, "image/png")
        elif path == "/untyped":
            self.send(200, b"\0\1\2binary", None)
        elif path == "/missing":
            self.send(404, b"<html><body><h1>Not here</h1></body></html>", "text/html")
        elif path == "/boom":
            self.send(500, b"internal error", "text/plain")
        elif path.startswith("/hop/"):
            left = int(path.rsplit("/", 1)[1])
            self.redirect(f"/hop/{left - 1}" if left > 1 else "/page",
                          301 if left % 2 else 307)
        elif path == "/loop":
            self.redirect("/loop")
        elif path == "/offsite":
            self.redirect(f"http://localhost:{port}/page")
        elif path == "/ftp":
            self.redirect("ftp://127.0.0.1/file")
        elif path == "/big":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            chunk = b"z" * 65_536
            try:
                for _ in range(100):  # 6.25 MB
                    self.wfile.write(chunk)
            except OSError:
                pass
        elif path == "/slow":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "100")
            self.end_headers()
            try:
                for _ in range(100):
                    self.wfile.write(b"s")
                    self.wfile.flush()
                    time.sleep(0.2)
            except OSError:
                pass
        else:
            self.send(404, b"no route", "text/plain")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    thread.join(5)


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                "all_proxy"):
        monkeypatch.delenv(var, raising=False)


async def fetch(args: dict[str, Any], control: ExecControl | None = None) -> ToolResult:
    built = WebFetchTool().build(args, ToolContext())
    if isinstance(built, ToolResult):
        return built
    return await built.execute(control or ExecControl())


async def test_html_page_becomes_markdown(server: str) -> None:
    result = await fetch({"url": f"{server}/page"})
    assert not result.is_error, result.text
    text = result.text
    assert text.startswith(f"Fetched {server}/page (200 OK, text/html")
    assert "Title: Test Page" in text
    assert "# Welcome" in text and f"[docs]({server}/docs)" in text
    assert "- alpha\n- beta" in text and '```\nprint("hi")\n```' in text
    assert "alert" not in text and "color: red" not in text


async def test_charset_json_and_text(server: str) -> None:
    latin = await fetch({"url": f"{server}/latin1"})
    assert "café" in latin.text
    data = await fetch({"url": f"{server}/json"})
    assert json.dumps({"b": [1, 2], "a": "é"}, indent=2, ensure_ascii=False) in data.text
    plain = await fetch({"url": f"{server}/text"})
    assert plain.text.endswith("plain  text\n  kept as is")


async def test_redirects_are_followed_and_reported(server: str) -> None:
    result = await fetch({"url": f"{server}/hop/3"})
    assert not result.is_error
    assert result.text.startswith(f"Fetched {server}/page (200")
    assert (f"Redirects: 301 {server}/hop/3 -> {server}/hop/2; 307 {server}/hop/2 -> "
            f"{server}/hop/1; 301 {server}/hop/1 -> {server}/page") in result.text


async def test_redirect_limits(server: str) -> None:
    loop = await fetch({"url": f"{server}/loop"})
    assert loop.error is not None and loop.error.code == wf.TOO_MANY_REDIRECTS
    assert loop.text.count("->") == 6
    offsite = await fetch({"url": f"{server}/offsite"})
    assert not offsite.is_error and "redirects to another host" in offsite.text
    assert "Welcome" not in offsite.text
    ftp = await fetch({"url": f"{server}/ftp"})
    assert ftp.error is not None and "only http and https" in ftp.text


async def test_big_body_is_capped(server: str) -> None:
    result = await fetch({"url": f"{server}/big", "max_chars": 1000})
    assert not result.is_error
    assert "5.0 MB" in result.text and "only its start was read" in result.text
    assert "Cut at max_chars=1,000 of 5,242,880 characters" in result.text
    assert len(result.text) < 2_000


async def test_max_chars_cuts_text(server: str) -> None:
    result = await fetch({"url": f"{server}/long", "max_chars": 5000})
    assert "Cut at max_chars=5,000 of 200,000" in result.text
    assert result.text.count("y") == 5000


async def test_slow_body_hits_the_time_cap(server: str) -> None:
    started = time.monotonic()
    result = await fetch({"url": f"{server}/slow", "timeout": 1})
    assert time.monotonic() - started < 5
    assert result.error is not None and result.error.code == wf.TIMED_OUT


async def test_binary_is_refused(server: str) -> None:
    png = await fetch({"url": f"{server}/binary"})
    assert png.error is not None and png.error.code == wf.BINARY_CONTENT
    assert "image/png" in png.text
    untyped = await fetch({"url": f"{server}/untyped"})
    assert untyped.error is not None and untyped.error.code == wf.BINARY_CONTENT


async def test_http_errors(server: str) -> None:
    missing = await fetch({"url": f"{server}/missing"})
    assert missing.error is not None and missing.error.code == wf.HTTP_ERROR
    assert "404 Not Found" in missing.text and "Not here" in missing.text
    boom = await fetch({"url": f"{server}/boom"})
    assert boom.error is not None and "500" in boom.text and "internal error" in boom.text


async def test_network_errors() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    refused = await fetch({"url": f"http://127.0.0.1:{port}/", "timeout": 5})
    assert refused.error is not None and refused.error.code == wf.CONNECTION_REFUSED
    dns = await fetch({"url": "http://no-such-host.invalid/", "timeout": 5})
    assert dns.error is not None
    assert dns.error.code in (wf.DNS_FAILED, wf.CONNECTION_FAILED, wf.TIMED_OUT)


async def test_cancel(server: str) -> None:
    control = ExecControl()
    control.cancelled.set()
    result = await fetch({"url": f"{server}/slow"}, control)
    assert result.error is not None and result.error.code == ErrorCode.EXECUTION_CANCELLED


async def test_url_checks_and_invocation_surface() -> None:
    for bad in ("ftp://x.org/f", "file:///etc/passwd", "http://", "http://x.org:99999/"):
        result = await fetch({"url": bad})
        assert result.error is not None and result.error.code == ErrorCode.INVALID_TOOL_PARAMS
    built = WebFetchTool().build({"url": "example.com/a?b=1", "max_chars": 10,
                                  "timeout": 9999}, ToolContext())
    assert not isinstance(built, ToolResult)
    assert built.url() == "https://example.com/a?b=1"
    assert built.params.max_chars == 1000 and built.params.timeout == 120
    assert built.default_permission().value == "ask" and built.tier().name == "READ"
    details = await built.confirmation_details()
    assert details.extra["domain"] == "example.com"
    tool = WebFetchTool()
    assert tool.defer and tool.read_only and tool.concurrency_safe and tool.problems() == []


def test_html_conversion_details() -> None:
    html = ("<p>one<br>two</p><ol start='3'><li>c<ul><li>nested</li></ul></li><li>d</li></ol>"
            "<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>"
            "<a href='javascript:void(0)'>js</a> <a href='#top'>top</a> <a>bare</a>"
            "<noscript>nojs</noscript><p>&lt;tag&gt; &amp; <b>bold</b> <i>it</i></p>")
    title, text = html_to_text(html, "https://h.example/x/")
    assert title == ""
    assert text == ("one\ntwo\n\n3. c\n  - nested\n4. d\n\nk | v\na | 1\n\njs top bare\n\n"
                    "<tag> & **bold** *it*")

"""web_fetch: read a web page (or JSON, or plain text) over http(s) as text for the model.

Pages are converted to markdown-ish text (``_html``), JSON is pretty-printed and binary bodies
are refused. Every limit is explicit: five redirects (each reported), a 5 MB body, a time cap
and ``max_chars`` of text. Redirects to another host are not followed but reported, because
permission rules allow fetches per domain.
"""

from __future__ import annotations

import asyncio
import codecs
import json
import math
import re
import socket
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx
from pydantic import Field, field_validator

from agent_ext.core import (
    ConfirmationDetails,
    ErrorCode,
    ExecControl,
    Kind,
    Params,
    Permission,
    Tool,
    ToolContext,
    ToolInvocation,
    ToolResult,
)

from ._html import html_to_text
from ._waiting import until_cancelled

MAX_REDIRECTS = 5
MAX_BODY = 5 * 2**20
DEFAULT_MAX_CHARS = 50_000
MAX_CHARS = 500_000
DEFAULT_TIMEOUT = 30.0
MAX_TIMEOUT = 120.0
USER_AGENT = "agent_ext/0.1 (web_fetch; +https://pypi.org/project/agent-ext/)"
ACCEPT = "text/html,application/xhtml+xml,text/markdown,text/plain,application/json;q=0.9,*/*;q=0.5"

DNS_FAILED = "web_fetch_dns_failed"
CONNECTION_REFUSED = "web_fetch_connection_refused"
CONNECTION_FAILED = "web_fetch_connection_failed"
TIMED_OUT = "web_fetch_timeout"
HTTP_ERROR = "web_fetch_http_error"
BINARY_CONTENT = "web_fetch_binary_content"
TOO_MANY_REDIRECTS = "web_fetch_too_many_redirects"
FETCH_FAILED = "web_fetch_failed"

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml+xml",
               "application/javascript", "application/x-javascript", "application/ecmascript",
               "application/rss+xml", "application/atom+xml", "application/x-ndjson",
               "application/yaml", "application/x-yaml", "application/toml",
               "application/x-sh", "application/sql", "application/graphql")
_META_CHARSET = re.compile(rb"""<meta[^>]+charset=["']?([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


class WebFetchParams(Params):
    url: str = Field(min_length=1, max_length=8_000)
    max_chars: int = Field(default=DEFAULT_MAX_CHARS,
                           description=f"Characters to return, at most {MAX_CHARS}.")
    timeout: float = Field(default=DEFAULT_TIMEOUT,
                           description=f"Seconds, at most {MAX_TIMEOUT:g}.")

    @field_validator("url", mode="before")
    @classmethod
    def _scheme(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.strip()
            if value and "://" not in value and re.match(r"^[\w.-]+\.[A-Za-z]{2,}(?:[:/?#]|$)",
                                                         value):
                return "https://" + value
        return value

    @field_validator("max_chars", mode="before")
    @classmethod
    def _chars(cls, value: Any) -> Any:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return max(1_000, min(MAX_CHARS, int(value)))
        return value

    @field_validator("timeout", mode="before")
    @classmethod
    def _seconds(cls, value: Any) -> Any:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return DEFAULT_TIMEOUT if not math.isfinite(value) or value <= 0 else min(
                float(value), MAX_TIMEOUT)
        return value


class WebFetchTool(Tool[WebFetchParams]):
    name = "web_fetch"
    description = (
        "Fetch an http(s) URL and return it as text, web pages as markdown.")
    kind = Kind.FETCH
    params_model = WebFetchParams
    read_only = True
    defer = True
    search_hint = "http url download web page browse internet documentation curl"
    max_output_chars = math.inf  # bounded by max_chars

    def check(self, params: WebFetchParams, ctx: ToolContext) -> str | None:
        return url_problem(params.url)

    def invocation(self, params: WebFetchParams,
                   ctx: ToolContext) -> ToolInvocation[WebFetchParams]:
        return _WebFetchInvocation(self, params, ctx)


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be fetched, or None."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  raises on a bad port
    except ValueError as exc:
        return f"`url` is not a valid URL ({exc})"
    if parts.scheme.lower() not in ("http", "https"):
        return f"only http and https URLs can be fetched, not {parts.scheme or 'this'!r}"
    if not parts.hostname:
        return "`url` has no host name"
    return None


class _WebFetchInvocation(ToolInvocation[WebFetchParams]):
    def description(self) -> str:
        return f"web_fetch {self.params.url}"

    def url(self) -> str:
        return self.params.url

    def default_permission(self) -> Permission:
        return Permission.ASK

    async def confirmation_details(self) -> ConfirmationDetails:
        host = urlsplit(self.params.url).hostname or self.params.url
        return ConfirmationDetails(kind="info", title=f"Fetch from {host}?",
                                   summary=self.params.url, tool_name=self.tool.name,
                                   extra={"url": self.params.url, "domain": host})

    async def execute(self, control: ExecControl) -> ToolResult:
        cancelled = ToolResult.fail(ErrorCode.EXECUTION_CANCELLED,
                                    f"The fetch of {self.params.url} was cancelled by the user.")
        fetching = fetch_text(self.params.url, self.params.max_chars, self.params.timeout)
        return await until_cancelled(fetching, control, cancelled=cancelled)


@dataclass
class Fetched:
    """A final (non-redirect) response: its body up to the size cap and the redirects taken."""

    url: str
    status: int
    reason: str
    content_type: str
    charset: str | None
    body: bytes = b""
    cut: bool = False
    hops: list[str] = field(default_factory=list)


async def fetch_text(url: str, max_chars: int, timeout: float) -> ToolResult:
    """Fetch ``url`` and turn the response into the model's result (never raises)."""
    started = time.monotonic()
    try:
        fetched = await asyncio.wait_for(_fetch(url, timeout), timeout)
    except asyncio.TimeoutError:
        return ToolResult.fail(TIMED_OUT, f"Fetching {url} took longer than {timeout:g}s and was "
                                          "stopped. Retry with a larger timeout, or try later.")
    except httpx.HTTPError as exc:
        return _network_error(url, exc)
    except Exception as exc:  # noqa: BLE001  (e.g. httpx.InvalidURL) a result, never a crash
        return ToolResult.fail(FETCH_FAILED, f"Fetching {url} failed ({type(exc).__name__}: "
                                             f"{exc}). Check the URL.")
    if isinstance(fetched, ToolResult):
        return fetched
    return await asyncio.to_thread(render, fetched, max_chars, time.monotonic() - started)


async def _fetch(url: str, timeout: float) -> Fetched | ToolResult:
    limits = httpx.Timeout(timeout)
    headers = {"User-Agent": USER_AGENT, "Accept": ACCEPT}
    origin = _host(url)
    hops: list[str] = []
    async with httpx.AsyncClient(follow_redirects=False, timeout=limits, headers=headers) as client:
        for _ in range(MAX_REDIRECTS + 1):
            async with client.stream("GET", url) as response:
                location = response.headers.get("location")
                if response.status_code in _REDIRECTS and location:
                    target = urljoin(str(response.url), location)
                    hops.append(f"{response.status_code} {url} -> {target}")
                    problem = url_problem(target)
                    if problem is not None:
                        return ToolResult.fail(FETCH_FAILED, f"{url} redirected to {target}, "
                                                             f"which cannot be fetched: {problem}.")
                    if _host(target) != origin:
                        return _offsite(url, target, hops)
                    url = target
                    continue
                return await _read(response, url, hops)
    return ToolResult.fail(TOO_MANY_REDIRECTS,
                           f"{url} redirected more than {MAX_REDIRECTS} times; stopped. "
                           "Redirects:\n" + "\n".join(hops))


async def _read(response: httpx.Response, url: str, hops: list[str]) -> Fetched | ToolResult:
    ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
    fetched = Fetched(str(response.url), response.status_code, response.reason_phrase, ctype,
                      response.charset_encoding, hops=hops)
    if ctype and not _is_text_type(ctype):
        size = response.headers.get("content-length")
        return _binary(url, ctype, int(size) if size and size.isdigit() else None)
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > MAX_BODY:
            del body[MAX_BODY:]
            fetched.cut = True
            break
    fetched.body = bytes(body)
    if b"\0" in fetched.body[:4096] and not ctype.startswith("text/"):
        return _binary(url, ctype or "unknown type", len(fetched.body))
    return fetched


def render(fetched: Fetched, max_chars: int, elapsed: float) -> ToolResult:
    """The result text: where it came from, how it was converted, and the (capped) content."""
    text, title = _convert(fetched)
    head = [(f"Fetched {fetched.url} ({fetched.status} {fetched.reason}, "
            f"{fetched.content_type or 'no content type'}, {_size(len(fetched.body))}, "
            f"{elapsed:.1f}s)")]
    if fetched.hops:
        head.append("Redirects: " + "; ".join(fetched.hops))
    if title:
        head.append(f"Title: {title}")
    if fetched.cut:
        head.append(f"The body was over {_size(MAX_BODY)}; only its start was read.")
    if fetched.status >= 400:
        excerpt = text[:2_000].strip()
        message = "\n".join([*head, (f"The server answered {fetched.status} {fetched.reason}; "
                             "check the URL, or try another source."),
                             *(["Response:", excerpt] if excerpt else [])])
        return ToolResult.fail(HTTP_ERROR, message)
    if len(text) > max_chars:
        total = len(text)
        text = text[:max_chars] + (f"\n\n[Cut at max_chars={max_chars:,} of {total:,} "
                                   "characters; call again with a larger max_chars to read more.]")
    body = text if text.strip() else "(the response has no text content)"
    full = "\n".join(head) + "\n\n" + body
    return ToolResult(llm_content=full, display=full)


def _convert(fetched: Fetched) -> tuple[str, str]:
    ctype = fetched.content_type
    raw = fetched.body
    charset = fetched.charset or _meta_charset(raw) or "utf-8"
    try:
        codecs.lookup(charset)
    except LookupError:
        charset = "utf-8"
    text = raw.decode(charset, errors="replace")
    looks_html = ctype in ("text/html", "application/xhtml+xml") or (
        not ctype and text.lstrip()[:15].lower().startswith(("<!doctype html", "<html")))
    if looks_html:
        title, body = html_to_text(text, fetched.url)
        return body, title
    if ctype == "application/json" or ctype.endswith("+json"):
        try:
            return json.dumps(json.loads(text), indent=2, ensure_ascii=False), ""
        except ValueError:
            return text, ""
    return text, ""


def _meta_charset(raw: bytes) -> str | None:
    found = _META_CHARSET.search(raw[:4096])
    return found.group(1).decode("ascii") if found else None


def _is_text_type(ctype: str) -> bool:
    return ctype.startswith(_TEXT_TYPES) or ctype.endswith(("+json", "+xml"))


def _host(url: str) -> str:
    host = (urlsplit(url).hostname or "").lower()
    return host[4:] if host.startswith("www.") else host


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KB" if n < 2**20 else f"{n / 2**20:.1f} MB"


def _offsite(url: str, target: str, hops: list[str]) -> ToolResult:
    text = (f"{url} redirects to another host: {target}. It was not followed (permissions are "
            "per domain). If you want that page, call web_fetch with that URL.\nRedirects: "
            + "; ".join(hops))
    return ToolResult(llm_content=text, display=text)


def _binary(url: str, ctype: str, size: int | None) -> ToolResult:
    how_big = f", {_size(size)}" if size is not None else ""
    return ToolResult.fail(BINARY_CONTENT,
                           f"{url} is binary content ({ctype}{how_big}); web_fetch reads only "
                           "text. To keep the file, download it with the shell (curl -L -o FILE "
                           "URL) and inspect it there.")


def _network_error(url: str, exc: httpx.HTTPError) -> ToolResult:
    detail = f"{type(exc).__name__}: {exc}".strip()
    causes = _causes(exc)
    lowered = " ".join(f"{type(c).__name__}: {c}" for c in causes).lower()
    if isinstance(exc, httpx.TimeoutException):
        return ToolResult.fail(TIMED_OUT, f"Fetching {url} timed out ({detail}). Retry with a "
                                          "larger timeout, or try later.")
    if isinstance(exc, httpx.ConnectError):
        if any(isinstance(c, socket.gaierror) for c in causes) or any(
                s in lowered for s in ("name or service", "nodename", "getaddrinfo",
                                       "name resolution", "not known")):
            return ToolResult.fail(DNS_FAILED, f"The host of {url} could not be found ({detail}). "
                                               "Check the spelling of the domain.")
        if any(isinstance(c, ConnectionRefusedError) for c in causes) or "refused" in lowered:
            return ToolResult.fail(CONNECTION_REFUSED,
                                   f"The connection to {url} was refused: nothing is listening "
                                   "there. Check the host and port.")
    return ToolResult.fail(CONNECTION_FAILED if isinstance(exc, httpx.TransportError)
                           else FETCH_FAILED,
                           f"Fetching {url} failed ({detail}). Check the URL, or try later.")


def _causes(exc: BaseException) -> list[BaseException]:
    """The exception and what caused it, a few levels down (httpx wraps the OS error)."""
    found: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(found) < 8 and current not in found:
        found.append(current)
        current = current.__cause__ or current.__context__
    return found

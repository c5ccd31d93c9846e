"""Internal URL parsing and the scheme router, driven by a tiny in-memory scheme."""

from __future__ import annotations

import pytest

from agent_ext.core import ErrorCode, ImagePart, Tier
from agent_ext.fs import Selector, parse_selector
from agent_ext.urls import (
    ParsedURL,
    Resolved,
    SchemeRegistrationError,
    UnknownSchemeError,
    URLError,
    URLRouter,
    extract_scheme,
    is_url,
    parse_url,
)

# --- parsing --------------------------------------------------------------------------------


def test_hierarchical_parts() -> None:
    url = parse_url("Cell://abc/out/2?format=png&x=1#top")
    assert (url.scheme, url.host, url.path, url.query, url.fragment) == (
        "cell", "abc", "/out/2", "format=png&x=1", "top")
    assert url.hierarchical and url.opaque is None
    assert url.params == {"format": ["png"], "x": ["1"]}
    assert url.href == "Cell://abc/out/2?format=png&x=1#top" == str(url)


def test_colons_in_the_host() -> None:
    url = parse_url("skill://plugin:name/SKILL.md")
    assert url.host == "plugin:name" and url.path == "/SKILL.md"


def test_host_is_percent_decoded_and_raw_kept() -> None:
    url = parse_url("var://my%20df/x%20y")
    assert url.host == "my df" and url.raw_host == "my%20df"
    assert url.path == "/x%20y", "the path keeps the input's spelling"
    broken = parse_url("var://%ff%fe")
    assert broken.host == "%ff%fe", "undecodable hosts stay raw"


def test_empty_host() -> None:
    url = parse_url("var://")
    assert (url.scheme, url.host, url.path) == ("var", "", "")


def test_local_single_slash_is_rewritten() -> None:
    url = parse_url("local:/notes/a.md")
    assert (url.scheme, url.host, url.path) == ("local", "notes", "/a.md")
    assert url.href == "local:/notes/a.md"


def test_opaque_uris() -> None:
    url = parse_url("URN:isbn:0451450523?q=1#f")
    assert url.scheme == "urn" and url.opaque == "isbn:0451450523?q=1#f"
    assert (url.path, url.query, url.fragment) == ("isbn:0451450523", "q=1", "f")
    assert not url.hierarchical


@pytest.mark.parametrize("text", [
    "C:/Users/x", "C:\\Users\\x", "c:foo", "C://x",  # drive letters
    "a.py:50", "file.ts:10-20",                       # a dot in the "scheme"
    "Makefile:12", "notes:raw:1-20", "README:raw", "x:conflicts", "log:-20", "a:L1..L5",
    "plain", "/abs/path", "rel/path:3", "",
])
def test_not_urls(text: str) -> None:
    assert extract_scheme(text) is None
    assert not is_url(text)
    with pytest.raises(ValueError, match="Invalid URL"):
        parse_url(text)


@pytest.mark.parametrize(("text", "scheme"), [
    ("var://df", "var"), ("mcp://server/res://inner", "mcp"), ("urn:a:b", "urn"),
    ("custom:item", "custom"), ("NB://", "nb"), ("local:/x", "local"),
])
def test_urls(text: str, scheme: str) -> None:
    assert extract_scheme(text) == scheme
    assert isinstance(parse_url(text), ParsedURL)


# --- routing --------------------------------------------------------------------------------


class MemScheme:
    """A writable scheme over a dict: ``mem://key``."""

    name = "mem"
    read_only = False

    def __init__(self) -> None:
        self.store: dict[str, str] = {"greeting": "hello\nworld\n"}
        self.seen: list[Selector | None] = []

    async def resolve(self, url: ParsedURL, selector: Selector | None) -> Resolved:
        self.seen.append(selector)
        if url.host not in self.store:
            raise URLError(ErrorCode.FILE_NOT_FOUND, f"mem://{url.host} does not exist; list keys with mem://")
        return Resolved(text=self.store[url.host])

    async def write(self, url: ParsedURL, text: str) -> None:
        self.store[url.host] = text

    def tier_for(self, url: ParsedURL) -> Tier:
        return Tier.READ

    def complete(self, prefix: str) -> list[str]:
        return sorted(k for k in self.store if k.startswith(prefix))


class PictureScheme:
    """A read-only scheme answering with parts."""

    name = "pic"
    read_only = True
    peel_selectors = False

    async def resolve(self, url: ParsedURL, selector: Selector | None) -> Resolved:
        return Resolved(parts=(ImagePart(data=b"\x89PNG", mime_type="image/png"),),
                        cacheable=False)

    def tier_for(self, url: ParsedURL) -> Tier:
        return Tier.EXEC


@pytest.fixture
def router() -> URLRouter:
    return URLRouter([MemScheme(), PictureScheme()])


async def test_resolve_routes_to_the_scheme(router: URLRouter) -> None:
    selector = parse_selector("1-1")
    resolved = await router.resolve("mem://greeting", selector)
    assert resolved.text == "hello\nworld\n" and resolved.cacheable and resolved.full
    mem = router.get("mem")
    assert isinstance(mem, MemScheme) and mem.seen == [selector]
    picture = await router.resolve(parse_url("pic://x"))
    assert picture.text is None and not picture.cacheable and picture.parts


async def test_scheme_errors_pass_through(router: URLRouter) -> None:
    with pytest.raises(URLError, match="does not exist") as info:
        await router.resolve("mem://missing")
    assert info.value.code == ErrorCode.FILE_NOT_FOUND


async def test_unknown_scheme_lists_the_registered_ones(router: URLRouter) -> None:
    with pytest.raises(UnknownSchemeError) as info:
        await router.resolve("vra://df")
    message = str(info.value)
    assert "'vra'" in message and "mem://, pic://" in message
    assert info.value.code == ErrorCode.INVALID_TOOL_PARAMS
    with pytest.raises(UnknownSchemeError, match="No internal URL schemes"):
        URLRouter().lookup("var://x")


async def test_not_a_url(router: URLRouter) -> None:
    with pytest.raises(URLError, match="Invalid URL") as info:
        await router.resolve("a.py:10")
    assert info.value.code == ErrorCode.INVALID_TOOL_PARAMS


async def test_write(router: URLRouter) -> None:
    await router.write("mem://new", "content")
    assert (await router.resolve("mem://new")).text == "content"
    with pytest.raises(URLError, match="read-only") as info:
        await router.write("pic://x", "nope")
    assert info.value.code == ErrorCode.FILE_WRITE_FAILURE


def test_tier_and_completion(router: URLRouter) -> None:
    assert router.tier_for("mem://greeting") == Tier.READ
    assert router.tier_for("pic://x") == Tier.EXEC
    assert router.complete("m") == ["mem://"]
    assert router.complete("") == ["mem://", "pic://"]
    assert router.complete("mem://gr") == ["mem://greeting"]
    assert router.complete("pic://") == []
    assert router.complete("zzz://") == []


def test_is_url(router: URLRouter) -> None:
    assert router.is_url("mem://greeting")
    assert router.is_url("vra://typo"), "any scheme:// is a URL, so typos get a clear error"
    assert router.is_url("mem:greeting")
    assert not router.is_url("notes:intro"), "opaque only for registered schemes"
    assert not router.is_url("a.py:12")


def test_register_get_unregister(router: URLRouter) -> None:
    assert router.names() == ["mem", "pic"]
    assert router.unpeeled() == ["pic"]
    assert router.get("MEM") is router.get("mem") is not None
    with pytest.raises(SchemeRegistrationError, match="already registered"):
        router.register(MemScheme())
    replacement = MemScheme()
    router.register(replacement, replace=True)
    assert router.get("mem") is replacement
    assert router.unregister("mem") is replacement
    assert router.unregister("mem") is None
    assert router.names() == ["pic"]


def test_registration_lists_every_problem() -> None:
    class Broken:
        name = "X.y"
        read_only = False

    with pytest.raises(SchemeRegistrationError) as info:
        URLRouter().register(Broken())  # type: ignore[arg-type]
    message = str(info.value)
    assert "name 'X.y'" in message
    assert "no resolve()" in message and "no tier_for()" in message
    assert "no write()" in message


def test_resolved_needs_content() -> None:
    with pytest.raises(ValueError, match="text or parts"):
        Resolved()

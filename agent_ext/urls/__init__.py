"""Internal URLs: parsing, the router that hands each scheme its URLs, and the path parser
every tool uses (file paths and internal URLs, each with a selector)."""

from .parse import ParsedURL, extract_scheme, is_url, normalize_local, parse_url
from .paths import PathArg, parse_path_arg
from .router import (
    CompletingScheme,
    LocatingScheme,
    Resolved,
    SchemeRegistrationError,
    UnknownSchemeError,
    URLError,
    URLRouter,
    URLScheme,
    WritableScheme,
)

__all__ = [
    "CompletingScheme",
    "LocatingScheme",
    "ParsedURL",
    "PathArg",
    "Resolved",
    "SchemeRegistrationError",
    "URLError",
    "URLRouter",
    "URLScheme",
    "UnknownSchemeError",
    "WritableScheme",
    "extract_scheme",
    "is_url",
    "normalize_local",
    "parse_path_arg",
    "parse_url",
]

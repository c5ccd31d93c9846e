"""Internal URLs: parsing and the router that hands each scheme its URLs."""

from .parse import ParsedURL, extract_scheme, is_url, normalize_local, parse_url
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
    "parse_url",
]

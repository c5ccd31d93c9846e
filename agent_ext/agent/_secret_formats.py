"""Secret formats recognised by their shape, wherever they come from (a file, an output, a URL).

Each detector is a named pattern for one kind of credential with a prefix or structure of its
own, so that ordinary text is not masked by accident: provider keys and tokens with a fixed
prefix, JSON web tokens, PEM private key blocks, and the user part of a URL
(``scheme://user:password@host``, ``https://key@sentry.example/1``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Detector:
    """One credential format: ``group`` is the part of a match that is the secret; ``hints``
    are literals every match contains, so text without any is skipped at memchr speed."""

    label: str
    pattern: re.Pattern[str]
    group: int = 0
    hints: tuple[str, ...] = ()


def _word(body: str) -> re.Pattern[str]:
    """A token bounded by non-token characters on both sides."""
    return re.compile(r"(?<![A-Za-z0-9_\-])" + body + r"(?![A-Za-z0-9_\-])")


DETECTORS: tuple[Detector, ...] = (
    Detector("private_key", re.compile(
        r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY((?: BLOCK)?)-----"
        r"(?:[\s\S]*?-----END \1PRIVATE KEY\2-----|[\s\S]*\Z)"), hints=("PRIVATE KEY",)),
    Detector("aws_access_key_id", _word(r"(?:AKIA|ASIA|ABIA|ACCA|AROA|AIDA)[A-Z0-9]{16}"),
             hints=("AKIA", "ASIA", "ABIA", "ACCA", "AROA", "AIDA")),
    Detector("github_token", _word(r"gh[pousr]_[A-Za-z0-9]{36,255}"),
             hints=("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    Detector("github_token", _word(r"github_pat_[A-Za-z0-9_]{22,255}"), hints=("github_pat_",)),
    Detector("gitlab_token", _word(r"glpat-[A-Za-z0-9_\-]{20,}"), hints=("glpat-",)),
    Detector("anthropic_key", _word(r"sk-ant-[A-Za-z0-9_\-]{20,}"), hints=("sk-ant-",)),
    Detector("openai_key", _word(r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
             hints=("sk-",)),
    Detector("stripe_key", _word(r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
             hints=("_live_", "_test_")),
    Detector("slack_token", _word(r"xox[abposre]-[A-Za-z0-9\-]{10,}"), hints=("xox",)),
    Detector("slack_token", _word(r"xapp-[0-9]-[A-Za-z0-9\-]{10,}"), hints=("xapp-",)),
    Detector("google_api_key", _word(r"AIza[0-9A-Za-z_\-]{35}"), hints=("AIza",)),
    Detector("huggingface_token", _word(r"hf_[A-Za-z0-9]{30,}"), hints=("hf_",)),
    Detector("npm_token", _word(r"npm_[A-Za-z0-9]{36}"), hints=("npm_",)),
    Detector("jwt", _word(r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
             hints=("eyJ",)),
    # scheme://user:password@host: the password, whatever it looks like.
    Detector("url_password", re.compile(
        r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^/@\s:]*:([^/@\s]{3,})@"), 1, hints=("://",)),
    # scheme://token@host (a DSN or a token used as the user name): a long, key-like user part.
    Detector("url_credential", re.compile(
        r"\b[A-Za-z][A-Za-z0-9+.\-]*://([A-Za-z0-9_\-]{16,})@"), 1, hints=("://",)),
)

#: The longest stretch a secret can span that streamed output may cut in two, for one that has
#: no end marker; private key blocks are held until their end line (up to ``MAX_HELD``).
TOKEN_TAIL_CHARS = 512
TOKEN_TAIL = re.compile(r"[A-Za-z0-9_\-.+/=:@]{1,512}\Z")
KEY_START = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?![\s\S]*-----END)")
#: The start of a key block's first line, cut short; held when it ends the text (a key type
#: name is far shorter than MARKER_CHARS).
MARKER_CHARS = 256
PARTIAL_MARKER = re.compile(r"-(?:-(?:-(?:-(?:-(?:B(?:E(?:G(?:I(?:N[ A-Z0-9]*)?)?)?)?)?)?)?)?)?\Z")
MAX_HELD = 64 * 1024


def spans(text: str) -> list[tuple[int, int, str]]:
    """Every detected secret in ``text`` as (start, end, label), earliest first, no overlaps."""
    found: list[tuple[int, int, str]] = []
    for detector in DETECTORS:
        if detector.hints and not any(h in text for h in detector.hints):
            continue
        for match in detector.pattern.finditer(text):
            start, end = match.span(detector.group)
            if end > start:
                found.append((start, end, detector.label))
    found.sort(key=lambda s: (s[0], -s[1]))
    kept: list[tuple[int, int, str]] = []
    for span in found:
        if kept and span[0] < kept[-1][1]:
            continue
        kept.append(span)
    return kept

"""Tool profiles: how much of each tool the model is shown, so small context windows fit.

``default`` sends every declaration as its tool defines it. ``compact`` sends each tool's compact
description (by default its description's first sentence) and only the parameter descriptions
the tool names for it (types, enums, defaults and ``required`` stay), and
defers the tools the registry was told to defer in it (``Registry.defer_in_profile``): they stay
listed by name and are loaded with tool_search. :func:`choose_profile` picks ``compact`` for
windows of at most :data:`COMPACT_WINDOW_TOKENS`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, get_args

from .tool import ToolDeclaration

if TYPE_CHECKING:
    from .registry import Registry

Profile = Literal["default", "compact"]
PROFILES: tuple[Profile, ...] = get_args(Profile)
#: Context windows up to this many tokens get the compact profile.
COMPACT_WINDOW_TOKENS = 8192
#: Characters the deferred summary's listing may take before servers are cut to a few names.
SUMMARY_CHARS: dict[Profile, int] = {"default": 2_500, "compact": 1_500}
#: A first sentence longer than this is cut at a word (descriptions with no full stop).
MAX_SENTENCE_CHARS = 200

# A full stop before a space or the end, except in "e.g." and "i.e.".
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)[.!?](?=\s|$)")
_SUBSCHEMA = ("items", "additionalProperties", "not")
_SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


def check_profile(profile: str) -> Profile:
    """``profile`` if it is one we know; a ``ValueError`` naming the choices if not."""
    if profile not in PROFILES:
        raise ValueError(f"unknown tool profile {profile!r}; use one of "
                         + ", ".join(map(repr, PROFILES)))
    return profile


def profile_for_window(window_tokens: int | None) -> Profile:
    """``compact`` for a known window of at most :data:`COMPACT_WINDOW_TOKENS`, else ``default``."""
    if window_tokens is not None and 0 < window_tokens <= COMPACT_WINDOW_TOKENS:
        return "compact"
    return "default"


def choose_profile(registry: Registry, window_tokens: int | None,
                   chosen: str | None = None) -> Profile:
    """Set the registry's profile: ``chosen`` when given, else the one the window calls for."""
    profile = check_profile(chosen) if chosen is not None else profile_for_window(window_tokens)
    registry.set_profile(profile)
    return profile


def first_sentence(text: str) -> str:
    """The first sentence of a description (of its first paragraph), whitespace folded."""
    flat = " ".join(text.strip().split("\n\n", 1)[0].split())
    end = _SENTENCE_END.search(flat)
    sentence = flat[: end.end()] if end else flat
    if len(sentence) > MAX_SENTENCE_CHARS:
        sentence = sentence[:MAX_SENTENCE_CHARS].rsplit(" ", 1)[0].rstrip(",;:") + "..."
    return sentence


def without_descriptions(schema: Mapping[str, Any],
                         keep: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A JSON schema with every ``description`` dropped, however deep (property names kept);
    the top-level properties named in ``keep`` get its text as their description."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "description":
            continue
        if key in _SUBSCHEMA and isinstance(value, Mapping):
            out[key] = without_descriptions(value)
        elif key in _SUBSCHEMA_MAPS and isinstance(value, Mapping):
            out[key] = {k: without_descriptions(v) if isinstance(v, Mapping) else v
                        for k, v in value.items()}
        elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
            out[key] = [without_descriptions(v) if isinstance(v, Mapping) else v for v in value]
        else:
            out[key] = value
    for name, text in (keep or {}).items():
        props = out.get("properties")
        if isinstance(props, dict) and isinstance(props.get(name), Mapping):
            props[name] = {**props[name], "description": text}
    return out


def shaped(declaration: ToolDeclaration, profile: Profile) -> ToolDeclaration:
    """The declaration as ``profile`` sends it."""
    if profile == "default":
        return declaration
    return ToolDeclaration(
        declaration.name,
        declaration.compact_description or first_sentence(declaration.description),
        without_descriptions(declaration.parameters, declaration.compact_params))

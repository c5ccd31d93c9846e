"""Tool arguments: the coercions models need, and errors that name the field.

Models send ``"true"`` for booleans, ``"5"`` for integers, a JSON *string* where an object or
array is expected, ``null`` for an optional parameter they mean to leave out, and sometimes the
whole argument object as one JSON string. These are accepted. Keys the tool does not declare are
refused (never silently dropped), as are strings longer than the tool allows.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

#: Default upper bound on any one string argument; a tool may raise or lower it.
MAX_STRING_CHARS = 5_000_000


class ParamsError(ValueError):
    """Arguments did not validate; ``str()`` is the model-facing reason, naming each field."""


class Params(BaseModel):
    """Base of every tool's input model."""

    model_config = ConfigDict(
        extra="forbid",
        coerce_numbers_to_str=True,
        frozen=True,
    )

    _structured: ClassVar[frozenset[str] | None] = None
    _optional: ClassVar[frozenset[str] | None] = None

    @classmethod
    def _field_sets(cls) -> tuple[frozenset[str], frozenset[str]]:
        # Computed lazily per class from its schema: fields of object/array type, and fields
        # that have a default but do not accept null.
        if cls.__dict__.get("_structured") is None:
            props = schema_for(cls).get("properties", {})
            structured = {n for n, p in props.items() if _expects_structure(p)}
            optional = {
                n for n, f in cls.model_fields.items()
                if not f.is_required() and not _accepts_null(props.get(n, {}))
            }
            cls._structured = frozenset(structured)
            cls._optional = frozenset(optional)
        assert cls._structured is not None
        assert cls._optional is not None
        return cls._structured, cls._optional

    @model_validator(mode="before")
    @classmethod
    def _coerce(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        structured, optional = cls._field_sets()
        out = dict(data)
        for key, value in data.items():
            if value is None and key in optional:
                del out[key]
            elif isinstance(value, str) and key in structured:
                out[key] = _maybe_json(value)
        return out


def _maybe_json(value: str) -> Any:
    text = value.strip()
    if text[:1] in ("{", "["):
        try:
            return json.loads(text)
        except ValueError:
            return value
    return value


def _types(prop: Mapping[str, Any]) -> set[str]:
    found: set[str] = set()
    t = prop.get("type")
    if isinstance(t, str):
        found.add(t)
    elif isinstance(t, list):
        found.update(x for x in t if isinstance(x, str))
    for key in ("anyOf", "oneOf"):
        for sub in prop.get(key, ()):
            if isinstance(sub, Mapping):
                found |= _types(sub)
    if "$ref" in prop or "properties" in prop:
        found.add("object")
    if "items" in prop:
        found.add("array")
    return found


def _expects_structure(prop: Mapping[str, Any]) -> bool:
    types = _types(prop)
    return bool(types & {"object", "array"}) and "string" not in types


def _accepts_null(prop: Mapping[str, Any]) -> bool:
    return "null" in _types(prop) or not prop


#: How deeply arguments may nest, how many values they may hold in all, and how many
#: characters (in all their strings, or as JSON text before it is decoded).
MAX_ARGUMENT_DEPTH = 64
MAX_ARGUMENT_VALUES = 100_000
MAX_ARGUMENT_CHARS = 2 * MAX_STRING_CHARS + 1_000_000


def argument_problem(value: object) -> str | None:
    """Why ``value`` is too deep or too large to be a tool's arguments, or None.

    Walked without recursion, so that no nesting can exhaust the interpreter's stack; a
    container's values are counted before they are walked, so an oversized one costs nothing.
    """
    stack: list[tuple[object, int]] = [(value, 0)]
    seen = chars = 0
    while stack:
        item, depth = stack.pop()
        if depth > MAX_ARGUMENT_DEPTH:
            return (f"arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels; send a flatter "
                    "JSON object")
        if isinstance(item, str):
            chars += len(item)
            if chars > MAX_ARGUMENT_CHARS:
                return _too_long()
            continue
        if isinstance(item, dict | Mapping):
            children: Collection[object] = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        seen += len(children)
        if seen > MAX_ARGUMENT_VALUES:
            return (f"arguments hold more than {MAX_ARGUMENT_VALUES:,} values; send less, or "
                    "put large data in a file and pass its path")
        stack.extend((v, depth + 1) for v in children)
    return None


def _too_long() -> str:
    return (f"arguments hold more than {MAX_ARGUMENT_CHARS:,} characters; put large content "
            "in a file (with the shell, in parts) and pass its path")


def parse_arguments(args: Mapping[str, Any] | str | None) -> dict[str, Any]:
    """Turn what the model sent into a dict, or raise ``ParamsError`` saying what is wrong."""
    if args is None:
        return {}
    if isinstance(args, str):
        if len(args) > MAX_ARGUMENT_CHARS:
            raise ParamsError(_too_long())  # refused before decoding, which holds the loop
        text = args.strip()
        if not text:
            return {}
        try:
            args = json.loads(text)
        except RecursionError:
            raise ParamsError(f"arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels; send a "
                              "flatter JSON object") from None
        except ValueError as exc:
            raise ParamsError(f"arguments are not valid JSON ({exc}); send a JSON object") from None
        if isinstance(args, str):  # doubly encoded
            return parse_arguments(args)
    problem = argument_problem(args)
    if problem is not None:
        raise ParamsError(problem)
    if not isinstance(args, Mapping):
        raise ParamsError(f"arguments must be a JSON object, got {type(args).__name__}")
    bad = [k for k in args if not isinstance(k, str)]
    if bad:
        raise ParamsError(f"argument names must be strings, got {bad!r}")
    return dict(args)


def validate_model(model: type[Params], args: Mapping[str, Any]) -> Params:
    """Validate ``args`` against ``model``; raise ``ParamsError`` naming each bad field."""
    try:
        return model.model_validate(args)
    except ValidationError as exc:
        raise ParamsError(format_validation_error(exc, list(model.model_fields))) from None


def format_validation_error(exc: ValidationError, fields: Sequence[str] = ()) -> str:
    """The problems, one per field; a key the tool does not have is told the tool's own
    parameters (and the closest one), so the next call can use the right name."""
    problems = []
    unknown = False
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        kind = err["type"]
        if kind == "missing":
            problems.append(f"`{where}` is required")
        elif kind == "extra_forbidden":
            unknown = True
            close = difflib.get_close_matches(where, fields, n=1, cutoff=0.5)
            hint = f" (did you mean `{close[0]}`?)" if close else ""
            problems.append(f"`{where}` is not a parameter of this tool{hint}; remove it")
        elif kind == "string_too_long":
            limit = (err.get("ctx") or {}).get("max_length")
            problems.append(f"`{where}` is too long (at most {limit} characters)")
        else:
            got = _short(err.get("input"))
            problems.append(f"`{where}`: {err['msg']} (got {got})")
    text = "; ".join(problems)
    if unknown and fields:
        text += ". Its parameters are: " + ", ".join(fields)
    return text


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} chars)"


def schema_for(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema the model is sent: no titles, no ``$ref``, closed objects.

    Built once per model class (pydantic takes about a millisecond per schema, and the
    declarations are sent on every request); callers must not change the returned dict.
    """
    cached = _SCHEMAS.get(model)
    if cached is None:
        cached = _SCHEMAS[model] = _build_schema(model)
    return cached


_SCHEMAS: dict[type[BaseModel], dict[str, Any]] = {}


def _build_schema(model: type[BaseModel]) -> dict[str, Any]:
    raw = model.model_json_schema()
    defs = raw.pop("$defs", {})
    cleaned = _clean(raw, defs)
    assert isinstance(cleaned, dict)
    return cleaned


def _clean(node: Any, defs: Mapping[str, Any]) -> Any:
    if isinstance(node, list):
        return [_clean(x, defs) for x in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = defs[node["$ref"].rsplit("/", 1)[-1]]
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return _clean(merged, defs)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        out[key] = _clean(value, defs) if key != "properties" else {
            name: _clean(prop, defs) for name, prop in value.items()
        }
    if out.get("type") == "object" and "properties" in out:
        out.setdefault("additionalProperties", False)
    # Pydantic renders `x: int | None = None` as anyOf[int, null]; collapse it for providers.
    any_of = out.get("anyOf")
    if isinstance(any_of, list) and len(any_of) == 2 and {"type": "null"} in any_of:
        other = next(s for s in any_of if s != {"type": "null"})
        del out["anyOf"]
        out = {**other, **out}
    if "default" in out and out["default"] is None:
        del out["default"]  # "leave it out" says the same, in fewer characters every request
    return out


def validate_json_schema(schema: Mapping[str, Any], args: Mapping[str, Any],
                         *, max_string_chars: int = MAX_STRING_CHARS) -> dict[str, Any]:
    """Coerce and validate ``args`` against a raw JSON schema (external and MCP tools)."""
    props: Mapping[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    out: dict[str, Any] = {}
    problems: list[str] = []
    closed = schema.get("additionalProperties", False) is False
    for key, value in args.items():
        prop = props.get(key)
        if prop is None:
            if closed and props:
                problems.append(f"`{key}` is not a parameter of this tool; remove it")
                continue
            out[key] = value
            continue
        if value is None and key not in required and not _accepts_null(prop):
            continue
        if isinstance(value, str) and len(value) > max_string_chars:
            problems.append(f"`{key}` is too long (at most {max_string_chars} characters)")
            continue
        out[key] = _coerce_scalar(value, prop)
    problems += [f"`{k}` is required" for k in sorted(required - out.keys())
                 if not any(p.startswith(f"`{k}`") for p in problems)]
    if not problems:
        # Imported here: with its format extras installed, as beside JupyterLab, importing
        # jsonschema takes most of a second, which %load_ext should not pay.
        import jsonschema  # noqa: PLC0415

        validator = jsonschema.Draft202012Validator(schema)
        for err in sorted(validator.iter_errors(out), key=lambda e: list(e.absolute_path)):
            where = ".".join(str(p) for p in err.absolute_path) or "(arguments)"
            problems.append(f"`{where}`: {_short_message(err.message)}")
    if problems:
        raise ParamsError("; ".join(problems))
    return out


def _short_message(message: str, limit: int = 200) -> str:
    return message if len(message) <= limit else message[:limit] + "..."


_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off"}


def _coerce_scalar(value: Any, prop: Mapping[str, Any]) -> Any:
    types = _types(prop)
    if not isinstance(value, str) or "string" in types:
        if isinstance(value, (int, float)) and not isinstance(value, bool) and types == {"string"}:
            return str(value)
        return value
    text = value.strip()
    if "boolean" in types and text.lower() in _TRUE | _FALSE:
        return text.lower() in _TRUE
    if "integer" in types:
        try:
            return int(text)
        except ValueError:
            pass
    if "number" in types:
        try:
            return float(text)
        except ValueError:
            pass
    if types & {"object", "array"}:
        return _maybe_json(text)
    return value

"""Tool declarations and the argument checks every call goes through before it runs.

A tool is declared once, as an OpenAI function-calling schema plus a flag that says whether it
changes the world. The schema is what agents see and also what arguments are checked against,
so the two cannot drift apart.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from datagauntlet.core.action_log import strict_canonical_json

# A compiled check: True when the value passes; the message is built only when it does not.
Check = Callable[[Any], bool]

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    mutates: bool = False

    @cached_property
    def accepts(self) -> Check:
        """This tool's argument check, compiled once per schema (see `compile_check`): a tool
        whose schema depends on its owner is a new `Tool` every episode, its check is not."""
        return shared_check(self.parameters)

    def __getstate__(self) -> dict[str, Any]:
        # The compiled check is a closure: leave it out, the copy compiles its own.
        return {k: v for k, v in self.__dict__.items() if k != "accepts"}

    def spec(self) -> dict[str, Any]:
        """The OpenAI function-calling form of this tool."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


def params(
    properties: dict[str, dict[str, Any]], required: list[str] | None = None
) -> dict[str, Any]:
    """An object schema that refuses unknown arguments; every property required by default."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties) if required is None else required,
        "additionalProperties": False,
    }


def _type_ok(value: Any, type_name: str) -> bool:
    if type_name in ("integer", "number") and isinstance(value, bool):
        return False
    if type_name == "integer" and isinstance(value, float):
        return False
    if type_name == "number" and isinstance(value, float) and not math.isfinite(value):
        return False
    return isinstance(value, _JSON_TYPES[type_name])


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def check_value(value: Any, schema: dict[str, Any], path: str) -> str | None:
    """The first way `value` breaks `schema` (a small JSON-Schema subset), or None."""
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else list(types)
        if not any(_type_ok(value, t) for t in names):
            return f"{path} must be {' or '.join(names)}, got {_describe(value)}"
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(repr(v) for v in schema["enum"])
        return f"{path} must be one of {allowed}"
    if isinstance(value, str) and len(value) > schema.get("maxLength", math.inf):
        return f"{path} is longer than {schema['maxLength']} characters"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if value < schema.get("minimum", -math.inf):
            return f"{path} must be >= {schema['minimum']}"
        if value > schema.get("maximum", math.inf):
            return f"{path} must be <= {schema['maximum']}"
    if isinstance(value, list):
        if len(value) > schema.get("maxItems", math.inf):
            return f"{path} has more than {schema['maxItems']} items"
        item_schema = schema.get("items")
        if item_schema:
            for i, item in enumerate(value):
                problem = check_value(item, item_schema, f"{path}[{i}]")
                if problem:
                    return problem
    if isinstance(value, dict) and (schema.get("properties") or "required" in schema):
        return check_object(value, schema, path)
    return None


def check_object(value: dict[str, Any], schema: dict[str, Any], path: str) -> str | None:
    props: dict[str, Any] = schema.get("properties", {})
    for name in schema.get("required", []):
        if name not in value:
            return f"missing required argument {_join(path, name)!r}"
    if schema.get("additionalProperties") is False:
        extra = sorted(k for k in value if k not in props)
        if extra:
            return f"unexpected argument {_join(path, str(extra[0]))!r}; allowed: {sorted(props)}"
    for name, sub in props.items():
        if name in value:
            problem = check_value(value[name], sub, _join(path, name))
            if problem:
                return problem
    return None


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def check_arguments(tool: Tool, args: Any) -> str | None:
    """Why these arguments cannot be passed to `tool`, or None when they can."""
    if not isinstance(args, dict):
        return f"arguments to {tool.name} must be a JSON object, got {_describe(args)}"
    if tool.accepts(args):
        return None
    return check_object(args, tool.parameters, "") or "arguments do not match the schema"


# --- compiled checks ----------------------------------------------------------------------
# `compile_check(schema)(v)` is True exactly when `check_value(v, schema, path)` is None: the
# same rules, decided once per schema instead of once per value, with no path strings. The
# schema is turned into the source of one Python function (its constants passed in, never
# written into the source), so a list of 100,000 records is checked in one loop with no call
# per field. A schema shape the compiler does not know is checked by the interpreter above,
# so nothing is skipped.

_KNOWN_TYPES = frozenset({"string", "integer", "number", "boolean", "array", "object", "null"})
_TYPE_TESTS = {
    "string": "isinstance({v}, str)",
    "integer": "(isinstance({v}, int) and not isinstance({v}, bool))",
    "number": (
        "((isinstance({v}, int) and not isinstance({v}, bool))"
        " or (isinstance({v}, float) and isfinite({v})))"
    ),
    "boolean": "isinstance({v}, bool)",
    "array": "isinstance({v}, list)",
    "object": "isinstance({v}, dict)",
    "null": "{v} is None",
}


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _compilable(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else types
        if not isinstance(names, list) or not names:
            return False
        if not all(isinstance(n, str) and n in _KNOWN_TYPES for n in names):
            return False
    if "enum" in schema and not isinstance(schema["enum"], list):
        return False
    for key in ("maxLength", "minimum", "maximum", "maxItems"):
        if key in schema and not _is_number(schema[key]):
            return False
    if "properties" in schema and not isinstance(schema["properties"], dict):
        return False
    return isinstance(schema.get("required", []), list)


class _Source:
    """The lines of one generated check function and the constants it reads."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.consts: dict[str, Any] = {"isfinite": math.isfinite, "_is_number": _is_number}
        self._names = 0

    def name(self, prefix: str) -> str:
        self._names += 1
        return f"{prefix}{self._names}"

    def const(self, value: Any) -> str:
        name = self.name("c")
        self.consts[name] = value
        return name

    def add(self, depth: int, line: str) -> None:
        self.lines.append("    " * depth + line)


def _emit(src: _Source, schema: Any, v: str, depth: int, top: bool) -> None:
    """Lines that `return False` when the value named `v` breaks `schema` (at the top: as
    check_object does, the value being a dict)."""
    if not _compilable(schema):
        fallback = check_object if top else check_value
        check = src.const(lambda value, s=schema, f=fallback: f(value, s, "") is None)
        src.add(depth, f"if not {check}({v}): return False")
        return
    if not top:
        _emit_value_rules(src, schema, v, depth)
        if not (schema.get("properties") or "required" in schema):
            return
        if _only_type(schema) != "object":  # else a non-dict has already returned False
            src.add(depth, f"if isinstance({v}, dict):")
            depth += 1
    _emit_object(src, schema, v, depth)
    if not top:
        src.add(depth, "pass")


def _only_type(schema: dict[str, Any]) -> str | None:
    """The one type a schema allows, when it names exactly one (its test then runs first, so
    later rules need not test the type again)."""
    types = schema.get("type")
    if isinstance(types, str):
        return types
    if isinstance(types, list) and len(types) == 1:
        return types[0]  # type: ignore[no-any-return]
    return None


def _emit_value_rules(src: _Source, schema: dict[str, Any], v: str, depth: int) -> None:
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else types
        test = " or ".join(_TYPE_TESTS[n].format(v=v) for n in names)
        src.add(depth, f"if not ({test}): return False")
    if "enum" in schema:
        src.add(depth, f"if {v} not in {src.const(schema['enum'])}: return False")
    only = _only_type(schema)
    if "maxLength" in schema:
        limit = src.const(schema["maxLength"])
        guard = "" if only == "string" else f"isinstance({v}, str) and "
        src.add(depth, f"if {guard}len({v}) > {limit}: return False")
    if "minimum" in schema or "maximum" in schema:
        lo = src.const(schema.get("minimum", -math.inf))
        hi = src.const(schema.get("maximum", math.inf))
        src.add(depth, f"if _is_number({v}) and ({v} < {lo} or {v} > {hi}): return False")
    if "maxItems" in schema or schema.get("items"):
        inner = depth
        if only != "array":
            src.add(depth, f"if isinstance({v}, list):")
            inner = depth + 1
        if "maxItems" in schema:
            src.add(inner, f"if len({v}) > {src.const(schema['maxItems'])}: return False")
        if schema.get("items"):
            item = src.name("x")
            src.add(inner, f"for {item} in {v}:")
            _emit(src, schema["items"], item, inner + 1, top=False)
            src.add(inner + 1, "pass")  # an items schema with no rules writes no lines
        src.add(inner, "pass")


def _emit_object(src: _Source, schema: dict[str, Any], v: str, depth: int) -> None:
    props: dict[str, Any] = schema.get("properties", {})
    for name in schema.get("required", []):
        src.add(depth, f"if {src.const(name)} not in {v}: return False")
    if schema.get("additionalProperties") is False:
        allowed = src.const(frozenset(props))
        src.add(depth, f"if not {allowed}.issuperset({v}): return False")
    required = set(schema.get("required", []))
    for name, sub in props.items():
        key = src.const(name)
        field = src.name("x")
        if name in required:  # present: its test above has returned False otherwise
            src.add(depth, f"{field} = {v}[{key}]")
            _emit(src, sub, field, depth, top=False)
            continue
        src.add(depth, f"if {key} in {v}:")
        src.add(depth + 1, f"{field} = {v}[{key}]")
        _emit(src, sub, field, depth + 1, top=False)


def compile_check(schema: Any, top: bool = False) -> Check:
    """A predicate for `schema`; `top` compiles it as check_object does (always an object)."""
    src = _Source()
    if top:
        src.add(1, "if not isinstance(v, dict): return False")
    _emit(src, schema, "v", 1, top)
    src.add(1, "return True")
    code = "def check(v):\n" + "\n".join(src.lines) + "\n"
    namespace = dict(src.consts)
    # The source is this module's own templates; schema values reach it only as constants.
    exec(compile(code, "<compiled argument check>", "exec"), namespace)
    return namespace["check"]  # type: ignore[no-any-return]


# Compiled top-level checks by the schema's canonical JSON text: equal text, equal schema, so
# the same predicate (a check holds no state). Bounded: schemas made per instance can vary.
_SHARED_CHECKS: dict[str, Check] = {}
SHARED_CHECKS_MAX = 256


def shared_check(schema: Any) -> Check:
    """`compile_check(schema, top=True)`, compiled once for every schema with the same
    canonical JSON; a schema that is not plain JSON is compiled on its own."""
    try:
        key = strict_canonical_json(schema)
    except ValueError:
        return compile_check(schema, top=True)
    check = _SHARED_CHECKS.get(key)
    if check is None:
        if len(_SHARED_CHECKS) >= SHARED_CHECKS_MAX:
            _SHARED_CHECKS.clear()
        check = _SHARED_CHECKS[key] = compile_check(schema, top=True)
    return check


def check_tool_schema(tool: Tool) -> list[str]:
    """Problems with a tool's declaration (used by check_env)."""
    problems = []
    if not tool.name.replace("_", "").isalnum() or len(tool.name) > 64:
        problems.append(f"tool name {tool.name!r} is not a valid function name")
    if not tool.description.strip():
        problems.append(f"tool {tool.name} has no description")
    p = tool.parameters
    if p.get("type") != "object" or not isinstance(p.get("properties"), dict):
        problems.append(f"tool {tool.name}: parameters must be an object schema with properties")
        return problems
    for name in p.get("required", []):
        if name not in p["properties"]:
            problems.append(f"tool {tool.name}: required {name!r} is not a property")
    for name, sub in p["properties"].items():
        if "type" not in sub:
            problems.append(f"tool {tool.name}: property {name!r} has no type")
        if not sub.get("description"):
            problems.append(f"tool {tool.name}: property {name!r} has no description")
    return problems

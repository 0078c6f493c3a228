"""Tool declarations and the argument checks every call goes through before it runs.

A tool is declared once, as an OpenAI function-calling schema plus a flag that says whether it
changes the world. The schema is what agents see and also what arguments are checked against,
so the two cannot drift apart.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

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
    return check_object(args, tool.parameters, "")


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

"""The one check of a run file's fields: every value the report, `show` and `rescore` read has the
type they expect, or the run is refused with an error naming the file, the line and the field.

A run file is untrusted input (anyone can hand one over), so nothing downstream may meet a list
where it expects an object or a string where it expects a number.
"""

from __future__ import annotations

from typing import Any


class RunError(ValueError):
    """A path that is not a run this package can read; the message says what was expected."""


def kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


class Fields:
    """Typed reads of one JSON object; a missing optional field reads as its default."""

    def __init__(self, obj: Any, where: str) -> None:
        if not isinstance(obj, dict):
            raise RunError(f"{where}: expected a JSON object, got {kind_of(obj)}")
        self.obj, self.where = obj, where

    def has(self, key: str) -> bool:
        return key in self.obj

    def _refuse(self, key: str, want: str, value: Any) -> RunError:
        return RunError(f"{self.where}: field {key!r} must be {want}, got {kind_of(value)}")

    def text(self, key: str, default: str | None = None) -> str | None:
        value = self.obj.get(key)
        if value is None:
            return default
        if not isinstance(value, str):
            raise self._refuse(key, "a string", value)
        return value

    def label(self, key: str, default: str | None = None) -> str | None:
        """A name that may be written as a string or an integer (a task id, a seed's split)."""
        value = self.obj.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        return self.text(key, default)

    def integer(self, key: str, default: int | None = None, minimum: int = 0) -> int | None:
        value = self.obj.get(key)
        if value is None:
            return default
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            raise self._refuse(key, f"an integer >= {minimum}", value)
        return value

    def number(self, key: str, default: float | None = None) -> float | None:
        value = self.obj.get(key)
        if value is None:
            return default
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise self._refuse(key, "a number", value)
        return float(value)

    def flag(self, key: str, default: bool) -> bool:
        value = self.obj.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self._refuse(key, "true or false", value)
        return value

    def mapping(self, key: str) -> dict[str, Any]:
        value = self.obj.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self._refuse(key, "an object", value)
        return value

    def fields(self, key: str) -> Fields:
        return Fields(self.mapping(key), f"{self.where}: {key}")

    def numbers(self, key: str) -> dict[str, float]:
        out = {}
        for name, value in self.mapping(key).items():
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise self._refuse(f"{key}.{name}", "a number", value)
            out[name] = float(value)
        return out

    def items(self, key: str) -> list[Any]:
        value = self.obj.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self._refuse(key, "an array", value)
        return value


def chat_message(obj: Any, where: str) -> dict[str, Any]:
    """One message in the OpenAI chat shape, with every field the readers use type-checked."""
    f = Fields(obj, where)
    out: dict[str, Any] = {"role": f.text("role", "?")}
    content = f.obj.get("content")
    if content is not None and not isinstance(content, (str, list)):
        raise f._refuse("content", "a string or an array of parts", content)
    if content is not None:
        out["content"] = content
    call_id = f.text("tool_call_id")
    if call_id is not None:
        out["tool_call_id"] = call_id
    calls = [tool_call(c, f"{where}: tool_calls[{i}]") for i, c in enumerate(f.items("tool_calls"))]
    if calls:
        out["tool_calls"] = calls
    return out


def tool_call(obj: Any, where: str) -> dict[str, Any]:
    """A tool call as `{"id", "type", "function": {"name", "arguments"}}`; a verifiers call may
    carry name and arguments at its top level."""
    f = Fields(obj, where)
    fn = f.fields("function") if f.has("function") else f
    arguments = fn.obj.get("arguments", "")
    if not isinstance(arguments, (str, dict)):
        raise fn._refuse("arguments", "a string or an object", arguments)
    return {
        "id": f.label("id"),
        "type": "function",
        "function": {"name": fn.text("name", ""), "arguments": arguments},
    }


def messages_of(f: Fields, key: str = "messages") -> list[dict[str, Any]]:
    return [chat_message(m, f"{f.where}: {key}[{i}]") for i, m in enumerate(f.items(key))]


CALIBRATION_ROW_FIELDS = ("policy", "n", "mean_reward", "min_reward", "components", "config")


def calibration_row(obj: Any, where: str) -> dict[str, Any]:
    """A `calibrate --json` row with the fields the report reads type-checked."""
    f = Fields(obj, where)
    row = dict(f.obj)
    row["policy"] = f.text("policy", "?")
    row["n"] = f.integer("n", 0)
    row["mean_reward"] = f.number("mean_reward", 0.0)
    row["min_reward"] = f.number("min_reward", 0.0)
    row["components"] = f.numbers("components")
    row["metrics"] = f.mapping("metrics")
    row["config"] = f.mapping("config")
    row["versions"] = f.mapping("versions")
    return row


def result_record(obj: Any, where: str) -> dict[str, Any]:
    """A `datagauntlet eval` results.jsonl record as every reader takes it (`show`, `rescore`,
    `report`, `merge`, `eval --resume`): each field they read present with its type."""
    f = Fields(obj, where)
    for key in ("task_id", "env", "model", "status", "stop"):
        if f.text(key) is None:
            raise RunError(f"{where}: field {key!r} is missing")
    if f.integer("rollout") is None or f.number("reward") is None or f.integer("turns") is None:
        raise RunError(f"{where}: a record needs 'rollout', 'reward' and 'turns'")
    f.label("split")
    f.integer("seed", None, minimum=-(1 << 63))
    f.mapping("task")
    f.numbers("components")
    f.mapping("config")
    f.mapping("metrics")
    f.mapping("versions")
    f.text("error")
    f.text("error_kind")
    f.fields("usage").integer("total_tokens", 0)
    messages_of(f)
    return f.obj

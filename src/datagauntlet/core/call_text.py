"""What a tool call sends and answers, as text: arguments parsed strictly, names and values
cut for the log, results summarised, tool specs copied for each caller. Nothing here raises
for what an agent can send except `loads_strict`, whose ValueError the episode answers."""

from __future__ import annotations

import copy
import json
import marshal
from typing import Any

from datagauntlet.core.action_log import canonical_prefix

SUMMARY_CHARS = 240
# A refused call's arguments are logged whole up to this many characters of canonical JSON,
# beyond it as a prefix of half this plus the length and a sha256 (action_log.bounded_args).
REFUSED_ARGS_CHARS = 1024
TOOL_NAME_CHARS = 200


def summarize(result: dict[str, Any]) -> str:
    """The log's line for a result: its canonical JSON, cut to SUMMARY_CHARS (only as much of
    a large result is encoded as the cut keeps)."""
    text = canonical_prefix(result, SUMMARY_CHARS + 1)
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 3] + "..."


def fresh_copy(value: Any) -> Any:
    """`copy.deepcopy(value)` for JSON-like data, by a marshal round trip: the same new
    containers (shared ones stay shared), 5-6x faster on tool specs, which every session and
    rollout asks for. What marshal cannot write (a dict subclass, any other object) is
    deep-copied."""
    try:
        return marshal.loads(marshal.dumps(value))
    except ValueError:
        return copy.deepcopy(value)


def logged_name(name: Any) -> str:
    """A tool name as logged: what was sent, cut to TOOL_NAME_CHARS (a name is never long)."""
    text = name if isinstance(name, str) else safe_repr(name)
    return text if len(text) <= TOOL_NAME_CHARS else text[: TOOL_NAME_CHARS - 3] + "..."


def jsonable(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return False
    return True


def safe_repr(value: Any) -> str:
    try:
        text = repr(value)
    except RecursionError:
        return f"<{type(value).__name__} nested too deeply>"
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 3] + "..."


def no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key[:40]!r} in one object")
        out[key] = value
    return out


def no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def loads_strict(text: str) -> Any:
    """Parse JSON, refusing what `json.loads` lets through: duplicate keys (the last one would
    silently win), NaN and Infinity; nesting too deep for the parser is a ValueError too."""
    try:
        return json.loads(text, object_pairs_hook=no_duplicate_keys, parse_constant=no_constant)
    except RecursionError:
        raise ValueError("nested too deeply") from None

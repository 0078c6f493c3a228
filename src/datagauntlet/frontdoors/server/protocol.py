"""Reading requests: bounded bodies, strict JSON, and the shapes each route accepts.

Every way a request can be wrong ends in a `BadRequest` whose message says what was expected;
the app turns it into a JSON 4xx. Nothing here raises anything else for client input.
"""

from __future__ import annotations

import json
from typing import Any

from datagauntlet.core.episode import loads_strict

try:  # several times faster than json for the replies that carry whole pages of records
    import orjson
except ImportError:  # pragma: no cover - orjson comes with the server extra
    orjson = None  # type: ignore[assignment]


class BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def parse_json(raw: bytes | str, limit: int) -> Any:
    """One request body or message (bytes, or the text a WebSocket text frame carried)."""
    if len(raw) > limit:
        raise BadRequest(413, f"body of {len(raw):,} bytes is over the limit of {limit:,} bytes")
    try:
        text = raw if isinstance(raw, str) else raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequest(400, "body is not UTF-8 text") from None
    if not text.strip():
        return {}
    try:
        return loads_strict(text)
    except ValueError as exc:
        raise BadRequest(400, f"body is not valid JSON: {exc}") from None


def dumps(value: Any) -> str:
    """A reply as compact JSON text (the same values `json.dumps` would write)."""
    if orjson is not None:
        try:
            return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
        except TypeError:  # an int past 64 bits, a type orjson refuses: json decides
            pass
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def object_with(value: Any, allowed: dict[str, tuple[type, ...]], what: str) -> dict[str, Any]:
    """`value` as an object holding only `allowed` keys, each of an allowed type."""
    if not isinstance(value, dict):
        raise BadRequest(400, f"{what} must be a JSON object with: {_expected(allowed)}")
    for key in value:
        if key not in allowed:
            unknown = sorted(k for k in value if k not in allowed)[0]
            raise BadRequest(
                400, f"{what}: unknown field {unknown!r}; expected: {_expected(allowed)}"
            )
    for key, types in allowed.items():
        if key in value and value[key] is not None and not _is(value[key], types):
            raise BadRequest(400, f"{what}: {key} must be {'/'.join(t.__name__ for t in types)}")
    return value


def _expected(allowed: dict[str, tuple[type, ...]]) -> str:
    return ", ".join(f"{k} ({'/'.join(t.__name__ for t in ts)})" for k, ts in allowed.items())


def _is(value: Any, types: tuple[type, ...]) -> bool:
    if isinstance(value, bool) and bool not in types:
        return False
    return isinstance(value, types)


SESSION_FIELDS: dict[str, tuple[type, ...]] = {
    "env": (str,),
    "config": (dict,),
    "split": (str,),
    "task": (int,),
}
CALL_FIELDS: dict[str, tuple[type, ...]] = {"name": (str,), "arguments": (dict, str, list)}
ANSWER_FIELDS: dict[str, tuple[type, ...]] = {"text": (str,)}


def session_request(body: Any) -> tuple[str, dict[str, Any], str, int]:
    req = object_with(body, SESSION_FIELDS, "a new session")
    if not req.get("env"):
        raise BadRequest(400, "a new session needs env (an id from GET /envs)")
    return req["env"], req.get("config") or {}, req.get("split") or "eval", req.get("task") or 0

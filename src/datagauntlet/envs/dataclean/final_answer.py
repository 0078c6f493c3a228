"""dataclean reads a model's final message as its program, as the original's contract did.

The reply holds the JSON program: `{"operations": [...]}` or the bare array, optionally in
one fenced code block. It becomes one `submit_program` call, checked and graded as such.
"""

from __future__ import annotations

import json
import re
from typing import Any

from datagauntlet.core.call_text import loads_strict
from datagauntlet.core.final_answer import FinalAnswer

_FENCE = re.compile(r"^```[A-Za-z0-9_-]*[ \t]*\n(?P<body>.*)\n```$", re.DOTALL)


def read_program(text: str) -> dict[str, Any]:
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group("body").strip()
    try:
        value = loads_strict(body)
    except ValueError as exc:
        raise ValueError(f"it is not a JSON program ({exc})") from None
    if isinstance(value, dict) and set(value) == {"operations"}:
        value = value["operations"]
    if not isinstance(value, list):
        raise ValueError('expected {"operations": [...]} or a JSON array of operations')
    return {"operations": value}


def write_program(arguments: dict[str, Any]) -> str:
    return json.dumps({"operations": arguments["operations"]}, ensure_ascii=False)


PROGRAM_REPLY = FinalAnswer("submit_program", read_program, write_program)

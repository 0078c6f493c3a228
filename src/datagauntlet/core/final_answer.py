"""How an env reads a model's final assistant message as a submission, if it does at all.

Some contracts are a single reply (dataclean's original: the reply *is* the JSON program).
An episode that declares a `FinalAnswer` has its last message turned into one call of the
named tool; every front door does this the same way, through `Episode.final_answer`, so the
submission is checked, logged and graded exactly like a tool call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FinalAnswer:
    """`tool` receives `read(text)` as its arguments; `write(arguments)` is the inverse (the
    text a model would write for those arguments: scripted models use it)."""

    tool: str
    read: Callable[[str], Any]
    write: Callable[[dict[str, Any]], str]

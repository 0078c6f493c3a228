"""The limits of an env's episodes, declared once in its registration.

`max_turns` is what a front door allows a model (model calls per episode); a config may
change it within 1..`max_turns_cap`. In process no model is counted, so `max_calls` is the
backstop that stops a runaway policy: every call counts, refused ones too, and reaching it
ends the episode ("call limit"). It may be a function of the episode when the right bound
depends on the world (a quota, say). `executed_calls_are_turns` makes executed tool calls
count against `max_turns` in process as well ("turn limit").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

DEFAULT_MAX_TURNS = 30
DEFAULT_MAX_TURNS_CAP = 1_000


@dataclass(frozen=True)
class Limits:
    max_turns: int = DEFAULT_MAX_TURNS
    max_turns_cap: int = DEFAULT_MAX_TURNS_CAP
    max_calls: int | Callable[[Any], int] | None = None
    executed_calls_are_turns: bool = False

    def __post_init__(self) -> None:
        if not 1 <= self.max_turns <= self.max_turns_cap:
            raise ValueError(f"max_turns {self.max_turns} is outside 1..{self.max_turns_cap}")

    def calls_allowed(self, episode: Any) -> int | None:
        """The call backstop for one episode (None: no backstop)."""
        if callable(self.max_calls):
            return int(self.max_calls(episode))
        return self.max_calls

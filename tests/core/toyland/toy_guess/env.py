"""The toy env: one config, one episode with two tools, one grader, two policies."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from datagauntlet.core.config import EnvConfig
from datagauntlet.core.env import Environment, Policy
from datagauntlet.core.episode import Episode, Task
from datagauntlet.core.score import Score
from datagauntlet.core.toolset import ToolError, params, tool
from toyland.toy_guess.registration import REGISTRATION

WEIGHTS = {"right": 0.75, "peeked": 0.25}


@dataclass(frozen=True)
class ToyGuessConfig(EnvConfig):
    ceiling: int = 100

    def validate(self) -> None:
        if self.ceiling < 2:
            raise ValueError(f"ceiling must be >= 2, got {self.ceiling}")


class ToyGuessEpisode(Episode[ToyGuessConfig]):
    def __init__(self, env: Environment[ToyGuessConfig], task: Task) -> None:
        super().__init__(env, task)
        self.secret = task.seed % self.config.ceiling
        self.peeks = 0
        self.answer_given: int | None = None

    @property
    def system_prompt(self) -> str:
        return "Find the number with peek, then answer it."

    @property
    def prompt(self) -> str:
        return f"The number is below {self.config.ceiling}."

    @tool("See the number.")
    def peek(self) -> dict[str, Any]:
        self.peeks += 1
        return {"n": self.secret}

    @tool(
        "Give the number; ends the episode.",
        params({"n": {"type": "integer", "minimum": 0, "description": "your answer"}}),
        mutates=True,
    )
    def answer(self, n: int) -> dict[str, Any]:
        if n >= self.config.ceiling:
            raise ToolError(f"n must be below {self.config.ceiling}")
        self.answer_given = n
        self.finish("answered")
        return {"status": "received"}

    def _grade(self) -> Score:
        if self.answer_given is None:
            return Score.zero(WEIGHTS)
        values = {"right": float(self.answer_given == self.secret), "peeked": float(self.peeks > 0)}
        return Score.build(WEIGHTS, values, {"peeks": self.peeks})

    def fingerprint(self) -> str:
        state = repr((self.peeks, self.answer_given, self.done))
        return hashlib.sha256(state.encode()).hexdigest()


def peek_then_answer(ep: Episode[Any]) -> None:
    ep.call("answer", {"n": ep.call("peek")["n"]})


def guess_zero(ep: Episode[Any]) -> None:
    ep.call("answer", {"n": 0})


class ToyGuessEnv(Environment[ToyGuessConfig]):
    registration = REGISTRATION
    config_cls = ToyGuessConfig
    weights = WEIGHTS
    default_task_count = 5

    def episode(self, task: Task) -> ToyGuessEpisode:
        return ToyGuessEpisode(self, task)

    def policies(self) -> dict[str, Policy]:
        return {"peek-then-answer": peek_then_answer, "guess-zero": guess_zero}

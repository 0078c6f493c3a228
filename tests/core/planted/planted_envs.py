"""The small envs the planted-bug tests play: a one-tool guessing game, and a ticking one
whose tool refuses, crashes and counts turns on cue.

The files of this folder hold core rules that survived planted bugs (by hand, issue 18, and by
mutation testing, docs/mutation/) until their tests existed, a file for each part of the core.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from datagauntlet.core.config import EnvConfig
from datagauntlet.core.env import Environment, Policy
from datagauntlet.core.episode import Episode, Task
from datagauntlet.core.final_answer import FinalAnswer
from datagauntlet.core.limits import Limits
from datagauntlet.core.score import Score
from datagauntlet.core.toolset import ToolError, params, tool

GUESS_WEIGHTS = {"right": 1.0}


@dataclass(frozen=True)
class GuessConfig(EnvConfig):
    pass


class GuessEpisode(Episode[GuessConfig]):
    system_prompt = "guess"  # type: ignore[assignment]
    prompt = "say a number"  # type: ignore[assignment]

    def __init__(self, env: GuessEnv, task: Task) -> None:
        super().__init__(env, task)
        self.said: int | None = None

    @tool("Say the number.", params({"n": {"type": "integer"}}), mutates=True)
    def say(self, n: int) -> dict[str, Any]:
        if n < 0:
            raise ToolError("n must not be negative")
        self.said = n
        self.finish("said")
        return {"status": "received", "n": n}

    def _grade(self) -> Score:
        return Score.build(GUESS_WEIGHTS, {"right": float(self.said == 7)})

    def fingerprint(self) -> str:
        return repr(self.said)


def read_number(text: str) -> dict[str, Any]:
    if not text.strip().isdigit():
        raise ValueError(f"not a number: {text[:20]!r}")
    return {"n": int(text)}


class GuessEnv(Environment[GuessConfig]):
    id = "guess"
    config_cls = GuessConfig
    weights = GUESS_WEIGHTS
    reference = "seven"
    declared: FinalAnswer | None = FinalAnswer("say", read_number, lambda a: str(a["n"]))

    def episode(self, task: Task) -> GuessEpisode:
        return GuessEpisode(self, task)

    def policies(self) -> dict[str, Policy]:
        return {"seven": lambda ep: ep.call("say", {"n": 7})}

    @property
    def final_answer(self) -> FinalAnswer | None:
        return self.declared


def guess_episode(declared: FinalAnswer | None = GuessEnv.declared) -> GuessEpisode:
    env = GuessEnv(GuessConfig())
    env.declared = declared
    return env.episode(env.tasks("eval", 1)[0])


class TickEpisode(Episode[GuessConfig]):
    system_prompt = "tick"  # type: ignore[assignment]
    prompt = "tick until told to stop"  # type: ignore[assignment]

    @tool("Tick once.", params({"n": {"type": "integer"}}), mutates=True)
    def tick(self, n: int) -> dict[str, Any]:
        self.note(seen=n)  # noted before any refusal: a refused call keeps its notes
        if n < 0:
            raise ToolError("n must not be negative")
        if n == 13:
            raise KeyError("unlucky")  # a bug in the env: must not reach the agent
        return {"n": n, "text": "x" * n}

    def _grade(self) -> Score:
        return Score.build(GUESS_WEIGHTS, {"right": 0.0})

    def fingerprint(self) -> str:
        return ""


class TickEnv(GuessEnv):
    limits = Limits(max_turns=3, executed_calls_are_turns=True)

    def episode(self, task: Task) -> TickEpisode:  # type: ignore[override]
        return TickEpisode(self, task)


def tick_episode(turns: int = 3) -> TickEpisode:
    env = TickEnv(GuessConfig(max_turns=turns))
    return env.episode(env.tasks("eval", 1)[0])

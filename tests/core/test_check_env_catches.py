"""check_env is not a formality: each broken promise in a toy env is caught."""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from typing import Any

import pytest

from datagauntlet.core.config import EnvConfig
from datagauntlet.core.conformance import ConformanceError, check_env
from datagauntlet.core.env import Environment, Policy
from datagauntlet.core.episode import Episode, Task
from datagauntlet.core.score import Score
from datagauntlet.core.toolset import params, tool

WEIGHTS = {"right": 1.0}


@dataclass(frozen=True)
class ToyConfig(EnvConfig):
    flaw: str = ""


class ToyEpisode(Episode[ToyConfig]):
    def __init__(self, env: ToyEnv, task: Task) -> None:
        super().__init__(env, task)
        self.flaw = env.config.flaw
        self.secret = task.seed % 100
        self.answered: int | None = None
        self.peeks = 0
        self.view = {"n": self.secret}
        self.closes = 0

    system_prompt = "toy"  # type: ignore[assignment]
    prompt = "find the number"  # type: ignore[assignment]

    @tool("see the number")
    def peek(self) -> dict[str, Any]:
        self.peeks += 1
        if self.flaw == "aliased-result":
            return self.view  # the grader's own dict: a caller can edit the truth
        return {"n": self.secret}

    @tool("give the number", params({"n": {"type": "integer", "description": "n"}}))
    def answer(self, n: int) -> dict[str, Any]:
        self.answered = n
        self.finish("answered")
        return {"ok": True}

    def _grade(self) -> Score:
        if self.flaw == "aliased-result":
            return Score.build(WEIGHTS, {"right": float(self.answered == self.view.get("n"))})
        if self.flaw == "credit-for-nothing":
            return Score.build(WEIGHTS, {"right": 0.5})
        return Score.build(WEIGHTS, {"right": float(self.answered == self.secret)})

    def fingerprint(self) -> str:
        state = (self.peeks if self.flaw != "hidden-change" else 0, self.answered)
        return hashlib.sha256(repr(state).encode()).hexdigest()

    def call(self, name: Any, args: Any = None) -> dict[str, Any]:
        if self.flaw == "mutating-refusal" and name == "no_such_tool":
            self.answered = -1
        return super().call(name, args)

    def close(self) -> None:
        self.closes += 1
        if self.flaw == "fragile-close" and self.closes > 1:
            raise RuntimeError("already closed")
        super().close()

    def _refuse(
        self, name: str, args: Any, message: str, args_json: str | None = None
    ) -> dict[str, Any]:
        if self.flaw == "hoarding-refusals":  # keeps everything it was sent
            entry = self.log.open_entry(name, args if isinstance(args, (dict, str)) else repr(args))
            self.log.close_entry(entry, False, message[:100])
            return {"error": message}
        return super()._refuse(name, args, message, args_json)

    def score(self) -> Score:
        score = super().score()
        return dataclasses.replace(score, stamp={}) if self.flaw == "unstamped" else score


class LegacyEpisode(ToyEpisode):
    TOOLS = ("peek", "answer", "reveal")  # declared in one place, handled in another


def good(ep: Episode) -> None:
    n = ep.call("peek")["n"]
    ep.call("answer", {"n": n})


def cheat(ep: Episode) -> None:
    ep.call("answer", {"n": ep.secret})  # type: ignore[attr-defined]


class ToyEnv(Environment):
    id = "toy"
    config_cls = ToyConfig
    weights = WEIGHTS
    reference = "good"

    def episode(self, task: Task) -> ToyEpisode:
        if self.config.flaw == "legacy-tools":
            return LegacyEpisode(self, task)
        return ToyEpisode(self, task)

    def policies(self) -> dict[str, Policy]:
        out: dict[str, Policy] = {"good": good}
        if self.config.flaw == "cheat":
            out["cheat"] = cheat
        return out


def test_a_sound_env_passes() -> None:
    check_env(ToyEnv(ToyConfig()))


@pytest.mark.parametrize(
    ("flaw", "message"),
    [
        ("credit-for-nothing", "with no calls scored"),
        ("mutating-refusal", "changed the world"),
        ("cheat", "not replayable"),
        ("aliased-result", "results share no state with the world"),
        ("legacy-tools", "declarations without handlers"),
        ("fragile-close", "close is safe twice"),
        ("hoarding-refusals", "refused calls keep bounded data in the log"),
        ("unstamped", "every score carries a version stamp"),
    ],
)
def test_broken_promises_are_caught(flaw: str, message: str) -> None:
    with pytest.raises(ConformanceError, match=message):
        check_env(ToyEnv(ToyConfig(flaw=flaw)))


def test_every_check_is_reported_by_name() -> None:
    report = check_env(ToyEnv(ToyConfig()))
    assert report.passed and len(report.names()) == len(set(report.names())) >= 19
    assert "ok   every declared tool has a handler" in str(report)
    broken = check_env(ToyEnv(ToyConfig(flaw="unstamped")), raise_on_failure=False)
    assert [r.name for r in broken.failures()] == ["every score carries a version stamp"]
    assert broken.as_dict()["passed"] is False

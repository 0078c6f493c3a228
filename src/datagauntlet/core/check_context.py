"""What the conformance checks share: the error they raise, and a context that plays each
policy once per task and keeps the recording for every check that reads it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from datagauntlet.core.env import Environment, Policy
from datagauntlet.core.episode import Episode, Task
from datagauntlet.core.replay import ToolCall
from datagauntlet.core.score import Score


class ConformanceError(AssertionError):
    pass


class Recorder:
    """Wraps an episode and records every call and result a policy makes."""

    def __init__(self, ep: Episode[Any]) -> None:
        self._ep = ep
        self.calls: list[ToolCall] = []
        self.results: list[dict[str, Any]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ep, name)

    def call(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        result = self._ep.call(name, args)
        self.calls.append(ToolCall(name, dict(args or {})))
        self.results.append(result)
        return result


@dataclass
class Played:
    recorder: Recorder
    score: Score
    episode: Episode[Any]


@dataclass
class Context:
    env: Environment[Any]
    tasks: list[Task]
    replay: bool
    policies: dict[str, Policy] = field(default_factory=dict)
    _played: dict[tuple[str, str, int], Played] = field(default_factory=dict)

    def play(self, policy: str, task: Task, attempt: int = 0) -> Played:
        """The policy's recorded play of a task (attempt 1 is an independent replay)."""
        key = (policy, task.id, attempt)
        if key not in self._played:
            ep = self.env.episode(task)
            rec = Recorder(ep)
            try:
                self.env.policies()[policy](rec)  # type: ignore[arg-type]
                score = ep.score()
            finally:
                ep.close()
            self._played[key] = Played(rec, score, ep)
        return self._played[key]

    def fresh(self, task: Task) -> Episode[Any]:
        return self.env.episode(task)


Check = Callable[[Context], None]


def fail(message: str) -> None:
    """Stop the check with `message`: what broke, said for the env's author."""
    raise ConformanceError(message)

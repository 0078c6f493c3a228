"""The environment base: a validated config, deterministic tasks, fresh episodes, policies."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Generic, TypeVar

from datagauntlet.core.config import EnvConfig
from datagauntlet.core.episode import Episode, Task
from datagauntlet.core.http_api import HttpHandler
from datagauntlet.core.score import check_weights
from datagauntlet.core.seeding import SPLITS, task_seed

Policy = Callable[[Episode[Any]], None]
ConfigT = TypeVar("ConfigT", bound=EnvConfig)


def sees_truth(policy: Policy) -> Policy:
    """Mark an attack probe that is handed the hidden truth on purpose (an oracle).

    Oracles cannot stand in for a model, since a model never has the truth; front doors that
    replay policies from a message history skip them.
    """
    policy.sees_truth = True  # type: ignore[attr-defined]
    return policy


def policy_sees_truth(policy: Policy) -> bool:
    return bool(getattr(policy, "sees_truth", False))


class Environment(ABC, Generic[ConfigT]):
    """Subclasses set `id`, `config_cls`, `weights`, `reference` and implement the hooks."""

    id: ClassVar[str]
    config_cls: ClassVar[type[EnvConfig]]
    weights: ClassVar[Mapping[str, float]]
    metric_names: ClassVar[tuple[str, ...]] = ()
    reference: ClassVar[str] = "careful"
    # Policies that are attack probes rather than agents (tables list them apart).
    attackers: ClassVar[tuple[str, ...]] = ()
    default_task_count: ClassVar[int] = 60

    def __init__(self, config: ConfigT | None = None) -> None:
        self.config: ConfigT = config if config is not None else self.config_cls()  # type: ignore[assignment]
        check_weights(self.weights)

    @classmethod
    def from_kwargs(cls, **values: Any) -> Environment[Any]:
        return cls(cls.config_cls.build(**values))

    # --- tasks -----------------------------------------------------------------------------
    def tasks(self, split: str = "eval", n: int | None = None, start: int = 0) -> list[Task]:
        if split not in SPLITS:
            raise ValueError(f"unknown split {split!r}; expected one of {', '.join(SPLITS)}")
        count = self.default_task_count if n is None else n
        if count < 0 or start < 0:
            raise ValueError("n and start must be >= 0")
        return [self.make_task(split, i) for i in range(start, start + count)]

    def make_task(self, split: str, index: int) -> Task:
        return Task(f"{split}-{index:05d}", task_seed(self.id, split, index), split, index)

    # --- episodes and policies -------------------------------------------------------------
    @abstractmethod
    def episode(self, task: Task) -> Episode[ConfigT]: ...

    @abstractmethod
    def policies(self) -> dict[str, Policy]: ...

    def calibration_grid(self) -> list[dict[str, Any]]:
        """Config overrides the calibration table covers, one row group each."""
        return [{}]

    def http_api(self) -> HttpHandler | None:
        """The env's native HTTP API, if it has one (served by `datagauntlet serve`)."""
        return None

    def with_config(self, **overrides: Any) -> Environment[Any]:
        return type(self).from_kwargs(**{**self.config.as_dict(), **overrides})

    def describe(self) -> dict[str, Any]:
        return {"env": self.id, "config": self.config.as_dict()}

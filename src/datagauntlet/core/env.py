"""The environment base: a validated config, deterministic tasks, fresh episodes, policies."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from datagauntlet.core.config import EnvConfig
from datagauntlet.core.episode import Episode, Task
from datagauntlet.core.family_module import FamilyModule, load_family_module
from datagauntlet.core.http_api import HttpHandler
from datagauntlet.core.score import check_weights
from datagauntlet.core.seeding import check_split, task_seed

if TYPE_CHECKING:
    from datagauntlet.core.gates import Gate

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
        _ = self.family_module  # a bad module fails at make(), naming the problem

    @cached_property
    def family_module(self) -> FamilyModule | None:
        path = getattr(self.config, "family_module", None)
        return None if path is None else load_family_module(path, self.id)

    def module_splits(self) -> Mapping[str, tuple[int, ...]]:
        return self.family_module.splits if self.family_module else {}

    @classmethod
    def from_kwargs(cls, **values: Any) -> Environment[Any]:
        return cls(cls.config_cls.build(**values))

    # --- tasks -----------------------------------------------------------------------------
    def tasks(self, split: str = "eval", n: int | None = None, start: int = 0) -> list[Task]:
        check_split(split, tuple(self.module_splits()))
        count = self.default_task_count if n is None else n
        if count < 0 or start < 0:
            raise ValueError("n and start must be >= 0")
        stop = start + count
        if split in self.module_splits():  # a family module's split has as many tasks as seeds
            stop = min(stop, len(self.module_splits()[split]))
        return [self.make_task(split, i) for i in range(start, stop)]

    def make_task(self, split: str, index: int) -> Task:
        seeds = self.module_splits().get(split)
        seed = seeds[index] if seeds is not None else task_seed(self.id, split, index)
        return Task(f"{split}-{index:05d}", seed, split, index)

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

    # --- gates (core/gates.py): probes declare their ceilings with `gates.ceiling` ----------
    def extra_gates(self) -> Sequence[Gate]:
        """Gate rows of this env's own, run after the shared ones."""
        return ()

    def truth_values(self, episode: Episode[Any]) -> Iterable[str]:
        """Text derived from the hidden state that must never reach the agent before the end."""
        return ()

    def with_config(self, **overrides: Any) -> Environment[Any]:
        return type(self).from_kwargs(**{**self.config.as_dict(), **overrides})

    def describe(self) -> dict[str, Any]:
        return {"env": self.id, "config": self.config.as_dict()}

"""The environment base: a validated config, deterministic tasks, fresh episodes, policies."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cached_property
from typing import Any, ClassVar, Generic, TypeVar

from datagauntlet.core.config import EnvConfig
from datagauntlet.core.episode import Episode, Task
from datagauntlet.core.family_module import FamilyModule, load_family_module
from datagauntlet.core.final_answer import FinalAnswer
from datagauntlet.core.gate_types import Gate
from datagauntlet.core.http_api import HttpHandler
from datagauntlet.core.limits import Limits
from datagauntlet.core.registration import Registration, load
from datagauntlet.core.score import check_weights
from datagauntlet.core.seeding import check_split, module_ref_key, task_ref, task_seed
from datagauntlet.core.task_info import TaskInfo
from datagauntlet.core.version import PACKAGE_VERSION

Policy = Callable[[Episode[Any]], None]
TASK_HASH_MEMO = 100_000  # tasks whose content hash an env remembers
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
    """Subclasses set `registration` (which gives `id`, `reference` and `limits`),
    `config_cls` and `weights`, and implement `episode` and `policies`."""

    registration: ClassVar[Registration | None] = None
    id: ClassVar[str]
    config_cls: ClassVar[type[EnvConfig]]
    weights: ClassVar[Mapping[str, float]]
    metric_names: ClassVar[tuple[str, ...]] = ()
    reference: ClassVar[str] = "careful"
    limits: ClassVar[Limits] = Limits()
    # Policies that are attack probes rather than agents (tables list them apart).
    attackers: ClassVar[tuple[str, ...]] = ()
    default_task_count: ClassVar[int] = 60
    # A contamination canary the env's exported task records carry (Task.canary), if any.
    canary: ClassVar[str | None] = None
    # What one episode's world holds in this process, played to its end: measured per env
    # (tests/server/test_world_bytes.py checks it is not below what building and playing a
    # world costs); the session server budgets open sessions by it.
    world_bytes_estimate: ClassVar[int] = 4 * 1024 * 1024

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        reg = cls.__dict__.get("registration")
        if reg is not None:
            cls.id = reg.id
            cls.reference = reg.reference
            cls.limits = reg.limits
        config_cls = cls.__dict__.get("config_cls")
        if config_cls is not None:
            config_cls.limits = cls.limits  # the config's max_turns default and bounds

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

    def task_hash(self, task: Task, compute: Callable[[], str]) -> str:
        """The content hash of a task, computed once per task by this env: a task's world is a
        pure function of (config, task), and hashing it costs as much as a short episode."""
        memo = self.__dict__.setdefault("_task_hashes", {})
        digest = memo.get(task)
        if digest is None:
            if len(memo) >= TASK_HASH_MEMO:
                memo.clear()
            digest = memo[task] = compute()
        return digest  # type: ignore[no-any-return]

    @property
    def max_turns(self) -> int:
        """Model turns a front door allows per episode (the config's, within the limits)."""
        return int(self.config.max_turns or self.limits.max_turns)

    @property
    def final_answer(self) -> FinalAnswer | None:
        """How this env reads a model's final message as a submission (None: it does not)."""
        target = self.registration.final_answer if self.registration else None
        return load(target) if target else None  # type: ignore[no-any-return]

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
        return self.new_task(split, index, seed)

    def new_task(self, split: str, index: int, seed: int) -> Task:
        """The task of (split, index) with this seed: every env builds its tasks here, so a
        family module's split is held out like a secret-keyed one (its seeds are the module's
        own) and gets a ref; Task gives secret-keyed splits theirs."""
        seeds = self.module_splits().get(split)
        ref = None
        if seeds is not None:
            keys = self.__dict__.setdefault("_module_ref_keys", {})
            if split not in keys:
                keys[split] = module_ref_key(self.id, split, seeds)
            ref = task_ref(keys[split], split, index, seed)
        return Task(f"{split}-{index:05d}", seed, split, index, ref=ref, canary=self.canary)

    def task_info(self, task: Task) -> TaskInfo:
        """A task's prompts and labels. This default builds the episode to read them; envs
        whose world is costly answer from the task alone (the same text, tested)."""
        ep = self.episode(task)
        try:
            return TaskInfo(task, ep.system_prompt, ep.prompt, self.task_metadata(task))
        finally:
            ep.close()

    def task_metadata(self, task: Task) -> dict[str, Any]:
        """Labels of a task for reports and curricula (never its answer)."""
        return {}

    def report_facts(self, episode: Episode[ConfigT]) -> dict[str, Any]:
        """Facts of a finished episode the env's own tables need beyond its score (read by
        `core/report.py`; may include truth: reports are written after the end)."""
        return {}

    def report_tables(self) -> dict[str, Callable[[], str]]:
        """The env's own docs tables by name, each built by `core/report.py` from columns the
        env supplies; blocks `<!-- table:ENV:NAME -->` of docs/envs/ENV.md are pinned to them."""
        target = self.registration.report_tables if self.registration else None
        return load(target)() if target else {}  # type: ignore[no-any-return]

    def versions(self) -> dict[str, str]:
        """The code's versions every result of this env carries (a score adds its task_hash)."""
        reg = self.registration
        return {
            "package": PACKAGE_VERSION,
            "env": self.id,
            "env_version": reg.version if reg else "unregistered",
            "generator_version": reg.generator_version if reg else "unregistered",
        }

    # --- episodes and policies -------------------------------------------------------------
    @abstractmethod
    def episode(self, task: Task) -> Episode[ConfigT]: ...

    @abstractmethod
    def policies(self) -> dict[str, Policy]: ...

    def calibration_grid(self) -> list[dict[str, Any]]:
        """Config overrides the calibration table covers, one row group each."""
        return [{}]

    def world_bytes(self) -> int:
        """The bytes one episode's world of this config costs the process, an upper estimate
        stated without building one (an env whose worlds grow with its config overrides it)."""
        return self.world_bytes_estimate

    def http_api(self) -> HttpHandler | None:
        """The request handler of the env's native HTTP API, if its registration names one
        (the `serve` door runs it); None: its tools are served over MCP instead."""
        target = self.registration.http_api if self.registration else None
        return load(target) if target else None  # type: ignore[no-any-return]

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

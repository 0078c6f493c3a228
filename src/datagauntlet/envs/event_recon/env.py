"""The event-recon environment: tasks from the split tables, worlds from the seed, episodes."""

from __future__ import annotations

from collections import OrderedDict
from threading import Lock
from typing import Any

from datagauntlet.core.env import Environment, Policy
from datagauntlet.core.episode import Task
from datagauntlet.core.seeding import task_seed
from datagauntlet.core.task_info import TaskInfo
from datagauntlet.envs.event_recon.config import TIERS, EventReconConfig
from datagauntlet.envs.event_recon.episode import TASK_PROMPT, EventReconEpisode
from datagauntlet.envs.event_recon.grading.grader import METRICS, WEIGHTS, Truth
from datagauntlet.envs.event_recon.registration import REGISTRATION
from datagauntlet.envs.event_recon.splits import CANARY

WORLD_CACHE = 16  # worlds are immutable and dear to build; gates play many episodes per task


class _Worlds:
    """A small per-process LRU of generated worlds, keyed by everything that defines one."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self._lock = Lock()

    def get(self, key: tuple[Any, ...], build: Any) -> Any:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        world = build()
        with self._lock:
            self._items[key] = world
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return world


_WORLDS = _Worlds(WORLD_CACHE)


def truth_of(world: Any) -> Truth:
    """The grader's view of a world: the manifest, the evidence and the two projections."""
    evidence: dict[tuple[str, str], frozenset[str]] = {}
    for d in world.manifest:
        pair = (d.family, d.partner_id)
        evidence[pair] = evidence.get(pair, frozenset()) | frozenset(d.evidence)
    schema = world.schema
    return Truth(
        families=tuple(world.families),
        partners=tuple(world.partner_ids),
        manifest=frozenset(evidence),
        evidence=evidence,
        correct=world.correct,
        shipped=world.shipped,
        partner_column=getattr(schema, "partner_column", "partner_id"),
        period_column=schema.period_column,
        amount_column=schema.amount_column,
    )


class EventReconEnv(Environment[EventReconConfig]):
    registration = REGISTRATION
    config_cls = EventReconConfig
    weights = WEIGHTS
    metric_names = METRICS
    default_task_count = 4  # eval/train/test when n is not given; public is always 120
    canary = CANARY  # on every task dict, vf row, run file and gate JSON; in no workspace
    world_bytes_estimate = 3 * 1024 * 1024  # measured: ~1.8 MB played at scale 1.0 (docs/server.md)

    config: EventReconConfig

    # --- tasks -------------------------------------------------------------------------------
    # "public": the 120 published tasks, 30 per tier. "eval": the same tasks interleaved by tier
    # (t1, t2, t3, t4, t1, ...), so any prefix is balanced; its default size is a quick sample.
    # "train" and "test": unbounded fresh seeds from the core's hash streams, tiers in turn.
    # Held-out and family-module splits come from the split tables (splits.py).
    def _records(self, split: str, upto: int | None) -> list[Any]:
        from datagauntlet.envs.event_recon import splits

        module = self.config.family_module
        if split in ("train", "test"):
            count = (self.default_task_count if upto is None else upto) * (
                len(TIERS) if self.config.tier else 1
            )
            records = [
                splits.TaskRecord(
                    i, task_seed(self.id, split, i), TIERS[i % len(TIERS)], split,
                    family_module=module,
                )
                for i in range(count)
            ]  # fmt: skip
        elif split == "eval":
            by_tier = [[r for r in splits.public_tasks() if r.tier == t] for t in TIERS]
            records = [r for group in zip(*by_tier, strict=False) for r in group]
        else:
            records = list(splits.split_tasks(split, module))
        if self.config.tier is not None:
            records = [r for r in records if r.tier == self.config.tier]
        if self.config.num_tasks is not None:
            records = records[: self.config.num_tasks]
        return records

    def tasks(self, split: str = "public", n: int | None = None, start: int = 0) -> list[Task]:
        if (n is not None and n < 0) or start < 0:
            raise ValueError("n and start must be >= 0")
        if n is None and split in ("eval", "train", "test"):
            n = self.default_task_count
        records = self._records(split, None if n is None else start + n)
        stop = len(records) if n is None else min(len(records), start + n)
        return [self._task(split, r) for r in records[start:stop]]

    def _task(self, split: str, record: Any) -> Task:
        return self.new_task(split, record.index, record.seed)

    def make_task(self, split: str, index: int) -> Task:
        for r in self._records(split, index + 1):
            if r.index == index:
                return self._task(split, r)
        raise ValueError(f"split {split!r} has no task with index {index}")

    def record(self, task: Task) -> Any:
        """The split table's record behind a task (its tier, its family set)."""
        for r in self._records(task.split, task.index + 1):
            if r.index == task.index and r.seed == task.seed:
                return r
        raise ValueError(f"task {task.id} does not belong to split {task.split!r}")

    def tier_of(self, task: Task) -> int:
        return int(self.record(task).tier)

    # --- worlds and episodes --------------------------------------------------------------------
    def world(self, task: Task) -> Any:
        """The task's world, generated from its seed and cross-checked against the reconciler
        (truth included: for graders and tests)."""
        from datagauntlet.envs.event_recon.splits import families_of
        from datagauntlet.envs.event_recon.world.generator import build_task

        r = self.record(task)
        scale = self.config.scale
        key = (r.seed, r.tier, r.split == "public" or r.family_module, scale)
        return _WORLDS.get(key, lambda: build_task(r.seed, r.tier, families_of(r), scale))

    def episode_truth(self, task: Task) -> Truth:
        """The grader's truth for a task (for gates and tests; never shown to an agent)."""
        return truth_of(self.world(task))

    def episode(self, task: Task) -> EventReconEpisode:
        return EventReconEpisode(self, task, self.world(task), truth_of)

    def families(self, task: Task) -> tuple[str, ...]:
        """The families a task's contract publishes (a family module's join its own splits)."""
        from datagauntlet.envs.event_recon.splits import families_of

        return tuple(sorted(families_of(self.record(task))))

    def task_info(self, task: Task) -> TaskInfo:
        """The prompts from the task alone: no world is built (the same text, tested)."""
        from datagauntlet.envs.event_recon.episode import system_prompt_for

        return TaskInfo(
            task, system_prompt_for(self.families(task)), TASK_PROMPT, self.task_metadata(task)
        )

    def task_metadata(self, task: Task) -> dict[str, Any]:
        return {"tier": self.tier_of(task), "canary": CANARY}

    def extra_gates(self) -> list[Any]:
        """event-recon's own gate rows (gates.py), run after the shared ones."""
        from datagauntlet.envs.event_recon.gates.gates import extra_gates

        return extra_gates()

    def truth_values(self, episode: Any) -> list[str]:
        """Text derived from the hidden state: the manifest's partner and event ids paired with
        their family, and the broken partners' correct balances."""
        truth = self.episode_truth(episode.task)
        out = [f'"family":"{f}","partner_id":"{p}"' for f, p in truth.manifest]
        out += [f"{p}:{truth.correct[p]}" for p in truth.broken]
        return sorted(set(out))

    def policies(self) -> dict[str, Policy]:
        from datagauntlet.envs.event_recon.attacks import attackers, probes
        from datagauntlet.envs.event_recon.solver import policy
        from datagauntlet.envs.event_recon.splits import reference_steps

        steps = reference_steps(self.config.family_module)
        return probes.policies(extra=lambda: {**policy.policies(steps), **attackers.policies()})

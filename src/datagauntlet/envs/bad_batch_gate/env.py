"""The bad-batch-gate environment: tasks from the generator or from a cases file."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from datagauntlet.core.env import Environment, Policy
from datagauntlet.core.episode import Episode, Task
from datagauntlet.core.seeding import SPLITS, check_split
from datagauntlet.core.task_info import TaskInfo
from datagauntlet.envs.bad_batch_gate.attacks.attackers import ATTACKERS
from datagauntlet.envs.bad_batch_gate.config import BadBatchGateConfig
from datagauntlet.envs.bad_batch_gate.episode import (
    EXTENDED_PROMPT,
    SYSTEM_PROMPT,
    BadBatchGateEpisode,
    ExtendedEpisode,
)
from datagauntlet.envs.bad_batch_gate.grading.grader import METRICS, WEIGHTS
from datagauntlet.envs.bad_batch_gate.registration import REGISTRATION
from datagauntlet.envs.bad_batch_gate.solver.policies import AGENTS
from datagauntlet.envs.bad_batch_gate.world.cases import Case, load_cases, split_of
from datagauntlet.envs.bad_batch_gate.world.families import BY_NAME, Family
from datagauntlet.envs.bad_batch_gate.world.generator import SPLIT_SIZES, generate, split_sizes


class BadBatchGateEnv(Environment):
    registration = REGISTRATION
    config_cls = BadBatchGateConfig
    weights = WEIGHTS
    metric_names = METRICS
    attackers = tuple(ATTACKERS)
    world_bytes_estimate = 256 * 1024  # measured: ~105 KiB built and played (docs/server.md)
    default_task_count = SPLIT_SIZES["eval"]

    config: BadBatchGateConfig

    def __init__(self, config: BadBatchGateConfig | None = None) -> None:
        super().__init__(config)
        for family in self.family_module.families if self.family_module else ():
            if not isinstance(family, Family) or family.name in BY_NAME:
                where = self.family_module.path if self.family_module else ""
                raise ValueError(
                    f"family_module {where!r}: FAMILIES must hold new "
                    f"bad_batch_gate.world.families.Family objects, got {family!r}"
                )

    @cached_property
    def _file_cases(self) -> dict[str, list[Case]]:
        by_split: dict[str, list[Case]] = {s: [] for s in SPLITS}
        if self.config.cases is not None:
            for case in load_cases(self.config.cases):
                by_split[split_of(case.case_id)].append(case)
        return by_split

    def split_size(self, split: str) -> int:
        if split in self.module_splits():
            return len(self.module_splits()[split])
        if self.config.cases is not None:
            return len(self._file_cases.get(split, []))
        return split_sizes(self.config.families == "extended")[split]

    def tasks(self, split: str = "eval", n: int | None = None, start: int = 0) -> list[Task]:
        """One task per case of the split; `n` beyond the split's size is capped to it."""
        check_split(split, tuple(self.module_splits()))
        size = self.split_size(split)
        count = size if n is None else n
        if count < 0 or start < 0:
            raise ValueError("n and start must be >= 0")
        return [self.make_task(split, i) for i in range(start, min(size, start + count))]

    def make_task(self, split: str, index: int) -> Task:
        if self.config.cases is not None and split in SPLITS:
            case = self._file_cases[split][index]
            return self.new_task(split, index, case.seed)
        return super().make_task(split, index)

    def case(self, task: Task) -> Case:
        """The case behind a task (truth included: for graders, reports and tests)."""
        if self.config.cases is not None and task.split in SPLITS:
            case = self._file_cases[task.split][task.index]
            if case.seed != task.seed:
                raise ValueError(f"task {task.id} does not belong to this cases file")
            return case
        extra = tuple(self.family_module.families) if self.family_module else ()
        return generate(
            task.split, task.index, task.seed, self.config.families == "extended", extra
        )

    def task_info(self, task: Task) -> TaskInfo:
        """From the case alone: no warehouse is built."""
        case = self.case(task)
        system = SYSTEM_PROMPT + EXTENDED_PROMPT if case.extended else SYSTEM_PROMPT
        return TaskInfo(task, system, case.prompt, self._metadata(case))

    def task_metadata(self, task: Task) -> dict[str, Any]:
        return self._metadata(self.case(task))

    def _metadata(self, case: Case) -> dict[str, Any]:
        # The case's family names its defect: it is the answer, so it is no label.
        return {
            "families": "extended" if case.extended else "standard",
            "cases_file": self.config.cases is not None,
            "batches": len(case.batches),
        }

    def report_facts(self, episode: Episode[BadBatchGateConfig]) -> dict[str, Any]:
        assert isinstance(episode, BadBatchGateEpisode)
        case, world = episode.case, episode.world
        return {
            "family": case.family,
            "case_id": case.case_id,
            "mart": world.mart(),
            "correct_mart": world.correct_mart(),
            "n_bad": sum(b.truth.defective for b in case.batches),
        }

    def episode(self, task: Task) -> BadBatchGateEpisode:
        case = self.case(task)
        cls = ExtendedEpisode if case.extended else BadBatchGateEpisode
        return cls(self, task, case)

    def policies(self) -> dict[str, Policy]:
        return {**AGENTS, **ATTACKERS}

    def truth_values(self, episode: Episode) -> list[str]:
        """The case's labels and the mart the contract would give: never visible."""
        assert isinstance(episode, BadBatchGateEpisode)
        case = episode.case
        out = [case.case_id, case.family, '"defective"', '"bad_rows"', "planted"]
        out.append(f"{episode.world.correct_mart():.2f}")
        return out

    def calibration_grid(self) -> list[dict[str, Any]]:
        if self.config.cases is not None:
            return [{}]
        return [{"families": "standard"}, {"families": "extended"}]

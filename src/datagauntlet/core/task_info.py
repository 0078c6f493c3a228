"""Cheap task descriptors: what a task asks and how it is labelled, without building its world.

A listing or a verifiers taskset needs each task's prompt and its labels (family, tier,
profile: what reports and curricula group by) long before any episode runs. Building a world
can cost far more than that (a generator that rejects and regenerates plans), so an env
answers `task_info` from its task alone where it can. Labels never carry the answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from datagauntlet.core.episode import Task


@dataclass(frozen=True)
class TaskInfo:
    task: Task
    system_prompt: str
    prompt: str
    metadata: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "task": self.task.as_dict(),
            "system_prompt": self.system_prompt,
            "prompt": self.prompt,
            "metadata": dict(self.metadata),
        }

"""The contamination canary's two halves: on every exported record of a task, in no workspace.

A task is exported as its task dict (`Task.as_dict`: run files, the server's and the MCP
door's answers), its `task_info` (the labels a verifiers row carries as `metadata`) and the
gate JSON; a model that can recite the canary has read those records, not played the tasks.
"""

from __future__ import annotations

from typing import Any

from datagauntlet.core.episode import Task
from datagauntlet.envs.event_recon.splits import CANARY

MARK = b"event-recon-canary"  # any canary of this env, not just the current one


def exported_records(env: Any, task: Task) -> list[dict[str, Any]]:
    """Every record of `task` the env exports (each is a dict that must carry the canary)."""
    info = env.task_info(task).as_dict()
    return [task.as_dict(), info["task"], dict(info["metadata"])]


def on_records(env: Any, task: Task) -> bool:
    return all(r.get("canary") == CANARY for r in exported_records(env, task))


def in_workspace(files: dict[str, bytes]) -> bool:
    return any(MARK in data for data in files.values())

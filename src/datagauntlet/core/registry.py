"""Look up and build registered environments by id, importing each only when asked for."""

from __future__ import annotations

import importlib
from typing import Any

from datagauntlet.core.env import Environment
from datagauntlet.envs import ENVS


def list_envs() -> list[str]:
    return sorted(ENVS)


def env_class(env_id: str) -> type[Environment]:
    target = ENVS.get(env_id)
    if target is None:
        raise ValueError(f"unknown environment {env_id!r}; registered: {', '.join(list_envs())}")
    module_name, _, class_name = target.partition(":")
    cls: type[Environment] = getattr(importlib.import_module(module_name), class_name)
    return cls


def make(env_id: str, **config: Any) -> Environment:
    """Build an environment; an unknown id or a bad config raises a ValueError that says why."""
    return env_class(env_id).from_kwargs(**config)

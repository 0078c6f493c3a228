"""verifiers 0.4 tasksets for every registered environment (extra `[verifiers]`).

verifiers resolves a taskset id such as `dirty-integration` by importing the top-level module
`dirty_integration`, whose `__all__` must export exactly one Taskset. Each such module is one
line (environments/dirty-integration/dirty_integration.py) calling `export`, which builds the
Taskset with the generic factory in `taskset.py` and adds the in-package harness and an Env
whose runtime is local (`env.py`), so `vf-eval` runs fully offline with no runtime flag.

How tools are served: a rollout's world (an Episode) lives in this process, in a bounded
registry (`worlds.py`), under a random key made for the rollout (taskset.py). One MCP server
per process, started on first use (`tool_server.py`), serves every world at `/w/<key>/mcp`;
the rollout's toolset points at that URL, so no process is started per rollout. The key
travels only in the URL handed to the harness and in the rollout's State, which is never
shown to the model nor written to traces.jsonl (and blanked out of verifiers' logs). The
world is freed when the rollout is scored, or when its rollout's task ends unscored.
"""

from __future__ import annotations

from typing import Any


def module_env_id(module_name: str) -> str:
    """`dirty_integration` -> `dirty-integration` (the registry's id for that module)."""
    from datagauntlet.core.registry import list_envs

    wanted = module_name.rsplit(".", 1)[-1]
    for env_id in list_envs():
        if env_id.replace("-", "_") == wanted:
            return env_id
    raise ValueError(f"no registered environment for module {module_name!r}")


def export(module_name: str, namespace: dict[str, Any]) -> list[str]:
    """Put the env's Taskset, the harness and the local-runtime Env into a module's namespace
    (verifiers makes the last two the taskset's defaults); return its __all__."""
    from datagauntlet.frontdoors.vf.env import LocalEnv
    from datagauntlet.frontdoors.vf.harness import LoopHarness
    from datagauntlet.frontdoors.vf.taskset import taskset_for

    taskset = taskset_for(module_env_id(module_name))
    exported = [taskset, LoopHarness, LocalEnv]
    for obj in exported:
        namespace[obj.__name__] = obj
    return [obj.__name__ for obj in exported]

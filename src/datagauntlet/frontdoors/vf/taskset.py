"""The generic factory: one verifiers v1 Taskset per registered environment.

- Config: every field of the env's config becomes a taskset field (`--env.taskset.<field>`),
  plus `split` and `num_tasks`.
- Scoring: one `@vf.reward` per component of the env's Score, weighted as in `env.weights`,
  and the Score's numeric metrics as verifiers metrics. The env stays the single source of
  truth: nothing here names a component or a weight.
- Tools: see the package docstring; `Task.setup` makes the world, `Task.finalize` scores and
  frees it, and a `@vf.stop` ends the rollout once the episode is done.
- Re-scoring (`vf-replay`): the score is rebuilt from the saved trace (rescore.py).
- Validation (`vf-validate`): the gold check plays the env's reference policy.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import hashlib
import json
import math
import types
import typing
import weakref
from collections.abc import Iterator, Mapping
from typing import Any, Literal

import verifiers.v1 as vf
from pydantic import Field, create_model
from verifiers.v1.mcp import Toolset, ToolsetConfig
from verifiers.v1.trace import Trace

from datagauntlet.core.env import Environment
from datagauntlet.core.episode import Task as DgTask
from datagauntlet.core.registry import env_class
from datagauntlet.frontdoors.live import LiveEpisode
from datagauntlet.frontdoors.loop import max_turns_of
from datagauntlet.frontdoors.vf.env import check_local
from datagauntlet.frontdoors.vf.rescore import final_answer_of, replay_score
from datagauntlet.frontdoors.vf.tool_server import NO_WORLD_URL, tool_server
from datagauntlet.frontdoors.vf.worlds import WORLDS, new_world_key

# One world key per rollout, made by whichever of `Task.setup` and `Task.toolsets` asks first:
# verifiers runs both in the rollout's own asyncio task, so the key is looked up by that task,
# never by call order, and never put anywhere a model can read. Outside any task (a check on
# the class) the toolset is declared all the same, at an address that serves nothing, so that
# verifiers' pre-checks see that the tasks have tools.
_rollout_keys: weakref.WeakKeyDictionary[asyncio.Task[Any], str] = weakref.WeakKeyDictionary()


def rollout_world_key() -> str | None:
    """The current rollout's world key (None outside an asyncio task)."""
    try:
        rollout = asyncio.current_task()
    except RuntimeError:
        return None
    if rollout is None:
        return None
    if rollout not in _rollout_keys:
        _rollout_keys[rollout] = new_world_key()
    return _rollout_keys[rollout]


RESERVED = {"id", "task", "system_prompt", "split", "num_tasks"}
# Env config fields that mean what the taskset's own field of that name means: the taskset's
# value is passed to the env as well (event-recon's `num_tasks`: the first N after its filters).
SHARED = {"num_tasks"}


class WorldState(vf.State):
    """Per-rollout state: never serialized into traces.jsonl, never shown to the model."""

    world_key: str = ""
    score: dict[str, Any] | None = None


class EpisodeData(vf.TaskData):
    env_id: str
    env_config: dict[str, Any]
    # a public task's seed; a held-out task has its ref instead (its seed never leaves the
    # process: the task is rebuilt from split and index where the secret is)
    seed: int | None = None
    ref: str | None = None
    split: str
    index: int
    # the env's labels of the task (never its answer)
    metadata: dict[str, Any] = Field(default_factory=dict)
    # the code's versions (`env.versions()`): part of the task's hash, so verifiers treats a
    # task of another generator or grader version as another task
    versions: dict[str, str] = Field(default_factory=dict)


class WorldToolset(Toolset[ToolsetConfig, WorldState]):
    """The rollout's tools: an already running server (`config.url`), so nothing is launched.
    Bare tool names, as the env declares them."""

    TOOL_PREFIX = None


@functools.lru_cache(maxsize=64)
def _env(env_id: str, config_json: str) -> Environment:
    return env_class(env_id).from_kwargs(**json.loads(config_json))


def _as_float(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    return None


class EpisodeTask(vf.Task[EpisodeData, WorldState, vf.TaskConfig]):
    """Behaviour shared by every env's task class; the factory adds the reward methods."""

    WEIGHTS: typing.ClassVar[Mapping[str, float]] = {}

    @property
    def key(self) -> str:
        """The env, its config and the task: runs with different configs share no key."""
        config = json.dumps(self.data.env_config, sort_keys=True, separators=(",", ":"))
        digest = hashlib.blake2b(config.encode(), digest_size=6).hexdigest()
        return f"{self.data.env_id}/{digest}/{self.data.id}"

    def environment(self) -> Environment:
        return _env(self.data.env_id, json.dumps(self.data.env_config, sort_keys=True))

    def dg_task(self) -> DgTask:
        d = self.data
        if d.seed is not None:
            return DgTask(str(d.id), d.seed, d.split, d.index, canary=self.environment().canary)
        task = self.environment().make_task(d.split, d.index)
        if task.ref != d.ref:
            raise ValueError(f"task {d.id}: this process derives another task ref (another secret)")
        return task

    async def setup(self, trace: Trace, runtime: Any) -> None:
        check_local(runtime)
        live = await LiveEpisode.open(self.environment(), self.dg_task())
        key = rollout_world_key() or new_world_key()
        WORLDS.put(live, key)
        trace.state.world_key = key
        # verifiers skips `finalize` when a rollout fails (a dead endpoint, a harness error):
        # the world is then freed when the rollout's asyncio task ends, whatever its outcome
        rollout = asyncio.current_task()
        if rollout is not None:
            rollout.add_done_callback(lambda _: free_world(key))

    @classmethod
    def toolsets(cls, config: vf.TaskConfig) -> list[Toolset]:
        key = rollout_world_key()
        url = tool_server().url_for(key) if key else NO_WORLD_URL
        return [WorldToolset(ToolsetConfig(url=url))]

    @vf.stop
    async def episode_done(self, trace: Trace) -> bool:
        """End the rollout once the env says the episode is over (submitted, or a limit)."""
        world = WORLDS.get(trace.state.world_key) if trace.state.world_key else None
        return bool(world and world.live.done)

    @vf.stop
    async def turn_limit(self, trace: Trace) -> bool:
        """The env's own turn budget (its config's max_turns, else 30), as in `datagauntlet
        eval`; verifiers' `--env.agent.max-turns` still applies on top."""
        return trace.num_turns >= max_turns_of(self.environment())

    async def finalize(self, trace: Trace, runtime: Any) -> None:
        world = WORLDS.pop(trace.state.world_key) if trace.state.world_key else None
        if world is not None:
            live = world.live
            try:
                # on the episode's thread, after any straggling call (a harness killed mid-call)
                answer = final_answer_of(trace)
                if answer is not None and not live.done:
                    await live.answer(answer)
                score = await live.score()
            finally:
                await live.close()
            trace.state.score = score.as_dict()
            # the score's stamp (the code's versions and the task's content hash) is saved
            trace.info["versions"] = dict(score.stamp)

    def final_score(self, trace: Trace) -> dict[str, Any]:
        """The live world's score; for a saved trace (`vf-replay`, whose State is empty) or
        a world freed unscored, the score of the world rebuilt from the trace."""
        score = getattr(trace.state, "score", None)
        if score is not None:
            return score  # type: ignore[no-any-return]
        cached = self.__dict__.setdefault("_rescored", {})
        if trace.id not in cached:
            cached.clear()  # one trace at a time: each reward asks for the same one
            cached[trace.id] = replay_score(self.environment(), self.dg_task(), trace).as_dict()
        return cached[trace.id]  # type: ignore[no-any-return]

    async def validate(self, runtime: Any) -> bool:
        """`vf-validate`'s gold check: the env's reference policy, on a world of its own
        (freed at once), must score 1.0."""
        env = self.environment()
        live = await LiveEpisode.open(env, self.dg_task())
        try:
            await live.run(env.policies()[env.reference])
            score = await live.score()
        finally:
            await live.close()
        return math.isclose(score.reward, 1.0)

    @vf.metric
    async def env_metrics(self, trace: Trace) -> dict[str, float]:
        metrics = self.final_score(trace)["metrics"]
        return {k: f for k, v in metrics.items() if (f := _as_float(v)) is not None}


def free_world(key: str) -> None:
    """Free a world its rollout never scored (a no-op once `finalize` has taken it)."""
    world = WORLDS.pop(key)
    if world is not None:
        world.close()


def _reward(name: str, weight: float) -> Any:
    async def reward(self: EpisodeTask, trace: Trace) -> float:
        return float(self.final_score(trace)["components"][name]["value"])

    reward.__name__ = reward.__qualname__ = name
    reward.__doc__ = f"The env's `{name}` component (weight {weight})."
    return vf.reward(weight=weight)(reward)


def _camel(env_id: str) -> str:
    return "".join(part.capitalize() for part in env_id.replace("_", "-").split("-"))


def _config_fields(env_cls: type[Environment]) -> dict[str, Any]:
    hints = typing.get_type_hints(env_cls.config_cls)
    defaults = env_cls.config_cls()
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(env_cls.config_cls):
        if f.name in SHARED:
            continue
        if f.name in RESERVED:
            raise ValueError(f"{env_cls.id}: config field {f.name!r} clashes with verifiers")
        fields[f.name] = (hints[f.name], getattr(defaults, f.name))
    # held-out splits too: their rows carry a ref, never a seed (rebuilt where the secret is)
    fields["split"] = (Literal["train", "eval", "test", "private", "private-train"], "eval")
    fields["num_tasks"] = (int, Field(env_cls.default_task_count, ge=1))
    return fields


@functools.cache
def taskset_for(env_id: str) -> type[vf.Taskset]:
    env_cls = env_class(env_id)
    name = _camel(env_id)
    module = env_id.replace("-", "_")
    config_cls = create_model(
        f"{name}TasksetConfig",
        __base__=vf.TasksetConfig,
        __module__=module,
        **_config_fields(env_cls),
    )
    task_ns: dict[str, Any] = {"WEIGHTS": dict(env_cls.weights), "__module__": module}
    for component, weight in env_cls.weights.items():
        task_ns[component] = _reward(component, weight)
    task_cls = type(f"{name}Task", (EpisodeTask,), task_ns)
    env_fields = [f.name for f in dataclasses.fields(env_cls.config_cls)]

    def load(self: vf.Taskset) -> Iterator[EpisodeTask]:
        values = {k: getattr(self.config, k) for k in env_fields}
        env = env_cls.from_kwargs(**values)
        config = env.config.as_dict()
        versions = env.versions()
        for t in env.tasks(self.config.split, self.config.num_tasks):
            info = env.task_info(t)  # prompts and labels, without building the world
            data = EpisodeData(
                id=t.id, name=f"{env_id} {t.id}", prompt=info.prompt,
                system_prompt=info.system_prompt, env_id=env_id, env_config=config,
                seed=None if t.held_out else t.seed, ref=t.ref, split=t.split, index=t.index,
                metadata=info.metadata, versions=versions,
            )  # fmt: skip
            yield task_cls(data, self.config.task)

    def body(ns: dict[str, Any]) -> None:
        ns.update({"load": load, "ENV_ID": env_id, "__module__": module})
        ns["__doc__"] = f"verifiers taskset for datagauntlet's {env_id!r} environment."

    return types.new_class(f"{name}Taskset", (vf.Taskset[task_cls, config_cls],), exec_body=body)

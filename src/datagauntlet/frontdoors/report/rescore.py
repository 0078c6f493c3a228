"""Re-score saved rollouts against today's code by replaying their tool calls.

A world is a pure function of its task seed and the calls made in it, so replaying a rollout's
calls, in order, through `Episode.call` rebuilds exactly the world the model left, and scoring
it again shows what today's grader makes of the same behaviour. A run whose tasks can no longer
be rebuilt (unknown env, a config today's code refuses, a seed that no longer derives from its
task id) is refused rather than re-scored against some other world.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from datagauntlet import __version__
from datagauntlet.core.episode import Task
from datagauntlet.frontdoors.report.runs import Rollout, Run

EPSILON = 1e-6


@dataclass
class Rescored:
    index: int
    task_id: str
    rollout: int
    saved: float
    now: float
    components_saved: dict[str, float]
    components_now: dict[str, float]
    diverged: bool  # a replayed tool result differs from the one the model saw

    @property
    def changed(self) -> bool:
        return abs(self.now - self.saved) > EPSILON or any(
            abs(self.components_now.get(k, -1.0) - v) > EPSILON
            for k, v in self.components_saved.items()
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "task_id": self.task_id,
            "rollout": self.rollout,
            "saved": self.saved,
            "now": self.now,
            "delta": round(self.now - self.saved, 6),
            "components_saved": self.components_saved,
            "components_now": self.components_now,
            "diverged": self.diverged,
        }


@dataclass
class RescoreResult:
    run: str
    env: str
    saved_versions: dict[str, Any]
    current_versions: dict[str, Any]
    rollouts: list[Rescored] = field(default_factory=list)

    @property
    def changed(self) -> list[Rescored]:
        return [r for r in self.rollouts if r.changed]


def _task_of(env: Any, rollout: Rollout) -> Task:
    """The rollout's task rebuilt from its id, checked against the seed a public task saved or
    the ref a held-out one saved (only the secret's holder rebuilds that ref)."""
    split, _, number = rollout.task_id.rpartition("-")
    saved = rollout.seed if rollout.seed is not None else rollout.ref
    if not split or not number.isdigit() or saved is None:
        raise ValueError(
            f"rollout {rollout.task_id!r} names no rebuildable task (expected SPLIT-NNNNN "
            "and a saved seed or task ref)"
        )
    try:
        rebuilt = env.make_task(split, int(number))
    except ValueError as exc:
        raise ValueError(f"task {rollout.task_id} can no longer be rebuilt: {exc}") from None
    same = (
        str(rebuilt.seed) == str(rollout.seed)
        if rollout.seed is not None
        else rebuilt.ref == rollout.ref
    )
    if not same:  # no seed in the message: a held-out one must not leave the process
        what = "seed" if rollout.seed is not None else "task ref"
        raise ValueError(
            f"task {rollout.task_id} can no longer be rebuilt: today's code derives another "
            f"{what} than the run saved (another split secret or seeding)"
        )
    return rebuilt


def _calls(message: dict[str, Any]) -> list[tuple[Any, Any]]:
    out = []
    for call in message.get("tool_calls") or []:
        fn = call.get("function") if isinstance(call, dict) else None
        fn = fn if isinstance(fn, dict) else {}
        out.append((fn.get("name"), fn.get("arguments")))
    return out


def _same_result(saved_content: Any, result: dict[str, Any]) -> bool:
    try:
        return json.loads(saved_content) == json.loads(json.dumps(result))
    except (TypeError, ValueError):
        return False


def replay(env: Any, rollout: Rollout) -> tuple[Any, bool]:
    """The score of `rollout`'s calls replayed on a fresh world, and whether it diverged."""
    ep = env.episode(_task_of(env, rollout))
    diverged = False
    try:
        messages = rollout.messages
        for i, message in enumerate(messages):
            if message.get("role") != "assistant":
                continue
            answers = [m for m in messages[i + 1 :] if m.get("role") == "tool"]
            for n, (name, arguments) in enumerate(_calls(message)):
                result = ep.call(name, arguments)
                if n < len(answers) and not _same_result(answers[n].get("content"), result):
                    diverged = True
        return ep.score(), diverged
    finally:
        close = getattr(ep, "close", None)
        if callable(close):
            close()


TRUST_HINT = "pass --trust-run-config to re-score a run file you trust"


def rescore(run: Run, trust_config: bool = False) -> RescoreResult:
    """Re-score every rollout. A run file is someone else's text: unless `trust_config`, its
    config may set only the keys its env declares remote-safe, so it never names a module to
    import or a path to open here."""
    import datagauntlet as dg
    from datagauntlet.core.remote_config import UntrustedConfig, check_remote_config

    if run.kind == "calibrate":
        raise ValueError(f"{run.source}: calibration files hold no trajectories to re-score")
    if not trust_config:
        try:
            check_remote_config(run.env, run.config, trust_hint=TRUST_HINT)
        except ValueError as exc:  # an unknown env is named by make below
            if isinstance(exc, UntrustedConfig):
                raise ValueError(f"{run.name}: {exc}") from None
    try:
        env = dg.make(run.env, **run.config)
    except ValueError as exc:
        raise ValueError(f"{run.name}: the run's env can no longer be built: {exc}") from None
    result = RescoreResult(run.name, run.env, run.stamps, {"package": __version__})
    for index, r in enumerate(run.rollouts):
        score, diverged = replay(env, r)
        result.rollouts.append(
            Rescored(
                index=index,
                task_id=r.task_id,
                rollout=r.rollout,
                saved=r.reward,
                now=score.reward,
                components_saved=dict(r.components),
                components_now={k: c["value"] for k, c in score.components.items()},
                diverged=diverged,
            )
        )
    return result

"""`datagauntlet eval`: tasks x rollouts through the agent loop, one JSONL line per rollout.

Rollouts run concurrently on one event loop, bounded by a semaphore; a world exists only while
its rollout runs. Each finished rollout is appended to the output at once, so an interrupted
run loses nothing and `--resume` re-runs only what is missing or failed. Results already in
the output are never wiped unless asked (`overwrite`), and a torn last line (the write an
interruption cut short) is moved aside before anything is appended after it.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datagauntlet.core.env import Environment
from datagauntlet.core.episode import Task
from datagauntlet.core.output_files import check_output
from datagauntlet.core.score import Score
from datagauntlet.core.secret import scrub_seeds
from datagauntlet.core.user_files import json_lines, read_bytes, read_text
from datagauntlet.frontdoors.live import LiveEpisode
from datagauntlet.frontdoors.loop import LoopResult, Model, max_turns_of, run_loop
from datagauntlet.frontdoors.models import error_kind

RESULTS_FILE = "results.jsonl"
SUMMARY_FILE = "summary.json"
TORN_SUFFIX = ".torn"
# A rollout is dozens of model calls; this bounds one that never ends (a model looping on
# slow answers that each beat the request deadline).
DEFAULT_ROLLOUT_TIMEOUT = 1800.0
# A results file is read whole to resume or merge it; past this it is refused.
MAX_RESULTS_BYTES = 256 << 20


class RolloutTimeout(Exception):
    """The rollout as a whole went over its deadline."""


@dataclass
class EvalSpec:
    n: int = 5
    rollouts: int = 1
    concurrency: int = 8
    max_turns: int | None = None
    split: str = "eval"
    label: str = ""  # the model name or "agent:<policy>"
    resume: bool = False
    overwrite: bool = False
    rollout_timeout: float | None = DEFAULT_ROLLOUT_TIMEOUT
    shard: tuple[int, int] | None = None  # (I, N): this run plays tasks whose index % N == I

    def validate(self) -> None:
        if self.shard is not None:
            index, count = self.shard
            if count < 1 or not 0 <= index < count:
                raise ValueError(f"--shard must be I/N with 0 <= I < N, got {index}/{count}")
        for name in ("n", "rollouts", "concurrency"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.max_turns is not None and self.max_turns < 1:
            raise ValueError(f"max_turns must be >= 1, got {self.max_turns}")
        if self.rollout_timeout is not None and not self.rollout_timeout > 0:
            raise ValueError(f"--rollout-timeout must be > 0, got {self.rollout_timeout}")
        if self.resume and self.overwrite:
            raise ValueError("give --resume or --overwrite, not both")


def shard_tasks(tasks: list[Task], shard: tuple[int, int] | None) -> list[Task]:
    """Shard I of N: every N-th task from the I-th, so shards are disjoint and cover the set."""
    if shard is None:
        return tasks
    index, count = shard
    return [t for i, t in enumerate(tasks) if i % count == index]


def check_out_dir(out_dir: Path, spec: EvalSpec) -> None:
    """Refuse to write over results already in `out_dir` unless resuming or overwriting."""
    if out_dir.exists() and not out_dir.is_dir():
        raise ValueError(f"--out {out_dir} exists and is not a directory")
    for name in (RESULTS_FILE, SUMMARY_FILE):  # a link, FIFO or device is never written
        check_output(out_dir / name, force=True)
    held = [name for name in (RESULTS_FILE, SUMMARY_FILE) if (out_dir / name).exists()]
    if held and not (spec.resume or spec.overwrite):
        raise ValueError(
            f"{out_dir} already holds results ({held[0]}); pass --resume to continue that run, "
            "--overwrite to replace it, or choose another --out"
        )


def repair_results(path: Path) -> None:
    """Cut a torn last line off the results file (kept beside it), so the next record starts
    on a line of its own instead of being glued onto the fragment and lost with it."""
    if not path.exists():
        return
    data = read_bytes(path, MAX_RESULTS_BYTES, "results file")
    if not data or data.endswith(b"\n"):
        return
    keep = data.rfind(b"\n") + 1
    path.with_name(path.name + TORN_SUFFIX).write_bytes(data[keep:])
    os.truncate(path, keep)


@dataclass
class EvalOutcome:
    records: list[dict[str, Any]] = field(default_factory=list)
    ran: int = 0
    skipped: int = 0


def rollout_key(record: dict[str, Any]) -> tuple[str, int]:
    return (record["task_id"], int(record["rollout"]))


def load_records(path: Path) -> list[dict[str, Any]]:
    """Records in a results file, each checked field by field (`result_record`); a torn last
    line (an interrupted write) is ignored."""
    from datagauntlet.frontdoors.report.run_schema import result_record

    if not path.exists():
        return []
    text = read_text(path, MAX_RESULTS_BYTES, "results file")
    return [result_record(v, f"{path}:{n}") for n, v in json_lines(text, str(path), True)]


def latest_by_key(records: list[dict[str, Any]]) -> dict[tuple[str, int], dict[str, Any]]:
    latest: dict[tuple[str, int], dict[str, Any]] = {}
    for r in records:
        latest[rollout_key(r)] = r
    return latest


def code_versions(versions: dict[str, Any] | None) -> dict[str, Any]:
    """The versions every rollout of one run shares (a score's stamp, less its task hash)."""
    return {k: v for k, v in (versions or {}).items() if k != "task_hash"}


def _check_same_run(previous: list[dict[str, Any]], env: Environment, spec: EvalSpec) -> None:
    """Resuming into results of another env, config or model would mix two runs, and so
    would resuming with another version of the code: scores across versions do not compare."""
    want = {"env": env.id, "config": env.config.as_dict(), "model": spec.label}
    for record in previous:
        got = {k: record.get(k) for k in want}
        if got != json.loads(json.dumps(want)):
            raise ValueError(
                f"--resume: the output holds another run ({got['env']}, {got['model']}, "
                f"{got['config']}); use a fresh --out"
            )
        if code_versions(record.get("versions")) != env.versions():
            raise ValueError(
                f"--resume: the output was made by other versions {record.get('versions')} "
                f"(now {env.versions()}); scores across versions do not compare: use a fresh --out"
            )


def _record(
    env: Environment,
    spec: EvalSpec,
    task: Task,
    rollout: int,
    loop: LoopResult,
    score: Score,
    seconds: float,
    error: BaseException | None = None,
) -> dict[str, Any]:
    return {
        "env": env.id,
        "config": env.config.as_dict(),
        "model": spec.label,
        "task_id": task.id,
        # a held-out task's seed never leaves the process: its ref names it instead
        **({"task_ref": task.ref} if task.held_out else {"seed": task.seed}),
        "split": task.split,
        "rollout": rollout,
        "status": "failed" if error else "ok",
        "reward": score.reward,
        "components": {k: c["value"] for k, c in score.components.items()},
        "metrics": score.metrics,
        "stop": "error" if error else loop.stop,
        "turns": loop.turns,
        "usage": loop.usage.as_dict(),
        "seconds": round(seconds, 3),
        "error": _error_text(error) if error else None,
        "error_kind": error_kind(error) if error else None,
        # the code's and the task's versions (a failed rollout has no score: the code's only)
        "versions": dict(score.stamp) or env.versions(),
        "final_answer": loop.final_answer,
        "messages": loop.messages,
    }


async def play_rollout(
    env: Environment, spec: EvalSpec, model: Model, task: Task, rollout: int
) -> dict[str, Any]:
    """One rollout; any failure becomes a failed record (reward 0, error kept), never a raise."""
    start = time.perf_counter()
    loop = LoopResult(messages=[])
    live: LiveEpisode | None = None
    try:
        # an env whose steps are microseconds of in-memory work runs them on the loop: a
        # thread handoff per call would cost more than the step (GIL ping-pong at 256 at once)
        live = await LiveEpisode.open(env, task, inline=env.registration.fast_steps)
        playing = run_loop(live, model, max_turns_of(env, spec.max_turns), loop)
        try:
            await asyncio.wait_for(playing, spec.rollout_timeout)
        except TimeoutError:
            raise RolloutTimeout(
                f"the rollout went over its deadline ({spec.rollout_timeout:g} s) "
                f"after {loop.turns} turns"
            ) from None
        score = await live.score()
    except Exception as exc:
        zero = Score.zero(env.weights)
        return _record(env, spec, task, rollout, loop, zero, time.perf_counter() - start, exc)
    finally:
        if live is not None:
            await live.close()
    return _record(env, spec, task, rollout, loop, score, time.perf_counter() - start)


def _error_text(exc: BaseException) -> str:
    return scrub_seeds("".join(traceback.format_exception_only(type(exc), exc)).strip())


@dataclass
class EvalPlan:
    """What a run will play, after its output directory was checked and prepared."""

    path: Path  # the results file
    previous: list[dict[str, Any]]  # records already there (resuming)
    tasks: list[Task]
    jobs: list[tuple[Task, int]]  # (task, rollout) still to play
    skipped: int


def plan_eval(env: Environment, spec: EvalSpec, out_dir: Path) -> EvalPlan:
    spec.validate()
    check_out_dir(out_dir, spec)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / RESULTS_FILE
    if spec.resume:
        repair_results(path)
    previous = load_records(path) if spec.resume else []
    _check_same_run(previous, env, spec)
    if not spec.resume:
        path.write_text("", encoding="utf-8")
    done = {k for k, r in latest_by_key(previous).items() if r.get("status") == "ok"}
    tasks = shard_tasks(env.tasks(spec.split, spec.n), spec.shard)
    jobs = [(t, r) for t in tasks for r in range(spec.rollouts) if (t.id, r) not in done]
    return EvalPlan(path, previous, tasks, jobs, len(tasks) * spec.rollouts - len(jobs))


def finish_eval(plan: EvalPlan, spec: EvalSpec, fresh: list[dict[str, Any]]) -> EvalOutcome:
    """The latest record of every (task, rollout) of the run, in key order."""
    wanted = {(t.id, r) for t in plan.tasks for r in range(spec.rollouts)}
    latest = latest_by_key(plan.previous + fresh)
    records = sorted((rec for key, rec in latest.items() if key in wanted), key=rollout_key)
    return EvalOutcome(records, len(fresh), plan.skipped)


def record_line(record: dict[str, Any]) -> str:
    return json.dumps(record, default=str)


async def play_jobs(
    env: Environment,
    spec: EvalSpec,
    model: Model,
    jobs: list[tuple[Task, int]],
    deliver: Callable[[dict[str, Any]], None],
) -> None:
    """Every job, `spec.concurrency` at a time; each record goes to `deliver` as it ends."""
    gate = asyncio.Semaphore(spec.concurrency)

    async def job(task: Task, rollout: int) -> None:
        async with gate:
            record = await play_rollout(env, spec, model, task, rollout)
        deliver(record)

    await asyncio.gather(*(job(t, r) for t, r in jobs))


async def run_eval(
    env: Environment,
    spec: EvalSpec,
    model: Model,
    out_dir: Path,
    progress: Callable[[int], None] | None = None,
) -> EvalOutcome:
    """Run every (task, rollout) not already done; return the latest record of each."""
    plan = plan_eval(env, spec, out_dir)
    if progress and plan.skipped:
        progress(plan.skipped)
    fresh: list[dict[str, Any]] = []
    with plan.path.open("a", encoding="utf-8") as fh:

        def deliver(record: dict[str, Any]) -> None:
            fh.write(record_line(record) + "\n")
            fh.flush()  # on disk at once: an interrupted run keeps every finished rollout
            fresh.append(record)
            if progress:
                progress(1)

        await play_jobs(env, spec, model, plan.jobs, deliver)
    return finish_eval(plan, spec, fresh)

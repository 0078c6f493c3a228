"""`eval --workers K`: the rollouts of one run played by K processes, each on its own loop.

One event loop runs on one core, and at hundreds of rollouts at once the model client's CPU
(the openai SDK, httpx, the transport) is what bounds it: about 1 ms a call, so about a
thousand calls a second at best however many cores are free. Here the run's jobs are dealt
round-robin to K forked workers, each playing its share `concurrency / K` at a time with its
own model client. Every finished rollout comes back to this process as its JSONL line, which
is written at once, as one process writes it: the results file has one writer, an interrupted
run keeps what finished, and `--resume` works the same. A worker that dies takes only its
unfinished rollouts with it; the run then fails naming it, and `--resume` plays the rest.
"""

from __future__ import annotations

import json
import multiprocessing
import multiprocessing.connection
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from datagauntlet.core.env import Environment
from datagauntlet.core.episode import Task
from datagauntlet.frontdoors.evaluate import (
    EvalOutcome,
    EvalSpec,
    finish_eval,
    plan_eval,
    play_jobs,
    record_line,
)
from datagauntlet.frontdoors.event_loop import run as run_on_loop
from datagauntlet.frontdoors.loop import Model

ModelFactory = Callable[[], Model]


class WorkerDied(Exception):
    """A worker process ended before playing all of its rollouts."""


def _worker(
    env: Environment,
    spec: EvalSpec,
    make_model: ModelFactory,
    jobs: list[tuple[Task, int]],
    conn: multiprocessing.connection.Connection,
    loop: str,
) -> None:
    """One worker: its jobs on its own loop and client, each record sent back as its line."""

    async def main() -> None:
        model = make_model()
        try:
            await play_jobs(env, spec, model, jobs, lambda r: conn.send(record_line(r)))
        finally:
            close = getattr(model, "close", None)
            if close is not None:
                await close()

    try:
        run_on_loop(main(), loop)
    finally:
        conn.close()


def run_eval_workers(
    env: Environment,
    spec: EvalSpec,
    make_model: ModelFactory,
    out_dir: Path,
    workers: int,
    progress: Callable[[int], None] | None = None,
    loop: str = "auto",
) -> EvalOutcome:
    """`run_eval` across `workers` processes (forked: the env and the factory are not pickled)."""
    if workers < 1:
        raise ValueError(f"--workers must be >= 1, got {workers}")
    if "fork" not in multiprocessing.get_all_start_methods():
        raise ValueError("--workers above 1 needs processes started by fork (Linux, macOS)")
    plan = plan_eval(env, spec, out_dir)
    if progress and plan.skipped:
        progress(plan.skipped)
    # no more workers than rollouts at once (or jobs); their concurrencies add up to the run's
    workers = max(1, min(workers, spec.concurrency, len(plan.jobs)))
    shares = [plan.jobs[i::workers] for i in range(workers)] if plan.jobs else []
    ctx = multiprocessing.get_context("fork")
    running: dict[Any, tuple[int, multiprocessing.process.BaseProcess, int]] = {}
    fresh: list[dict[str, Any]] = []
    failures: list[str] = []
    try:
        for index, share in enumerate(shares):
            receive, send = ctx.Pipe(duplex=False)
            each = replace(
                spec, concurrency=spec.concurrency // workers + (index < spec.concurrency % workers)
            )
            proc = ctx.Process(
                target=_worker, args=(env, each, make_model, share, send, loop), daemon=True
            )
            proc.start()
            send.close()  # the worker holds the only sending end: its exit is our EOF
            running[receive] = (index, proc, len(share))
        got = dict.fromkeys(running, 0)
        with plan.path.open("a", encoding="utf-8") as fh:
            while running:
                for conn in multiprocessing.connection.wait(list(running)):
                    try:
                        line = conn.recv()
                    except EOFError:
                        index, proc, total = running.pop(conn)
                        proc.join()
                        if got[conn] < total or proc.exitcode != 0:
                            failures.append(
                                f"worker {index} exited with code {proc.exitcode} after "
                                f"{got[conn]} of its {total} rollouts"
                            )
                        continue
                    fh.write(line + "\n")
                    fh.flush()
                    fresh.append(json.loads(line))
                    got[conn] += 1
                    if progress:
                        progress(1)
    finally:
        for _, proc, _ in running.values():
            proc.terminate()
            proc.join()
    if failures:
        raise WorkerDied(
            "; ".join(failures) + " (the finished rollouts are saved: --resume plays the rest)"
        )
    return finish_eval(plan, spec, fresh)

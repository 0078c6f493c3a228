"""Playing an eval's rollouts: the model each process builds, the progress bar, and one
process or several (`--workers`)."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from datagauntlet.frontdoors.event_loop import run as run_on_loop

if TYPE_CHECKING:
    from datagauntlet.frontdoors.evaluate import EvalOutcome, EvalSpec
    from datagauntlet.frontdoors.loop import Model


def model_factory(
    args: argparse.Namespace, env: Any, policy: str | None, request_timeout: float
) -> Callable[[], Model]:
    """What each playing process calls once for its model: the endpoint's client, or the
    policy named `policy` when there is no endpoint."""

    def make_model() -> Model:
        if args.base_url:
            from datagauntlet.frontdoors.models import OpenAIModel

            return OpenAIModel(
                args.model,
                args.base_url,
                args.api_key_env,
                args.temperature,
                args.retries,
                timeout=request_timeout,
                max_connections=max(16, math.ceil(args.concurrency / args.workers)),
                transport=args.http_transport,
            )
        from datagauntlet.frontdoors.models import PolicyModel

        return PolicyModel(env.policies()[policy])

    return make_model


def play(
    env: Any,
    spec: EvalSpec,
    make_model: Callable[[], Model],
    out: Path,
    total: int,
    args: argparse.Namespace,
) -> EvalOutcome | None:
    """Every rollout of `spec`, with a progress bar on stderr; None when a worker died (said
    on stderr)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from datagauntlet.frontdoors.evaluate import run_eval

    async def main(advance: Callable[[int], None]) -> EvalOutcome:
        model_obj = make_model()
        try:
            return await run_eval(env, spec, model_obj, out, advance)
        finally:
            close = getattr(model_obj, "close", None)
            if close is not None:
                await close()

    with Progress(
        TextColumn(f"[bold]{env.id}[/] {spec.label}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        job = bar.add_task("eval", total=total)

        def advance(k: int) -> None:
            bar.advance(job, k)

        if args.workers > 1:
            from datagauntlet.frontdoors.eval_workers import WorkerDied, run_eval_workers

            try:
                return run_eval_workers(
                    env, spec, make_model, out, args.workers, advance, args.event_loop
                )
            except WorkerDied as exc:
                print(f"datagauntlet eval: {exc}", file=sys.stderr)
                return None
        return run_on_loop(main(advance), args.event_loop)

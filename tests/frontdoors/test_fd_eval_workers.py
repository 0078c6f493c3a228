"""`eval --workers K`: the same records as one process, one results writer, and a worker that
dies costs only its unfinished rollouts (the run fails naming it; --resume plays the rest)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import datagauntlet as dg
from datagauntlet.cli.main import main
from datagauntlet.frontdoors.eval_workers import WorkerDied, run_eval_workers
from datagauntlet.frontdoors.evaluate import EvalSpec, load_records
from datagauntlet.frontdoors.loop import Reply
from datagauntlet.frontdoors.models import PolicyModel

ENV = "dirty-integration"
# what differs between two plays of one rollout: its wall time
TIMING = ("seconds",)


def _by_key(out: Path) -> dict[tuple[str, int], dict[str, Any]]:
    return {
        (r["task_id"], r["rollout"]): {k: v for k, v in r.items() if k not in TIMING}
        for r in load_records(out / "results.jsonl")
    }


def _eval(out: Path, url: str, *extra: str) -> int:
    return main(
        ["eval", "--env", ENV, "--model", "careful", "--base-url", url, "-n", "6", "-r", "2",
         "--concurrency", "5", "--out", str(out), "--json", *extra]
    )  # fmt: skip


def test_workers_write_the_records_one_process_writes(mock_model: Any, tmp_path: Path) -> None:
    server = mock_model(dg.make(ENV))
    assert _eval(tmp_path / "one", server.base_url) == 0
    assert _eval(tmp_path / "three", server.base_url, "--workers", "3") == 0
    one, three = _by_key(tmp_path / "one"), _by_key(tmp_path / "three")
    assert len(one) == 12 and one == three
    summary = json.loads((tmp_path / "three" / "summary.json").read_text())
    assert summary["n"] == 12 and summary["failed"] == 0 and summary["ran"] == 12
    lines = (tmp_path / "three" / "results.jsonl").read_text().splitlines()
    assert len(lines) == 12 and all(json.loads(line) for line in lines)  # whole lines only


def test_resume_with_workers_plays_only_what_is_missing(mock_model: Any, tmp_path: Path) -> None:
    server = mock_model(dg.make(ENV))
    assert _eval(tmp_path, server.base_url, "--workers", "2") == 0
    path = tmp_path / "results.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:5]) + "\n")
    before = server.requests
    assert _eval(tmp_path, server.base_url, "--workers", "2", "--resume") == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert (summary["ran"], summary["skipped"], summary["n"]) == (7, 5, 12)
    assert len(_by_key(tmp_path)) == 12
    played = server.requests - before
    assert played == sum(r["turns"] for r in load_records(path)[5:])


class _OneWorkerDies:
    """Plays the reference policy; the first worker to build one dies at its first call."""

    def __init__(self, env: dg.Environment, token: Path) -> None:
        self.inner = PolicyModel(env.policies()[env.reference])
        try:
            os.close(os.open(token, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            self.doomed = True
        except FileExistsError:
            self.doomed = False

    async def complete(self, messages: list[dict[str, Any]], tools: list[Any]) -> Reply:
        if self.doomed:
            os._exit(3)
        return await self.inner.complete(messages, tools)


def test_a_dead_worker_fails_the_run_and_resume_finishes_it(tmp_path: Path) -> None:
    env = dg.make(ENV)
    out = tmp_path / "out"
    spec = EvalSpec(n=6, concurrency=2, label=f"agent:{env.reference}")
    with pytest.raises(WorkerDied, match=r"worker [01] exited with code 3 after 0 of its 3"):
        run_eval_workers(env, spec, lambda: _OneWorkerDies(env, tmp_path / "token"), out, 2)
    kept = load_records(out / "results.jsonl")
    ids = [t.id for t in env.tasks("eval", 6)]
    # the other worker played its three tasks (every other one) to the end
    assert sorted(r["task_id"] for r in kept) in (sorted(ids[0::2]), sorted(ids[1::2]))
    spec.resume = True
    outcome = run_eval_workers(
        env, spec, lambda: PolicyModel(env.policies()[env.reference]), out, 2
    )
    assert (outcome.ran, outcome.skipped, len(outcome.records)) == (3, 3, 6)
    assert all(r["status"] == "ok" and r["reward"] == 1.0 for r in outcome.records)


def test_workers_below_one_is_a_cli_mistake(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:  # refused by the option's parser, before any work
        main(["eval", "--env", ENV, "--workers", "0", "--out", "/nonexistent/x"])
    assert exc.value.code == 2
    assert "--workers must be >= 1" in capsys.readouterr().err

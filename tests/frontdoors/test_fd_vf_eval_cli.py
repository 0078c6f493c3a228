"""End to end: the real `vf-eval` CLI, offline, against the scripted model over HTTP.

One run per registered env (each run pays verifiers' ~5 s import): rewards in traces.jsonl must
equal the env's in-process scores of the same policy on the same tasks.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import datagauntlet as dg
from datagauntlet.core.runner import play

N_TASKS = 2


def vf_eval() -> str:
    found = shutil.which("vf-eval", path=str(Path(sys.executable).parent))
    assert found, "vf-eval is installed with the [verifiers] extra"
    return found


# the option that keeps every tool call of the default harness on MCP, as the README gives it
OVER_MCP = [
    "--env.agent.harness.id",
    "dirty-integration",
    "--env.agent.harness.in-process-tools",
    "false",
]


@pytest.mark.parametrize(
    ("env_id", "options"),
    [(env_id, []) for env_id in dg.list_envs()] + [("dirty-integration", OVER_MCP)],
)
def test_vf_eval_rewards_equal_in_process_scores(
    env_id: str, options: list[str], mock_model: Any, tmp_path: Path
) -> None:
    pytest.importorskip("verifiers")
    env = dg.make(env_id)
    policy = env.reference
    server = mock_model(env)
    out = tmp_path / "out"
    run_env = {**os.environ, "HOME": str(tmp_path), "NO_PROXY": "127.0.0.1,localhost"}
    cmd = [
        vf_eval(), env_id, "-n", str(N_TASKS), "-r", "1", "-m", policy,
        "--client.base-url", server.base_url, "--env.agent.runtime.type", "subprocess",
        "--env.agent.max-turns", "1000", "--no-push", "--no-rich",
        "-o", str(out), "--run.name", "e2e", *options,
    ]  # fmt: skip
    if "max_turns" in env.config.as_dict():
        cmd += ["--env.taskset.max-turns", "1000"]  # in-process play has no turn budget
    proc = subprocess.run(
        cmd, env=run_env, cwd=tmp_path, capture_output=True, text=True, timeout=240
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = (out / "e2e" / "traces.jsonl").read_text().splitlines()
    traces = [t for line in lines for t in json.loads(line)["traces"]]
    assert len(traces) == N_TASKS
    tasks = {t.id: t for t in env.tasks("eval", N_TASKS)}
    for trace in traces:
        data = trace["task"]["data"]
        expected = play(env, policy, tasks[data["id"]])
        assert data["seed"] == tasks[data["id"]].seed
        assert trace["errors"] == [] and trace["stop_condition"] == "episode_done"
        rewards = trace["rewards"]
        assert {k: r["score"] for k, r in rewards.items()} == expected.components
        assert {k: r["weight"] for k, r in rewards.items()} == dict(env.weights)
        numeric = {k: float(v) for k, v in expected.metrics.items() if isinstance(v, (int, float))}
        assert trace["metrics"] == numeric
        total = sum(r["score"] * r["weight"] for r in rewards.values())
        assert math.isclose(total, expected.reward, abs_tol=1e-6)
    # the world key is never written out
    assert "world_key" not in "\n".join(lines) and "/w/" not in "\n".join(lines)

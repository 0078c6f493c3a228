"""The verifiers door as its users drive it: the real `vf-eval`, `vf-replay` and
`vf-validate` commands, offline, against the scripted model over HTTP, on every env.

- `vf-eval` with no runtime flag (this package's default Env: the subprocess runtime) and with
  `--env.agent.runtime.type subprocess`: rewards and metrics equal the env's in-process scores
  of the same policy on the same tasks;
- `vf-replay` of a saved run re-scores it exactly (the same rewards and metrics), from nothing
  but what verifiers wrote;
- `vf-validate`: the gold check passes (the reference policy scores 1.0), the noop check too,
  and no world or thread is left behind;
- a remote runtime is refused up front, naming the flag; no world key reaches any log.
Each command pays verifiers' ~5 s import.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import datagauntlet as dg
from datagauntlet.core.env import policy_sees_truth
from datagauntlet.core.runner import play

N_TASKS = 2
# Every command on every env costs ~25-45 s of two cores; `make test` plays the two runtimes
# and the replay on two envs (one with sandboxed scripts), `make gates` on all of them.
# vf-validate, in-process, still loads every env through verifiers in `make test`.
GATES = os.environ.get("DATAGAUNTLET_GATES") == "1"
EVERY_RUNTIME_IN_MAKE_TEST = ("dirty-integration", "event-recon")


def every_runtime_envs() -> list[Any]:
    return [
        pytest.param(
            env_id,
            marks=pytest.mark.skipif(
                not GATES and env_id not in EVERY_RUNTIME_IN_MAKE_TEST,
                reason="vf-eval on both runtimes of every env: make gates",
            ),
        )
        for env_id in dg.list_envs()
    ]


def partial_policy(env: dg.Environment) -> str:
    """A policy other than the reference that a model can play (so that equal rewards say
    something: it does not score 1.0 everywhere)."""
    return next(
        name
        for name, policy in env.policies().items()
        if name != env.reference and not policy_sees_truth(policy)
    )


WORLD_KEY = re.compile(r"/w/[A-Za-z0-9_-]{20,}")


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    assert found, f"{name} is installed with the [verifiers] extra"
    return found


def _environ(tmp: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(tmp), "NO_PROXY": "127.0.0.1,localhost"}


def _start(args: list[str], tmp: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        args, env=_environ(tmp), cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip


def _finish(proc: subprocess.Popen[str], timeout: float = 300) -> tuple[str, str]:
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    assert proc.returncode == 0, err[-3000:]
    return out, err


def vf_eval(
    env: dg.Environment, policy: str, url: str, out: Path, name: str, *extra: str
) -> list[str]:
    cmd = [
        _tool("vf-eval"), env.id, "-n", str(N_TASKS), "-r", "1", "-m", policy,
        "--client.base-url", url, "--env.agent.max-turns", "1000", "--no-push", "--no-rich",
        "-o", str(out), "--run.name", name, *extra,
    ]  # fmt: skip
    return [*cmd, "--env.taskset.max-turns", "1000"]  # in-process play has no turn budget


def traces_of(run: Path) -> list[dict[str, Any]]:
    lines = (run / "traces.jsonl").read_text().splitlines()
    return [t for line in lines for t in json.loads(line)["traces"]]


def total(trace: dict[str, Any]) -> float:
    return sum(r["score"] * r["weight"] for r in trace["rewards"].values())


def assert_scores_like_in_process(env: dg.Environment, policy: str, run: Path) -> None:
    traces = traces_of(run)
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
        assert math.isclose(total(trace), expected.reward, abs_tol=1e-6)


def assert_no_world_key(*texts: str) -> None:
    for text in texts:
        assert WORLD_KEY.search(text) is None, WORLD_KEY.search(text)


@pytest.mark.parametrize("env_id", every_runtime_envs())
def test_vf_eval_on_both_runtimes_and_vf_replay_rescore_exactly(
    env_id: str, mock_model: Any, tmp_path: Path
) -> None:
    pytest.importorskip("verifiers")
    env = dg.make(env_id)
    server = mock_model(env)
    out = tmp_path / "out"
    partial = partial_policy(env)
    runs = {
        "default": _start(vf_eval(env, env.reference, server.base_url, out, "default"), tmp_path),
        "subprocess": _start(
            vf_eval(env, partial, server.base_url, out, "subprocess",
                    "--env.agent.runtime.type", "subprocess"),
            tmp_path,
        ),
    }  # fmt: skip
    outputs = {name: _finish(proc) for name, proc in runs.items()}
    assert_scores_like_in_process(env, env.reference, out / "default")
    assert_scores_like_in_process(env, partial, out / "subprocess")
    assert {t["stop_condition"] for t in traces_of(out / "subprocess")} == {"episode_done"}
    assert any(total(t) < 1.0 for t in traces_of(out / "subprocess"))
    for name, (stdout, stderr) in outputs.items():
        logs = [p.read_text() for p in (out / name / "logs").rglob("*.log")]
        assert logs and "tool server" in logs[0]  # verifiers logs the URL: the key is not in it
        assert_no_world_key(stdout, stderr, (out / name / "traces.jsonl").read_text(), *logs)

    replay = tmp_path / "replayed"
    cmd = [_tool("vf-replay"), str(out / "subprocess"), "--output-dir", str(replay), "--no-rich"]
    _finish(_start(cmd, tmp_path))
    original = {t["task"]["data"]["id"]: t for t in traces_of(out / "subprocess")}
    replayed = traces_of(replay)
    assert len(replayed) == N_TASKS
    for trace in replayed:
        before = original[trace["task"]["data"]["id"]]
        assert trace["errors"] == []
        assert trace["rewards"] == before["rewards"] and trace["metrics"] == before["metrics"]
        assert total(trace) == total(before)


def test_vf_eval_with_every_tool_call_over_mcp(mock_model: Any, tmp_path: Path) -> None:
    # the option that keeps every tool call of the default harness on MCP, as the README has it
    pytest.importorskip("verifiers")
    env = dg.make("dirty-integration")
    server = mock_model(env)
    over_mcp = ["--env.agent.harness.id", env.id, "--env.agent.harness.in-process-tools", "false"]
    cmd = vf_eval(env, env.reference, server.base_url, tmp_path / "out", "mcp", *over_mcp)
    _finish(_start(cmd, tmp_path))
    assert_scores_like_in_process(env, env.reference, tmp_path / "out" / "mcp")


def test_vf_eval_refuses_a_remote_runtime_up_front(tmp_path: Path) -> None:
    vf = pytest.importorskip("verifiers.v1")
    env = dg.make("dirty-integration")
    for runtime in ("prime", "docker", "modal"):
        with pytest.raises(ValueError, match=f"the {runtime} runtime is not supported"):
            vf.resolve_env_config(
                {"taskset": {"id": env.id}, "agent": {"runtime": {"type": runtime}}}
            )
    cmd = vf_eval(env, "careful", "http://127.0.0.1:9/v1", tmp_path / "out", "prime",
                  "--env.agent.runtime.type", "prime")  # fmt: skip
    proc = subprocess.run(
        cmd, env=_environ(tmp_path), cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode != 0
    message = " ".join(proc.stderr.replace("│", " ").split())
    assert "the prime runtime is not supported" in message
    assert "--env.agent.runtime.type subprocess" in message
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out" / "prime" / "traces.jsonl").exists()  # no rollout ran


def _validate(env_id: str, out: Path) -> list[dict[str, Any]]:
    """vf-validate's own run, in this process (so that its worlds can be counted)."""
    from verifiers.v1.cli.resolve import narrow_taskset_config
    from verifiers.v1.cli.validate import run_validate
    from verifiers.v1.configs.cli.validate import ValidateConfig

    config_cls = narrow_taskset_config(ValidateConfig, env_id)
    config = config_cls.model_validate({
        "taskset": {"id": env_id, "num_tasks": N_TASKS}, "runtime": {"type": "subprocess"},
        "rich": False, "output_dir": str(out),
    })  # fmt: skip
    return asyncio.run(run_validate(config))


@pytest.mark.parametrize("env_id", dg.list_envs())
def test_vf_validate_passes_gold_and_noop_and_frees_its_worlds(env_id: str, tmp_path: Path) -> None:
    pytest.importorskip("verifiers.v1")
    from datagauntlet.frontdoors.vf.tool_server import tool_server
    from datagauntlet.frontdoors.vf.worlds import WORLDS

    tool_server()  # the process's one server thread, counted in the baseline
    threads, worlds = threading.active_count(), len(WORLDS)
    rows = _validate(env_id, tmp_path)
    assert len(rows) == N_TASKS
    for row in rows:
        assert row["gold"]["reason"] == "valid", row
        assert row["noop"]["reason"] == "valid" and row["noop"]["reward"] < 1.0, row
    assert len(WORLDS) == worlds
    deadline = time.monotonic() + 10
    while threading.active_count() > threads and time.monotonic() < deadline:
        time.sleep(0.05)
    assert threading.active_count() <= threads


def test_the_vf_validate_command_runs_as_the_readme_gives_it(tmp_path: Path) -> None:
    pytest.importorskip("verifiers")
    cmd = [_tool("vf-validate"), "dirty-integration", "--runtime.type", "subprocess",
           "--no-rich", "-n", "2", "-o", str(tmp_path / "val")]  # fmt: skip
    stdout, _ = _finish(_start(cmd, tmp_path))
    summary = json.loads(stdout[stdout.index("{") :])
    assert summary["checks"]["gold"]["valid"] == 2 and summary["checks"]["noop"]["valid"] == 2

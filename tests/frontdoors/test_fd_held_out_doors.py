"""A held-out task's seed never leaves the process through `datagauntlet serve`, the MCP door
(`datagauntlet mcp`) or the verifiers door: not in a reply or tool result, the score logged on
stderr, a taskset row, nor anything `vf-eval` writes (traces.jsonl, logs). A verifiers run of a
private split is still re-scored by the secret's holder (`datagauntlet rescore traces.jsonl`)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import datagauntlet as dg
from datagauntlet.core import seeding
from datagauntlet.core.replay import next_tool_call

SECRET = "held-out-fd-test-secret-000001"
CLI = [sys.executable, "-m", "datagauntlet.cli.main"]


@pytest.fixture
def secret(monkeypatch: pytest.MonkeyPatch) -> dict[int, str]:
    """The secret set here (and so for children); every held-out seed, by its task."""
    monkeypatch.delenv(seeding.SECRET_FILE_ENV, raising=False)
    monkeypatch.setenv(seeding.SECRET_ENV, SECRET)
    seeds = {}
    for env_id in dg.list_envs():
        env = dg.make(env_id)
        for split in seeding.HELD_OUT_SPLITS:
            seeds |= {t.seed: f"{env_id} {t.id}" for t in env.tasks(split, 3)}
    return seeds


def _leaks(text: str, seeds: dict[int, str]) -> list[str]:
    return [
        f"{where}: {form}"
        for seed, where in seeds.items()
        for form in {str(seed), f"{seed:x}", f"{seed:X}", f"{seed:016x}"}
        if form in text
    ]


@pytest.mark.parametrize("env_id", dg.list_envs())
def test_mcp_door_shows_no_held_out_seed(
    env_id: str, secret: dict[int, str], tmp_path: Path
) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = dg.make(env_id)
    policy = env.policies()[env.reference]
    errlog = (tmp_path / "stderr.log").open("w+")
    child_env = {seeding.SECRET_ENV: SECRET}
    if "PYTHONPATH" in os.environ:
        child_env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    args = [*CLI[1:], "mcp", env_id, "--split", "private", "--task", "1"]
    params = StdioServerParameters(command=CLI[0], args=args, env=child_env)
    seen: list[str] = []

    async def go() -> dict[str, Any]:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            listed = await client.list_tools()
            seen.append(json.dumps([t.model_dump(mode="json") for t in listed.tools]))
            specs = [
                {"type": "function", "function": {"name": t.name, "description": t.description,
                                                  "parameters": t.input_schema}}
                for t in listed.tools
            ]  # fmt: skip
            text = client.instructions or ""
            seen.append(text)
            results: list[dict[str, Any]] = []
            while True:
                call = next_tool_call(policy, text, text, specs, results)
                assert call is not None
                out = await client.call_tool(call.name, call.arguments)
                seen.append(out.content[0].text)
                results.append(json.loads(out.content[0].text))
                if "score" in results[-1]:
                    return results[-1]["score"]

    score = asyncio.run(go())
    errlog.seek(0)
    logged = errlog.read()
    assert score["reward"] == pytest.approx(1.0)
    task = next(json.loads(line) for line in logged.splitlines() if '"score"' in line)["task"]
    assert "seed" not in task and task["ref"] == env.make_task("private", 1).ref
    assert _leaks("\n".join([*seen, logged]), secret) == []


def test_verifiers_rows_of_a_private_split_hold_no_seed(secret: dict[int, str]) -> None:
    vf = pytest.importorskip("verifiers.v1")
    from datagauntlet.frontdoors.vf.taskset import taskset_for

    for env_id in dg.list_envs():
        cfg = vf.resolve_env_config(
            {"taskset": {"id": env_id, "num_tasks": 2, "split": "private"}}
        ).taskset
        tasks = list(taskset_for(env_id)(cfg))
        env = dg.make(env_id)
        for task, expected in zip(tasks, env.tasks("private", 2), strict=True):
            row = task.data.model_dump_json()
            assert task.data.seed is None and task.data.ref == expected.ref
            assert _leaks(row, secret) == []
            assert task.dg_task() == expected  # rebuilt in process, where the secret is


def test_vf_eval_of_a_private_split_writes_no_seed_and_rescores(
    secret: dict[int, str], tmp_path: Path, mock_model: Any
) -> None:
    pytest.importorskip("verifiers")
    import shutil

    env = dg.make("dirty-integration")
    server = mock_model(env)
    vf_eval = shutil.which("vf-eval", path=str(Path(sys.executable).parent))
    assert vf_eval
    out = tmp_path / "out"
    cmd = [vf_eval, env.id, "-n", "2", "-r", "1", "-m", env.reference,
           "--client.base-url", server.base_url, "--env.agent.max-turns", "1000", "--no-push",
           "--no-rich", "-o", str(out), "--run.name", "private",
           "--env.taskset.split", "private", "--env.taskset.max-turns", "1000"]  # fmt: skip
    environ = {**os.environ, "HOME": str(tmp_path), "NO_PROXY": "127.0.0.1,localhost"}
    proc = subprocess.run(
        cmd, env=environ, cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    written = [p.read_text(errors="replace") for p in out.rglob("*") if p.is_file()]
    traces = out / "private" / "traces.jsonl"
    assert traces.is_file() and '"ref": "ref-' in traces.read_text().replace('":"', '": "')
    assert _leaks("\n".join([proc.stdout, proc.stderr, *written]), secret) == []
    rescored = subprocess.run(
        [*CLI, "rescore", str(traces), "--json"],
        env=environ,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert rescored.returncode == 0, rescored.stderr
    assert json.loads(rescored.stdout)["changed"] == []


def _banner(out: Any, proc: subprocess.Popen[bytes], seconds: float = 10.0) -> str:
    """The server's first line, which names its port (bounded wait)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and proc.poll() is None:
        out.seek(0)
        text = str(out.read())
        if "http://127.0.0.1:" in text:
            return text
        time.sleep(0.05)
    raise AssertionError(f"serve printed no address (exit {proc.poll()})")


def test_serve_door_shows_no_held_out_seed(secret: dict[int, str], tmp_path: Path) -> None:
    """`datagauntlet serve --split private`: its banner, every reply of a whole play (pages,
    the submission, the score, a wrong route) and its output hold no seed."""
    import httpx

    child_env = {**os.environ, seeding.SECRET_ENV: SECRET}
    argv = [*CLI, "serve", "dirty-integration", "--split", "private", "--seed", "1", "--port", "0"]
    out = (tmp_path / "serve.log").open("w+")
    proc = subprocess.Popen([*argv, "profile=clean"], stdout=out, stderr=out, env=child_env)
    seen: list[str] = []
    try:
        banner = _banner(out, proc)
        base = "http://127.0.0.1:" + banner.split("http://127.0.0.1:")[1].split()[0]
        with httpx.Client(base_url=base, timeout=10) as client:
            records, cursor = [], None
            for _ in range(50):  # a clean world of 40 records: a few pages
                page = client.get("/records", params={} if cursor is None else {"cursor": cursor})
                seen.append(page.text)
                records += page.json()["records"]
                cursor = page.json().get("next_cursor")
                if not cursor:
                    break
            kept = [{"id": r["id"], "amount": r["amount"]} for r in records]
            seen.append(client.post("/submit", json={"records": kept}).text)
            score = client.get("/score")
            seen += [score.text, client.get("/nowhere").text]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    out.seek(0)
    seen.append(out.read())
    assert score.status_code == 200 and score.json()["reward"] == 1.0  # the whole play was served
    assert "private-00001" in seen[-1]
    assert _leaks("\n".join(seen), secret) == []

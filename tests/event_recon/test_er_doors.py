"""event-recon through its doors, as a user runs them: eval against the scripted model over
real HTTP, vf-eval offline with the package's tool-only harness, the MCP door, and play."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import datagauntlet as dg
from datagauntlet.frontdoors.mock_model import MockModelServer

CLI = [sys.executable, "-m", "datagauntlet.cli.main"]
FIVE = {"sql_query", "read_file", "write_file", "run_python", "submit_report"}


@pytest.fixture
def mock() -> Any:
    server = MockModelServer(dg.make("event-recon")).start()
    try:
        yield server
    finally:
        server.stop()


def _env() -> dict[str, str]:
    return {**os.environ, "NO_PROXY": "127.0.0.1,localhost"}


def test_eval_against_the_scripted_reference_scores_one(mock: Any, tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = subprocess.run(
        [*CLI, "eval", "--env", "event-recon", "-n", "4", "--model", "reference",
         "--base-url", mock.base_url, "--out", str(out), "--json"],
        capture_output=True, text=True, timeout=300, env=_env(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads(proc.stdout)
    assert summary["n"] == 4 and summary["failed"] == 0
    assert summary["mean_reward"] == 1.0
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert all(r["reward"] == 1.0 for r in records)
    assert all(r["metrics"]["failure_code"] == "solved" for r in records)


def test_vf_eval_runs_offline_with_the_tool_only_harness(mock: Any, tmp_path: Path) -> None:
    pytest.importorskip("verifiers")
    vf_eval = shutil.which("vf-eval", path=str(Path(sys.executable).parent))
    assert vf_eval
    out = tmp_path / "out"
    proc = subprocess.run(
        [vf_eval, "event-recon", "-n", "1", "-r", "1", "-m", "reference",
         "--client.base-url", mock.base_url, "--env.agent.runtime.type", "subprocess",
         "--no-push", "--no-rich", "-o", str(out), "--run.name", "er"],
        env={**_env(), "HOME": str(tmp_path)}, cwd=tmp_path,
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = (out / "er" / "traces.jsonl").read_text().splitlines()
    traces = [t for line in lines for t in json.loads(line)["traces"]]
    assert len(traces) == 1
    trace = traces[0]
    assert trace["errors"] == [] and trace["stop_condition"] == "episode_done"
    assert sum(r["score"] * r["weight"] for r in trace["rewards"].values()) == pytest.approx(1.0)
    # the rollout was offered exactly the five tools, by the package's own harness
    assert {t["name"] for t in trace["tools"]} == FIVE
    assert trace["agent"]["config"]["harness"]["id"] == "event-recon"
    called = {c["name"] for m in _messages(trace) for c in (m.get("tool_calls") or [])}
    assert called and called <= FIVE


@pytest.mark.parametrize("harness", ["bash", "codex"])
def test_a_harness_that_executes_code_is_refused_before_any_rollout(harness: str) -> None:
    # on the subprocess runtime (the only one the tools are reachable from) a code-running
    # harness is a host shell with this package importable: the truth one import away
    vf = pytest.importorskip("verifiers.v1")
    from verifiers.v1.utils.loaders import default_harness_id, harness_class

    with pytest.raises(ValueError, match="executes code"):
        vf.resolve_env_config(
            {"taskset": {"id": "event-recon"}, "agent": {"harness": {"id": harness}}}
        )
    assert harness_class(harness).EXECUTES_CODE
    default = vf.resolve_env_config({"taskset": {"id": "event-recon"}})
    assert default.agent.harness is None and default_harness_id("event-recon") == "event-recon"
    assert not harness_class("event-recon").EXECUTES_CODE


def _messages(trace: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if value.get("role") == "assistant":
                found.append(value)
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(trace)
    return found


def test_mcp_door_serves_exactly_the_five_tools(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    import asyncio

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    path = {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else None
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "datagauntlet.cli.main", "mcp", "event-recon", "--seed", "0"],
        env=path,
    )
    errlog = (tmp_path / "stderr.log").open("w+")

    async def go() -> tuple[set[str], bool]:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            listed = await client.list_tools()
            out = await client.call_tool("sql_query", {"query": "SELECT COUNT(*) FROM partners"})
            return {t.name for t in listed.tools}, bool(out.is_error)

    names, failed = asyncio.run(asyncio.wait_for(go(), 120))
    assert names >= FIVE and not failed
    assert not names & {"bash", "shell", "list_files"}


def test_play_works_for_a_person() -> None:
    lines = "\n".join(
        [
            "tools",
            'sql_query {"query": "SELECT COUNT(*) FROM ledger_entries"}',
            'write_file {"path": "fix.py", "content": "pass"}',
            'submit_report {"findings": [], "script_path": "fix.py"}',
        ]
    )
    proc = subprocess.run(
        [*CLI, "play", "event-recon", "--seed", "0"],
        input=lines + "\n", capture_output=True, text=True, timeout=120, env=_env(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    for name in FIVE:
        assert name in proc.stdout
    assert "episode over (reported)" in proc.stdout and "no_findings" in proc.stdout

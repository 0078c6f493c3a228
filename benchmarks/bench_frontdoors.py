"""Front-door speed: verifiers overhead per rollout, and `datagauntlet eval` at 256 at once.

    .venv/bin/python benchmarks/bench_frontdoors.py [--env ID] [--rollouts 20]
        [--eval-rollouts 1024] [--skip-eval] [--skip-vf]

1. verifiers path: rollouts through `vf.Agent` with the in-package harness and the in-process
   tool server, against the scripted model running in its own process. Overhead = a rollout's
   wall time minus the time verifiers records for model calls. Measured with the harness's
   default (it calls this process's worlds directly) and with every tool call over MCP (as any
   other harness makes them). Compared with the alternative
   of one tool-server process per rollout (verifiers' default placement), timed by launching
   such a toolset through verifiers' own `serve()`.
2. `datagauntlet eval --concurrency 256 --workers 2` against the scripted model: model calls
   per second (whole process, and once started: less a 1-rollout run), the same in one
   process, CPU per call of the eval processes and of the mock, start-up, failures, peak
   memory. The floor is the same mock answering the very requests of that run (rebuilt from
   its results) sent by a bare asyncio client at the same concurrency: the cheapest client
   that could do the job. Since all share the 2 cores with the mock (and a busy machine with
   others), the CPU figures also give the rate the CPU allows: 1 / max(eval CPU / workers,
   (eval + mock CPU) / 2) per call (one event loop uses one core).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchlib import Figure

HERE = Path(__file__).resolve().parent
CLI = [sys.executable, "-m", "datagauntlet.cli.main"]
CLOCK = os.sysconf("SC_CLK_TCK")
BARE = "bare asyncio client, same requests, same mock"
# Rollouts of the 256-at-once run: long enough (~14k model calls) that the SDK's import at
# start-up (~1.4 s of CPU) is not a sixth of the run, as it was at 512.
EVAL_ROLLOUTS = 1024

FIGURES = (
    Figure("eval-calls", f"`eval --workers 2`, {EVAL_ROLLOUTS} rollouts 256 at once: model calls "
           "per second (whole process, start-up included)", "calls/s", BARE, "higher",
           target=1000),
    Figure("eval-steady", "... model calls per second once started (its wall less that of "
           "a 1-rollout run)", "calls/s", BARE, "higher", target=1000),
    Figure("eval-one-process", "... the same in one process (`--workers 1`), whole process",
           "calls/s", BARE, "higher"),
    Figure("eval-cpu-rate", "... calls per second the CPU allows on 2 cores (eval and "
           "mock CPU per call)", "calls/s", BARE, "higher", target=1000),
    Figure("eval-cpu-per-call", "... eval CPU per model call (every process, start-up "
           "excluded)", "ms", BARE),
    Figure("eval-startup-cpu", "... eval start-up: CPU of a 1-rollout run", "s"),
    Figure("mock-cpu-per-call", "... mock-model CPU per model call", "ms", BARE),
    Figure("eval-failures", "... failed rollouts", "", target=0),
    Figure("eval-peak-rss", "... peak memory of one eval process", "MB"),
)  # fmt: skip
WORKERS = 2


def start_mock(env_id: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [*CLI, "mock-model", "--env", env_id, "--port", "0"], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().rsplit(" at ", 1)[1].strip()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def vf_rollouts(
    env_id: str, base_url: str, n: int, concurrency: int, in_process_tools: bool = True
) -> tuple[list[Any], float]:
    import verifiers.v1 as vf

    from datagauntlet.frontdoors.vf.taskset import taskset_for

    cfg = vf.resolve_env_config({"taskset": {"id": env_id, "num_tasks": n}}).taskset
    tasks = list(taskset_for(env_id)(cfg))
    agent = vf.Agent(
        vf.AgentConfig(
            model="default",  # the scripted model's default policy: the env's reference
            client=vf.EvalClientConfig(base_url=base_url, api_key_var="DG_NO_KEY"),
            harness={"id": env_id, "in_process_tools": in_process_tools},
            runtime=vf.SubprocessConfig(),
            max_turns=1000,
        )
    )
    gate = asyncio.Semaphore(concurrency)

    async def one(task: Any) -> Any:
        async with gate:
            return await agent.run(task)

    await one(tasks[0])  # warm-up: starts the tool server, opens connections
    start = time.perf_counter()
    traces = list(await asyncio.gather(*(one(t) for t in tasks)))
    return traces, time.perf_counter() - start


def overhead_rows(run: tuple[list[Any], float]) -> dict[str, float]:
    traces, elapsed = run
    total, model, setup, tools, closing = [], [], [], [], []
    h_model, h_tools = [], []
    for tr in traces:
        h_model.append(tr.info["harness_seconds"]["model"])
        h_tools.append(tr.info["harness_seconds"]["tool"])
        t = tr.timing
        wall = t.scoring.end - t.start
        m = t.agent.model.duration
        total.append(wall)
        model.append(m)
        setup.append(t.setup.end - t.start)
        tools.append(t.agent.harness.duration)
        closing.append(t.scoring.end - t.finalize.start)
    over = [w - m for w, m in zip(total, model, strict=True)]
    return {
        "rollouts": len(traces),
        "rollouts_per_s": len(traces) / elapsed,
        "mean_turns": statistics.fmean(tr.num_turns for tr in traces),
        "wall_ms_mean": 1000 * statistics.fmean(total),
        "model_ms_mean": 1000 * statistics.fmean(model),
        "overhead_ms_mean": 1000 * statistics.fmean(over),
        "overhead_ms_median": 1000 * statistics.median(over),
        "overhead_ms_p90": 1000 * pct(over, 0.9),
        "setup_ms_mean": 1000 * statistics.fmean(setup),
        "tool_calls_ms_mean": 1000 * statistics.fmean(h_tools),
        "harness_model_wait_ms_mean": 1000 * statistics.fmean(h_model),
        "env_overhead_ms_mean": 1000
        * statistics.fmean(s + t + c for s, t, c in zip(setup, h_tools, closing, strict=True)),
        "harness_and_tools_ms_mean": 1000 * statistics.fmean(tools),
        "finalize_and_scoring_ms_mean": 1000 * statistics.fmean(closing),
        "rewards_all_1": all(
            abs(sum(r.score * r.weight for r in tr.rewards.values()) - 1.0) < 1e-6 for tr in traces
        ),
    }


async def process_launch_seconds(k: int) -> list[float]:
    """Seconds to bring up (and tear down) one per-rollout toolset process, k times."""
    import verifiers.v1 as vf
    from verifiers.v1.mcp import ToolsetConfig, serve
    from verifiers.v1.runtimes import provision_runtime

    # appended, not prepended: nothing in this folder may
    # shadow a top-level module of the package
    sys.path.append(str(HERE))
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (os.environ.get("PYTHONPATH", ""), str(HERE)) if p
    )
    from vf_process_toolset import ProbeToolset

    out = []
    async with provision_runtime(vf.SubprocessConfig()) as runtime:
        for _ in range(k):
            start = time.perf_counter()
            async with serve(ProbeToolset(ToolsetConfig()), runtime) as url:
                assert url.endswith("/mcp")
            out.append(time.perf_counter() - start)
    return out


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a running process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK


def eval_at_scale(
    env_id: str, base_url: str, n: int, concurrency: int, mock_pid: int, workers: int = 1
) -> dict:
    with tempfile.TemporaryDirectory() as tmp, open(Path(tmp) / "stdout", "w+") as out:
        mock_before = cpu_seconds(mock_pid)
        start = time.perf_counter()
        proc = subprocess.Popen(
            [*CLI, "eval", "--env", env_id, "-n", str(n), "--concurrency", str(concurrency),
             "--model", "careful", "--base-url", base_url, "--out", tmp, "--json",
             "--workers", str(workers)],
            stdout=out, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        # wait4 gives this child's own usage, its reaped workers' included (and its own peak
        # memory, or its largest worker's: not that of earlier children of this process)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - start
        mock_cpu = cpu_seconds(mock_pid) - mock_before
        out.seek(0)
        summary = json.loads(out.read())
        bodies = request_bodies(env_id, n, Path(tmp) / "results.jsonl")
    if proc.returncode not in (0, 1):
        raise SystemExit(f"eval exited {proc.returncode}")
    calls = len(bodies)
    return {
        "failed": summary["failed"],
        "calls": calls,
        "seconds": seconds,
        "calls_per_s": calls / seconds,
        "cpu": usage.ru_utime + usage.ru_stime,
        "mock_cpu": mock_cpu,
        "peak_rss_mb": usage.ru_maxrss / 1024,
        "bodies": bodies,
    }


def per_call(run: dict, start: dict) -> dict:
    """A run's figures once started: less the wall, CPU and calls of a 1-rollout run."""
    calls = run["calls"] - start["calls"]
    return {
        "calls_per_s": calls / (run["seconds"] - start["seconds"]),
        "cpu_per_call_ms": 1000 * (run["cpu"] - start["cpu"]) / calls,
        "mock_cpu_per_call_ms": 1000 * (run["mock_cpu"] - start["mock_cpu"]) / calls,
    }


def request_bodies(env_id: str, n: int, results: Path) -> list[bytes]:
    """Every chat request of an eval run, rebuilt from its transcripts: the history up to each
    assistant message, with the episode's tools, as the eval process sent it."""
    import datagauntlet as dg

    env = dg.make(env_id)
    tasks = {t.id: t for t in env.tasks("eval", n)}
    out = []
    for line in results.read_text().splitlines():
        record = json.loads(line)
        ep = env.episode(tasks[record["task_id"]])
        tools = ep.tool_specs
        ep.close()
        messages = record["messages"]
        for i, m in enumerate(messages):
            if m["role"] == "assistant":
                body = {"model": "careful", "messages": messages[:i], "tools": tools}
                out.append(json.dumps(body).encode())
    return out


async def bare_client(port: int, bodies: list[bytes], concurrency: int) -> None:
    """The floor: HTTP/1.1 keep-alive requests over plain asyncio streams, nothing else."""
    queue = list(reversed(bodies))

    async def worker() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        while queue:
            body = queue.pop()
            writer.write(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%b"
                % (len(body), body)
            )
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            reply = json.loads(await reader.readexactly(length))
            assert reply["choices"], reply
        writer.close()

    await asyncio.gather(*(worker() for _ in range(concurrency)))


def floor_at_scale(base_url: str, bodies: list[bytes], concurrency: int, mock_pid: int) -> dict:
    port = int(base_url.rsplit(":", 1)[1].split("/", 1)[0])
    mock_before, cpu_before = cpu_seconds(mock_pid), time.process_time()
    start = time.perf_counter()
    asyncio.run(bare_client(port, bodies, concurrency))
    seconds = time.perf_counter() - start
    return {
        "calls_per_s": len(bodies) / seconds,
        "cpu_per_call_ms": 1000 * (time.process_time() - cpu_before) / len(bodies),
        "mock_cpu_per_call_ms": 1000 * (cpu_seconds(mock_pid) - mock_before) / len(bodies),
    }


def cpu_rate(run: dict, workers: int = 1) -> float:
    """Calls per second two cores allow: each eval process runs on one core (one event loop),
    the mock on whatever is left."""
    own, mock = run["cpu_per_call_ms"] / 1000, run["mock_cpu_per_call_ms"] / 1000
    return 1 / max(own / min(workers, 2), (own + mock) / 2)


def add_eval_rows(report: Any, ours: dict, one: dict, start: dict, floor: dict) -> None:
    steady = per_call(ours, start)
    report.add("eval-calls", ours["calls_per_s"], floor=floor["calls_per_s"])
    report.add("eval-steady", steady["calls_per_s"], floor=floor["calls_per_s"])
    report.add("eval-one-process", one["calls_per_s"], floor=floor["calls_per_s"])
    report.add("eval-cpu-rate", cpu_rate(steady, WORKERS), floor=cpu_rate(floor))
    report.add("eval-cpu-per-call", steady["cpu_per_call_ms"], floor=floor["cpu_per_call_ms"])
    report.add("eval-startup-cpu", start["cpu"])
    report.add("mock-cpu-per-call", steady["mock_cpu_per_call_ms"],
               floor=floor["mock_cpu_per_call_ms"])  # fmt: skip
    report.add("eval-failures", ours["failed"] + one["failed"])
    report.add("eval-peak-rss", ours["peak_rss_mb"])
    report.note(f"{ours['calls']:,} model calls a run")


def main() -> None:
    from benchlib import Report  # before this folder leaves sys.path

    # `python benchmarks/bench_frontdoors.py` puts this folder first on sys.path (see above)
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="dirty-integration")
    parser.add_argument("--rollouts", type=int, default=20)
    parser.add_argument("--launches", type=int, default=3)
    parser.add_argument("--eval-rollouts", type=int, default=EVAL_ROLLOUTS)
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--skip-vf", action="store_true")
    parser.add_argument("--skip-eval", action="store_true", help="skip the 256-at-once eval part")
    args = parser.parse_args()

    table = Report(f"front doors: {args.env}", FIGURES)
    proc, base_url = start_mock(args.env)
    try:
        report: dict[str, Any] = {"env": args.env}
        # First, while this process is small: a forked child's peak memory counts the parent's.
        if not args.skip_eval:
            start = eval_at_scale(args.env, base_url, 1, args.concurrency, proc.pid, WORKERS)
            n, c = args.eval_rollouts, args.concurrency
            ours = eval_at_scale(args.env, base_url, n, c, proc.pid, WORKERS)
            one = eval_at_scale(args.env, base_url, n, c, proc.pid, 1)
            one.pop("bodies"), start.pop("bodies")
            floor = floor_at_scale(base_url, ours.pop("bodies"), args.concurrency, proc.pid)
            add_eval_rows(table, ours, one, start, floor)
        if not args.skip_vf:
            seq = asyncio.run(vf_rollouts(args.env, base_url, args.rollouts, 1))
            report["verifiers_sequential"] = overhead_rows(seq)
            mcp = asyncio.run(vf_rollouts(args.env, base_url, args.rollouts, 1, False))
            report["verifiers_sequential_tools_over_mcp"] = overhead_rows(mcp)
            par = asyncio.run(vf_rollouts(args.env, base_url, args.rollouts, 8))
            report["verifiers_concurrency_8"] = overhead_rows(par)
            launches = asyncio.run(process_launch_seconds(args.launches))
            report["per_rollout_process_launch_ms"] = {
                "launches": len(launches),
                "mean": 1000 * statistics.fmean(launches),
                "min": 1000 * min(launches),
            }
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    table.add_nested("", {k: v for k, v in report.items() if k != "env"})
    table.show()


if __name__ == "__main__":
    main()

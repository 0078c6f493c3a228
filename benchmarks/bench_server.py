"""The session server under load: 256 concurrent sessions across every env, paced calls.

The server (`datagauntlet server --workers N`, 127.0.0.1, port 0: a supervisor and N worker
processes on one address) and this load generator are separate processes. Each session slot
replays recorded reference trajectories of its env (see server_mix.py) back to back: open a
session, make its calls, check the reward in the reply that ends it, close, open the next
task. Calls are paced open-loop: a slot of an env with share s of
R calls/s over n slots sends a call every n/(s*R) seconds, and a call's latency runs from the
moment it was due, so a server that falls behind shows it in the latency instead of slowing
the clients down (no coordinated omission). Session opening is timed apart from calls.

Printed, over the window after warm-up: sustained calls/s, latency p50/p99/max (overall and
per env), errors, sessions open, CPU seconds of server (every worker) and client (calls per
CPU-second reads the same on a loaded and a quiet machine), each worker's RSS sampled every few
seconds (in a soak also its growth per minute over minutes 2-5 and 5-end), and the load
average. Floor: the round trip of a call the episode refuses at once, on the idle server.

  python benchmarks/bench_server.py                 # 20 s at 2,000 calls/s (make bench)
  python benchmarks/bench_server.py --soak 600      # the 10-minute memory soak
  python benchmarks/bench_server.py --protocol session --mix dirty-integration=256:1
  python benchmarks/bench_server.py --workers 1      # the same load on one process
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here.parent / "tests" / "server"))
sys.path.insert(0, str(here))

from benchlib import Figure  # noqa: E402
from server_mix import Trajectory, parse_mix, record  # noqa: E402
from wsload import Closed, Http, WebSocket, client_frame  # noqa: E402

REFUSED = "a refused call, idle server"
# The load target: 2,000 calls/s sustained at a p99 under 50 ms, no error, flat memory.
FIGURES = (
    Figure("calls", "tool calls per second sustained", "/s", better="higher", target=2000),
    Figure("p50", "latency p50 (from when due)", "ms", floor=REFUSED),
    Figure("p99", "latency p99 (from when due)", "ms", floor=REFUSED, target=50),
    Figure("errors", "errors (a reply not a result, a refused open, a wrong reward)", "", target=0),
    Figure("server-cpu", "server CPU, every worker", "% of a core"),
    Figure("client-cpu", "load generator CPU", "% of a core"),
    Figure("cpu-per-call", "server CPU per call", "us"),
)

CLOSE_FRAME = client_frame(b'{"op": "close"}')
REFUSED_FRAME = client_frame(b'{"name": "nothing"}')


@dataclass
class EnvStats:
    calls: int = 0
    latencies: list[float] = field(default_factory=list)
    ending: list[float] = field(default_factory=list)  # the calls that end (and score) episodes
    others: list[float] = field(default_factory=list)
    opens: list[float] = field(default_factory=list)
    episodes: int = 0
    errors: list[str] = field(default_factory=list)


@dataclass
class Run:
    port: int
    protocol: str
    window: tuple[float, float]  # perf_counter times: stats count inside it
    stats: dict[str, EnvStats]
    open_now: int = 0

    def counts(self, t: float) -> bool:
        return self.window[0] <= t <= self.window[1]


def proc_cpu(pid: int) -> float:
    """CPU seconds of a process and its reaped children (the sandbox's runs)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rpartition(")")[2].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def loadavg() -> str:
    with open("/proc/loadavg") as fh:
        return " ".join(fh.read().split()[:3])


def _session_id(body: bytes) -> str:
    at = body.find(b'"session_id"')
    if at < 0:
        raise ValueError("no session_id in the opening")
    start = body.index(b'"', body.index(b":", at) + 1) + 1
    return body[start : body.index(b'"', start)].decode()


async def _open(run: Run, traj: Trajectory, http: Http, ws: WebSocket | None) -> WebSocket:
    if run.protocol == "chained":
        assert ws is not None
        reply = await ws.request(traj.open_frame)
        if not reply.startswith(b'{"session_id"'):
            raise Closed(f"open refused: {reply[:200]!r}")
        return ws
    status, body = await http.post("/sessions", traj.open_body)
    if status != 201:
        raise Closed(f"POST /sessions answered {status}: {body[:200]!r}")
    return await WebSocket.connect(run.port, f"/sessions/{_session_id(body)}/ws")


def _check_end(reply: bytes, traj: Trajectory) -> str | None:
    try:
        msg = json.loads(reply)
        reward = msg["score"]["reward"]
    except (ValueError, KeyError, TypeError):
        return f"{traj.env} task {traj.task}: the last reply has no score: {reply[:200]!r}"
    if not msg.get("done") or reward != traj.reward:
        return f"{traj.env} task {traj.task}: reward {reward} != in-process {traj.reward}"
    return None


async def slot(run: Run, env: str, trajs: list[Trajectory], first: int, interval: float) -> None:
    stats, http = run.stats[env], Http(run.port)
    end = run.window[1]
    chained = await WebSocket.connect(run.port, "/ws") if run.protocol == "chained" else None
    await asyncio.sleep(random.random() * min(interval, 2.0))  # spread the first opens
    i = first
    try:
        while time.perf_counter() < end:
            traj = trajs[i % len(trajs)]
            i += 1
            t0 = time.perf_counter()
            try:
                ws = await _open(run, traj, http, chained)
            except (Closed, OSError, ValueError) as exc:
                if time.perf_counter() < end:
                    stats.errors.append(str(exc)[:200])
                await asyncio.sleep(0.05)
                if run.protocol == "chained":
                    chained = await WebSocket.connect(run.port, "/ws")
                continue
            now = time.perf_counter()
            if run.counts(now):
                stats.opens.append(now - t0)
            run.open_now += 1
            due = now + interval * random.random()
            reply = b""
            last = traj.frames[-1]
            try:
                for frame in traj.frames:
                    delay = due - time.perf_counter()
                    if delay > 0:
                        await asyncio.sleep(delay)
                    if time.perf_counter() >= end:
                        break
                    reply = await ws.request(frame)
                    done = time.perf_counter()
                    if run.counts(done):
                        stats.calls += 1
                        stats.latencies.append(done - due)
                        (stats.ending if frame is last else stats.others).append(done - due)
                    if not reply.startswith(b'{"result":'):
                        stats.errors.append(f"{env}: {reply[:200]!r}")
                        break
                    due += interval
                else:
                    problem = _check_end(reply, traj)
                    if problem:
                        stats.errors.append(problem)
                    else:
                        stats.episodes += time.perf_counter() <= end
                closed = await ws.request(CLOSE_FRAME)
                if not closed.startswith(b'{"closed":true'):
                    stats.errors.append(f"{env}: close answered {closed[:200]!r}")
            except Closed as exc:
                stats.errors.append(f"{env}: {exc}")
            finally:
                run.open_now -= 1
                if ws is not chained:
                    ws.close()
    finally:
        http.close()
        if chained is not None:
            chained.close()


async def refused_calls(port: int, n: int) -> list[float]:
    """The floor: round trips of a call the episode refuses at once (an unknown tool), on one
    `WS /ws` connection (served by the worker that took it, as the load's are)."""
    ws = await WebSocket.connect(port, "/ws")
    await ws.request(client_frame(b'{"op": "open", "env": "dirty-integration"}'))
    lat = []
    for _ in range(n):
        t0 = time.perf_counter()
        await ws.request(REFUSED_FRAME)
        lat.append(time.perf_counter() - t0)
    await ws.request(CLOSE_FRAME)
    ws.close()
    return lat


async def sample_rss(
    pids: list[int], every: float, run: Run, out: list[tuple[float, list[float], int]]
) -> None:
    """Every `every` s: seconds since the start, each worker's RSS (MB), sessions open."""
    start = time.perf_counter()
    while True:
        rss = [round(rss_mb(pid), 1) for pid in pids]
        out.append((round(time.perf_counter() - start, 1), rss, run.open_now))
        await asyncio.sleep(every)


def slope(rss: list[tuple[float, list[float], int]], t0: float, t1: float, k: int) -> float:
    """Worker k's RSS growth in MB per minute, a least-squares line over samples in [t0, t1]."""
    pts = [(t, r[k]) for t, r, _ in rss if t0 <= t <= t1]
    if len(pts) < 3:
        return float("nan")
    mt = sum(t for t, _ in pts) / len(pts)
    mr = sum(r for _, r in pts) / len(pts)
    var = sum((t - mt) ** 2 for t, _ in pts)
    return 60 * sum((t - mt) * (r - mr) for t, r in pts) / var


def soak_windows(end: float) -> list[tuple[float, float]]:
    """Minutes 2-5, then 5-10, 10-15, ... (the last window ends at the end of the run)."""
    edges = [120.0, 300.0]
    while edges[-1] + 300 <= end:
        edges.append(edges[-1] + 300)
    if end - edges[-1] >= 60:
        edges.append(end)
    return list(itertools.pairwise(edges))


def rss_at(rss: list[tuple[float, list[float], int]], t: float, k: int) -> float:
    """Worker k's RSS at the sample nearest to t seconds."""
    return min(rss, key=lambda r: abs(r[0] - t))[1][k]


def server_cpu(pids: list[int]) -> float:
    return sum(proc_cpu(pid) for pid in pids)


async def load(
    port: int, pids: list[int], args: argparse.Namespace, trajs: dict[str, list[Trajectory]]
) -> dict[str, Any]:
    mix = parse_mix(args.mix)
    start = time.perf_counter()
    window = (start + args.warmup, start + args.warmup + args.seconds)
    run = Run(port, args.protocol, window, {env: EnvStats() for env in mix})
    rss: list[tuple[float, list[float], int]] = []
    sampler = asyncio.create_task(sample_rss(pids[1:], args.sample, run, rss))
    tasks = []
    for env, (n, share) in mix.items():
        interval = n / (share * args.rate) if share > 0 else 3600.0
        tasks += [slot(run, env, trajs[env], k, interval) for k in range(n)]
    gathered = asyncio.gather(*tasks)
    await asyncio.sleep(max(0.0, window[0] - time.perf_counter()))
    cpu0 = (server_cpu(pids), _own_cpu(), loadavg())
    open_at_window: list[int] = []
    while time.perf_counter() < window[1]:
        open_at_window.append(run.open_now)
        await asyncio.sleep(min(0.5, max(0.0, window[1] - time.perf_counter())))
    cpu1 = (server_cpu(pids), _own_cpu(), loadavg())
    await gathered
    sampler.cancel()
    return {
        "run": run,
        "server_cpu": cpu1[0] - cpu0[0],
        "client_cpu": cpu1[1] - cpu0[1],
        "load": (cpu0[2], cpu1[2]),
        "rss": rss,
        "open": (min(open_at_window), max(open_at_window)),
    }


def _own_cpu() -> float:
    t = os.times()
    return t.user + t.system


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] * 1000 if s else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="measured window (s)")
    parser.add_argument("--warmup", type=float, default=5.0, help="unmeasured start (s)")
    parser.add_argument("--soak", type=float, help="a long run of this many seconds")
    parser.add_argument("--rate", type=float, default=2000.0, help="target tool calls/s")
    parser.add_argument("--mix", help="env=SESSIONS:SHARE,... (default: server_mix.py)")
    parser.add_argument("--protocol", choices=["chained", "session"], default="chained")
    parser.add_argument("--tasks", type=int, default=8, help="recorded tasks per env")
    parser.add_argument("--sample", type=float, default=5.0, help="RSS sampling period (s)")
    parser.add_argument("--json", metavar="PATH", help="also write every figure here")
    parser.add_argument(
        "--workers", type=int, default=2, help="server worker processes (default 2, the cores)"
    )
    args = parser.parse_args()
    if args.soak:
        args.seconds, args.warmup, args.sample = args.soak, max(args.warmup, 30.0), 10.0
    mix = parse_mix(args.mix)
    trajs = {env: record(env, args.tasks) for env in mix}
    try:
        import uvloop
    except ImportError:
        uvloop = None

    from server_helpers import Server

    sessions = str(sum(n for n, _ in mix.values()) + 64)
    server = Server("--max-sessions", sessions, "--workers", str(args.workers))
    try:
        # the supervisor (idle but counted), then each worker
        workers = server.request("GET", "/health")[1]["workers"]
        pids = [server.proc.pid, *(w["pid"] for w in workers)]
        runner = uvloop.run if uvloop else asyncio.run
        floor = runner(refused_calls(server.port, 2000))
        out = runner(load(server.port, pids, args, trajs))
        health = server.request("GET", "/health")[1]
    finally:
        server.stop()
    show(args, mix, floor, out, health)
    if any(s.errors for s in out["run"].stats.values()):
        raise SystemExit(1)  # make bench reports this script as failed


def show_envs(run: Run, mix: Any, seconds: float) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="per env (latency in ms, from when each call was due)")
    for name in ("env", "sessions", "calls/s", "p50", "p99", "p99 not ending", "ending p50"):
        if name == "env":
            table.add_column(name, no_wrap=True, min_width=17)
        else:
            table.add_column(name, justify="right")
    for name in ("open p50", "open p99", "episodes", "errors"):
        table.add_column(name, justify="right")
    for env, s in run.stats.items():
        table.add_row(
            env,
            str(mix[env][0]),
            f"{s.calls / seconds:,.0f}",
            f"{pct(s.latencies, 0.5):.2f}",
            f"{pct(s.latencies, 0.99):.2f}",
            f"{pct(s.others, 0.99):.2f}",
            f"{pct(s.ending, 0.5):.1f}" if s.ending else "-",
            f"{pct(s.opens, 0.5):.1f}" if s.opens else "-",
            f"{pct(s.opens, 0.99):.1f}" if s.opens else "-",
            str(s.episodes),
            str(len(s.errors)),
        )
    console = Console()
    if not console.is_terminal:
        console.width = max(console.width, 120)
    console.print(table)


def show(args: argparse.Namespace, mix: Any, floor: list[float], out: Any, health: Any) -> None:
    from benchlib import Report

    run: Run = out["run"]
    stats = list(run.stats.values())
    calls = sum(s.calls for s in stats)
    lat = [x for s in stats for x in s.latencies]
    errors = [e for s in stats for e in s.errors]
    seconds = run.window[1] - run.window[0]
    rss = out["rss"]
    warm = [r for r in rss if r[0] >= args.warmup] or rss
    total = sum(n for n, _ in mix.values())
    report = Report(
        f"session server, {len(health['workers'])} worker process(es): {total} sessions across "
        f"{len(mix)} envs, {args.rate:,.0f} calls/s offered ({args.protocol} WebSocket)",
        FIGURES,
    )
    per_worker = ", ".join(str(w["created"]) for w in health["workers"])
    restarts = sum(w["restarts"] for w in health["workers"])
    report.note(
        f"{seconds:.0f} s measured after {args.warmup:.0f} s warm-up; load average "
        f"{out['load'][0]} -> {out['load'][1]}; {health['created']} sessions made "
        f"(by worker: {per_worker}); {restarts} worker restarts"
    )
    report.add("calls", round(calls / seconds))
    fl = (round(pct(floor, 0.5), 2), round(pct(floor, 0.99), 2))
    report.add("p50", round(pct(lat, 0.5), 2), floor=fl[0])
    report.add("p99", round(pct(lat, 0.99), 2), floor=fl[1])
    report.add("errors", len(errors))
    report.add("server-cpu", round(out["server_cpu"] / seconds * 100))
    report.add("client-cpu", round(out["client_cpu"] / seconds * 100))
    report.add("cpu-per-call", round(out["server_cpu"] / max(calls, 1) * 1e6))
    report.add("latency max", round(pct(lat, 1.0), 1), "ms")
    report.add("sessions open (min-max)", f"{out['open'][0]}-{out['open'][1]}")
    cpu = out["server_cpu"] + out["client_cpu"]
    report.add("calls per CPU-second (server)", round(calls / max(out["server_cpu"], 1e-9)), "")
    report.add("calls per CPU-second (server + client)", round(calls / max(cpu, 1e-9)), "")
    workers = range(len(rss[0][1]))
    first, last = warm[0][1], rss[-1][1]
    report.add("server RSS after warm-up, per worker", " / ".join(f"{x}" for x in first), "MB")
    report.add("server RSS at end, per worker", " / ".join(f"{x}" for x in last), "MB")
    report.add(
        "server RSS max after warm-up, per worker",
        " / ".join(f"{max(r[1][k] for r in warm)}" for k in workers),
        "MB",
    )
    end = rss[-1][0]
    slopes = None
    if end >= 400:  # a soak: growth per minute over minutes 2-5, then every 5 minutes
        windows = soak_windows(end)
        slopes = [[slope(rss, a, b, k) for a, b in windows] for k in workers]
        names = " | ".join(f"min {a / 60:.0f}-{b / 60:.0f}" for a, b in windows)
        report.add(
            f"RSS growth per worker, {names}",
            " / ".join(" | ".join(f"{x:+.2f}" for x in per) for per in slopes),
            "MB/min",
        )
        report.add(
            f"RSS per worker at min {', '.join(f'{b / 60:.0f}' for _, b in windows)}",
            " / ".join(" | ".join(f"{rss_at(rss, b, k):.1f}" for _, b in windows) for k in workers),
            "MB",
        )
    report.show()
    show_envs(run, mix, seconds)
    if errors:
        print("first errors:", errors[:5])
    if args.json:
        figures = {
            "calls_per_s": calls / seconds,
            "p50_ms": pct(lat, 0.5),
            "p99_ms": pct(lat, 0.99),
            "max_ms": pct(lat, 1.0),
            "errors": len(errors),
            "floor_p50_ms": fl[0],
            "floor_p99_ms": fl[1],
            "server_cpu_s": out["server_cpu"],
            "client_cpu_s": out["client_cpu"],
            "seconds": seconds,
            "load": out["load"],
            "open": out["open"],
            "rss": rss,
            "rss_slopes_mb_per_min": slopes,
            "workers": health["workers"],
            "per_env": {
                env: {
                    "calls_per_s": s.calls / seconds,
                    "p50_ms": pct(s.latencies, 0.5),
                    "p99_ms": pct(s.latencies, 0.99),
                    "not_ending_p99_ms": pct(s.others, 0.99),
                    "ending_p50_ms": pct(s.ending, 0.5),
                    "open_p50_ms": pct(s.opens, 0.5),
                    "open_p99_ms": pct(s.opens, 0.99),
                    "episodes": s.episodes,
                    "errors": len(s.errors),
                }
                for env, s in run.stats.items()
            },
        }
        Path(args.json).write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()

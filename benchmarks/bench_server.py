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
import sys
from pathlib import Path
from typing import Any

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here.parent / "tests" / "server"))
sys.path.insert(0, str(here))

from benchlib import Figure  # noqa: E402
from server_load import Run, load, refused_calls  # noqa: E402
from server_mix import parse_mix, record  # noqa: E402

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
    slopes = show_rss(report, out["rss"], args.warmup)
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
            "rss": out["rss"],
            "rss_slopes_mb_per_min": slopes,
            "workers": health["workers"],
            "per_env": per_env_figures(run, seconds),
        }
        Path(args.json).write_text(json.dumps(figures, indent=1) + "\n")


def show_rss(
    report: Any, rss: list[tuple[float, list[float], int]], warmup: float
) -> list[list[float]] | None:
    """Each worker's RSS after warm-up, at the end and at its highest; in a soak (400 s or more)
    also its growth per minute over minutes 2-5 and every 5 minutes after, whose slopes it
    returns (None for a shorter run)."""
    warm = [r for r in rss if r[0] >= warmup] or rss
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
    if end < 400:
        return None
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
    return slopes


def per_env_figures(run: Run, seconds: float) -> dict[str, dict[str, float]]:
    return {
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
    }


if __name__ == "__main__":
    main()

"""bench_server.py's load generator: session slots that replay recorded trajectories over
WebSockets at a paced, open-loop rate, each call's latency timed from when it was due, and the
server's CPU and memory sampled from /proc while it runs."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import time
from dataclasses import dataclass, field
from typing import Any

from server_mix import Trajectory, parse_mix
from wsload import Closed, Http, WebSocket, client_frame

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

"""dirty-integration speed: episodes per second per policy, world set-up, HTTP round trips.

.venv/bin/python benchmarks/bench_dirty_integration.py
"""

from __future__ import annotations

import statistics
import time
import tracemalloc
import urllib.request

from benchlib import Report

import datagauntlet as dg
from datagauntlet.core.runner import calibrate, play, run


def per_second(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return repeat / (time.perf_counter() - start)


def main() -> None:
    report = Report("dirty-integration speed")
    for profile in ("realistic", "hostile"):
        env = dg.make("dirty-integration", profile=profile)
        tasks = env.tasks("eval", 200)
        for policy in env.policies():
            start = time.perf_counter()
            for task in tasks:
                play(env, policy, task)
            rate = len(tasks) / (time.perf_counter() - start)
            report.add(f"{profile}, {policy}", rate, "episodes/s (one core)")
    env = dg.make("dirty-integration", profile="hostile")
    costs = []
    for task in env.tasks("eval", 300):
        ep = env.episode(task)
        cursor = None
        for _ in range(12):
            start_ns = time.perf_counter_ns()
            page = ep.call("fetch_page", {"cursor": cursor})
            costs.append(time.perf_counter_ns() - start_ns)
            cursor = page.get("next_cursor", cursor)
    report.add("env cost per tool call (median)", statistics.median(costs) / 1000, "us")
    start = time.perf_counter()
    calibrate(dg.make("dirty-integration"), 60)
    elapsed = time.perf_counter() - start
    report.add("full calibration (3 profiles x 3 policies x 60 seeds)", elapsed, "s")

    env = dg.make("dirty-integration")
    task = env.tasks("eval", 1)[0]
    setup_ms = 1000 / per_second(lambda: env.episode(task), 500)
    report.add("world set-up", setup_ms, "ms")

    big = dg.make("dirty-integration", num_records=100_000, page_size=1000, profile="hostile")
    start = time.perf_counter()
    result = play(big, "careful", big.tasks("eval", 1)[0])
    report.add(
        f"100,000 records, careful (reward {result.reward})", time.perf_counter() - start, "s"
    )

    tracemalloc.start()
    live = [env.episode(t) for t in env.tasks("eval", 1000)]
    for ep in live:
        ep.call("fetch_page", {"cursor": None})
    current, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    report.add("1,000 live episodes", current / 2**20, "MiB")
    report.add("memory per live episode", current / 1000 / 1024, "KiB")

    for workers in (1, 2):
        tasks = env.tasks("eval", 600)
        start = time.perf_counter()
        run(env, list(env.policies()), tasks, workers=workers)
        elapsed = time.perf_counter() - start
        report.add(f"runner, {workers} worker(s)", 3 * 600 / elapsed, "episodes/s")

    from datagauntlet.frontdoors.serve import EpisodeHttpServer

    server = EpisodeHttpServer.open(env, task).start()
    try:
        n = 300
        start = time.perf_counter()
        for _ in range(n):
            with urllib.request.urlopen(f"{server.url}/score", timeout=5) as resp:
                resp.read()
        http_ms = (time.perf_counter() - start) / n * 1000
    finally:
        server.close()
    report.add("HTTP GET /score round trip", http_ms, "ms", raw_round_trip_ms(n), "bare socket")
    report.show()


def raw_round_trip_ms(n: int) -> float:
    """The floor of an HTTP round trip here: a bare TCP echo of the same size on 127.0.0.1."""
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))

    def echo() -> None:
        conn, _ = listener.accept()
        with conn:
            while data := conn.recv(65536):
                conn.sendall(data)

    threading.Thread(target=echo, daemon=True).start()
    with socket.create_connection(listener.getsockname()) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        start = time.perf_counter()
        for _ in range(n):
            sock.sendall(b"x" * 200)
            sock.recv(65536)
        elapsed = time.perf_counter() - start
    listener.close()
    return elapsed / n * 1000


if __name__ == "__main__":
    main()

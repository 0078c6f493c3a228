"""dirty-integration speed: episodes per second per policy, world set-up, HTTP round trips.

.venv/bin/python benchmarks/bench_dirty_integration.py
"""

from __future__ import annotations

import statistics
import time
import tracemalloc
import urllib.request

import datagauntlet as dg
from datagauntlet.core.runner import calibrate, play, run


def per_second(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return repeat / (time.perf_counter() - start)


def main() -> None:
    for profile in ("realistic", "hostile"):
        env = dg.make("dirty-integration", profile=profile)
        tasks = env.tasks("eval", 200)
        for policy in env.policies():
            start = time.perf_counter()
            for task in tasks:
                play(env, policy, task)
            rate = len(tasks) / (time.perf_counter() - start)
            print(f"{profile:9s} {policy:9s} {rate:8.0f} episodes/s (one core)")
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
    print(f"env cost per tool call: median {statistics.median(costs) / 1000:.1f} us")
    start = time.perf_counter()
    calibrate(dg.make("dirty-integration"), 60)
    elapsed = time.perf_counter() - start
    print(f"full calibration (3 profiles x 3 policies x 60 seeds): {elapsed:.2f} s")

    env = dg.make("dirty-integration")
    task = env.tasks("eval", 1)[0]
    setup_ms = 1000 / per_second(lambda: env.episode(task), 500)
    print(f"world set-up: {setup_ms:.3f} ms")

    big = dg.make("dirty-integration", num_records=100_000, page_size=1000, profile="hostile")
    start = time.perf_counter()
    result = play(big, "careful", big.tasks("eval", 1)[0])
    print(f"100,000 records, careful: {time.perf_counter() - start:.2f} s, reward {result.reward}")

    tracemalloc.start()
    live = [env.episode(t) for t in env.tasks("eval", 1000)]
    for ep in live:
        ep.call("fetch_page", {"cursor": None})
    current, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"1,000 live episodes: {current / 2**20:.1f} MiB ({current / 1000 / 1024:.1f} KiB each)")

    for workers in (1, 2):
        tasks = env.tasks("eval", 600)
        start = time.perf_counter()
        run(env, list(env.policies()), tasks, workers=workers)
        elapsed = time.perf_counter() - start
        print(f"runner, {workers} worker(s): {3 * 600 / elapsed:.0f} episodes/s")

    from datagauntlet.frontdoors.serve import EpisodeHttpServer

    server = EpisodeHttpServer.open(env, task).start()
    try:
        n = 300
        start = time.perf_counter()
        for _ in range(n):
            with urllib.request.urlopen(f"{server.url}/score", timeout=5) as resp:
                resp.read()
        print(f"HTTP GET /score round trip: {(time.perf_counter() - start) / n * 1000:.2f} ms")
    finally:
        server.close()


if __name__ == "__main__":
    main()

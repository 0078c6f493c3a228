"""dirty-integration speed: episodes per second per policy, world set-up, HTTP round trips.

.venv/bin/python benchmarks/bench_dirty_integration.py
"""

from __future__ import annotations

import time
import tracemalloc
import urllib.error
import urllib.request

import toolpath
from benchlib import Figure, Report

import datagauntlet as dg
from datagauntlet.core.runner import calibrate, play, run


def per_second(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return repeat / (time.perf_counter() - start)


FIGURES = (
    Figure(
        "fetch-page",
        "fetch_page env cost per call (median, hostile)",
        "us",
        floor="page lookup + records + one canonical JSON log line + sha256",
        target=14,
        max_ratio=2,
    ),
    Figure(
        "careful-100k",
        "careful, 100,000 records, page size 100: world + play + score",
        "s CPU",
        floor="raw blake2b a draw of the world + the bare Api play + the grader",
        target=0.5,
    ),
    Figure(
        "careful-100k-run",
        "careful, 100,000 records: play + score",
        "s CPU",
        floor="same policy on the bare Api + the grader",
        max_ratio=2,
    ),
    Figure(
        "submit-peak",
        "submit_records of 100,000 records: peak memory",
        "MiB",
        floor="the submitted list itself",
        max_ratio=2,
    ),
)


def main() -> None:
    report = Report("dirty-integration speed", FIGURES)
    for profile in ("realistic", "hostile"):
        env = dg.make("dirty-integration", profile=profile)
        tasks = env.tasks("eval", 200)
        for policy in env.policies():
            start = time.perf_counter()
            for task in tasks:
                play(env, policy, task)
            rate = len(tasks) / (time.perf_counter() - start)
            report.add(f"{profile}, {policy}", rate, "episodes/s (one core)")
    report.note(f"load average at start {toolpath.load()}")
    fetch = toolpath.fetch_page_cost()
    report.add("fetch-page", fetch.value_us, floor=fetch.floor_us)
    big = toolpath.careful_big()
    report.add("careful-100k", big.total_s, floor=big.floor_total_s)
    report.add("  world set-up", big.world_s, "s CPU", big.floor_world_s, "raw blake2b a draw")
    report.add("careful-100k-run", big.run_s, floor=big.floor_s)
    mem = toolpath.submit_memory()
    report.add("submit-peak", mem.peak_bytes / 2**20, floor=mem.records_bytes / 2**20)
    report.add("  held by the episode once submitted", mem.held_bytes / 2**20, "MiB")
    start = time.perf_counter()
    calibrate(dg.make("dirty-integration"), 60)
    elapsed = time.perf_counter() - start
    report.add("full calibration (3 profiles x 3 policies x 60 seeds)", elapsed, "s")

    env = dg.make("dirty-integration")
    task = env.tasks("eval", 1)[0]
    setup_ms = 1000 / per_second(lambda: env.episode(task), 500)
    report.add("world set-up", setup_ms, "ms")

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
            try:
                with urllib.request.urlopen(f"{server.url}/score", timeout=5) as resp:
                    resp.read()
            except urllib.error.HTTPError as exc:  # 409 until the episode is over: a full reply
                exc.read()
        http_ms = (time.perf_counter() - start) / n * 1000
    finally:
        server.close()
    report.add(
        "HTTP GET /score round trip (409 mid-episode)",
        http_ms,
        "ms",
        raw_round_trip_ms(n),
        "bare socket",
    )
    report.note(f"load average at end {toolpath.load()}")
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

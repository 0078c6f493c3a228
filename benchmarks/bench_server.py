"""The session server under load: 256 concurrent sessions of dirty-integration over WebSocket.

Each of 256 clients plays episodes back to back (open a session, page through the API until the
last page, submit, close), so sessions are created and closed all the time. The server and the
load generator are separate processes on 127.0.0.1. Printed: sustained tool calls per second,
latency percentiles, errors, and the server's memory at the start and end of the run. The floor
is the same WebSocket round trip against an echo endpoint that does no work.

  python benchmarks/bench_server.py [--seconds 60] [--clients 256]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "server"))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


async def client(port: int, deadline: float, latencies: list[float], errors: list[str]) -> int:
    import websockets

    calls = 0
    loop = asyncio.get_running_loop()
    while loop.time() < deadline:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        body = json.dumps({"env": "dirty-integration", "task": calls % 50}).encode()
        writer.write(
            b"POST /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
        )
        raw = await reader.read()
        writer.close()
        head, _, text = raw.partition(b"\r\n\r\n")
        if b" 201 " not in head.split(b"\r\n")[0]:
            errors.append(head.split(b"\r\n")[0].decode())
            await asyncio.sleep(0.05)
            continue
        sid = json.loads(text)["session_id"]
        async with websockets.connect(
            f"ws://127.0.0.1:{port}/sessions/{sid}/ws", max_size=None
        ) as ws:
            cursor, records, done = None, {}, False
            while not done and loop.time() < deadline:
                t0 = time.perf_counter()
                await ws.send(json.dumps({"name": "fetch_page", "arguments": {"cursor": cursor}}))
                reply = json.loads(await ws.recv())
                latencies.append(time.perf_counter() - t0)
                calls += 1
                if "error" in reply:
                    errors.append(reply["error"])
                    break
                page = reply["result"]
                if "records" in page:
                    for r in page["records"]:
                        records[r["id"]] = r
                    cursor = page["next_cursor"]
                    done = cursor is None
            if done:
                t0 = time.perf_counter()
                rows = [{"id": r["id"], "amount": int(r["amount"])} for r in records.values()]
                await ws.send(
                    json.dumps({"name": "submit_records", "arguments": {"records": rows}})
                )
                reply = json.loads(await ws.recv())
                latencies.append(time.perf_counter() - t0)
                calls += 1
                if "error" in reply or not reply.get("done"):
                    errors.append(str(reply)[:200])
            await ws.send(json.dumps({"op": "close"}))
            await ws.recv()
    return calls


async def run(port: int, seconds: float, clients: int) -> tuple[int, list[float], list[str], float]:
    latencies: list[float] = []
    errors: list[str] = []
    deadline = asyncio.get_running_loop().time() + seconds
    start = time.perf_counter()
    counts = await asyncio.gather(
        *(client(port, deadline, latencies, errors) for _ in range(clients))
    )
    return sum(counts), latencies, errors, time.perf_counter() - start


async def refused_calls(port: int, n: int) -> list[float]:
    """The floor: round trips of a call the episode refuses at once (an unknown tool)."""
    import http.client

    import websockets

    conn = http.client.HTTPConnection("127.0.0.1", port)
    conn.request("POST", "/sessions", body=json.dumps({"env": "dirty-integration"}))
    sid = json.loads(conn.getresponse().read())["session_id"]
    lat = []
    async with websockets.connect(f"ws://127.0.0.1:{port}/sessions/{sid}/ws") as ws:
        for _ in range(n):
            t0 = time.perf_counter()
            await ws.send('{"name": "nothing"}')
            await ws.recv()
            lat.append(time.perf_counter() - t0)
    return lat


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] * 1000 if s else 0.0


def main() -> None:
    from server_helpers import Server

    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--clients", type=int, default=256)
    args = parser.parse_args()
    server = Server("--max-sessions", str(args.clients * 2))
    try:
        pid = server.proc.pid
        floor_lat = asyncio.run(refused_calls(server.port, 2000))
        rss_start = rss_mb(pid)
        calls, lat, errors, elapsed = asyncio.run(run(server.port, args.seconds, args.clients))
        rss_end = rss_mb(pid)
        health = server.request("GET", "/health")[1]
    finally:
        server.stop()
    from benchlib import Report

    report = Report(
        f"session server: {args.clients} concurrent dirty-integration sessions over WebSocket"
    )
    report.note(f"{elapsed:.0f} s, {health['created']} sessions made and closed")
    report.add("tool calls per second", round(calls / elapsed), "/s")
    for q in (0.5, 0.99):
        report.add(
            f"latency p{int(q * 100)}",
            round(pct(lat, q), 2),
            "ms",
            round(pct(floor_lat, q), 2),
            "a call the episode refuses at once",
        )
    report.add("errors", len(errors))
    report.add("server RSS at start", round(rss_start), "MB")
    report.add("server RSS at end", round(rss_end), "MB")
    report.show()
    if errors:
        print("first errors:", errors[:3])


if __name__ == "__main__":
    main()

"""Refused calls cost bounded memory: 24 MB bodies refused again and again do not pile up.

Each refused call is logged (the log is the grader's record), but only as a capped prefix and
a digest of its arguments; before, each refusal kept the whole body twice (object and text),
also after the episode was over.
"""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import time

import pytest

from datagauntlet.core.call_text import REFUSED_ARGS_CHARS

BODIES = 50
RSS_LIMIT_MB = 300


def _rss_mb(pid: int, field: str = "VmRSS") -> float:
    """Resident memory now (VmRSS) or at its peak so far (VmHWM), in MB."""
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    raise AssertionError(f"no {field}")


def _body(valid: bool) -> bytes:
    """About 24 MB of records; unless `valid`, the last record's id is over the 200-char limit.
    (Amounts are long strings, which the schema allows: fewer records, a quicker test.)"""
    pad = "7" * 2000
    records = [{"id": f"r{i:07d}", "amount": pad} for i in range(11_500)]
    if not valid:
        records[-1]["id"] += "y" * 200
    return json.dumps({"records": records}).encode()


def _post(port: int, body: bytes) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request("POST", "/submit", body, {"Content-Type": "application/json"})
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def _serve() -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "datagauntlet.cli.main", "serve", "dirty-integration",
         "--port", "0", "num_records=5"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    return proc, int(proc.stdout.readline().split(" at ")[1].split()[0].rsplit(":", 1)[1])


@pytest.mark.timeout(280)
def test_fifty_refused_24_mb_bodies_keep_the_server_small() -> None:
    bad = _body(valid=False)
    assert 23e6 < len(bad) < 26e6
    proc, port = _serve()
    try:
        peak = 0.0
        statuses = []
        start = time.monotonic()
        for i in range(BODIES):
            if i == BODIES // 2:  # end the episode: the rest are refused as over (409)
                statuses.append(_post(port, b'{"records": []}'))
            statuses.append(_post(port, bad))
            peak = max(peak, _rss_mb(proc.pid, "VmHWM"))
        took = time.monotonic() - start
        after = _rss_mb(proc.pid)
        print(f"\nRSS after {BODIES} refused 24 MB bodies: {after:.0f} MB, peak {peak:.0f} MB, "
              f"{took:.0f} s")  # fmt: skip
        assert statuses.count(400) == BODIES // 2 and statuses.count(409) == BODIES - BODIES // 2
        assert peak < RSS_LIMIT_MB and after < RSS_LIMIT_MB
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=20)
    assert "Traceback" not in err


def _peak_after_rounds(body: bytes, concurrent: int) -> tuple[list[int], float]:
    """Three rounds of `concurrent` clients posting `body` at once to a fresh server: the
    statuses and the server's peak RSS."""
    from concurrent.futures import ThreadPoolExecutor

    proc, port = _serve()
    try:
        statuses: list[int] = []
        with ThreadPoolExecutor(concurrent) as pool:
            for _ in range(3):
                statuses += pool.map(lambda _: _post(port, body), range(concurrent))
        return statuses, _rss_mb(proc.pid, "VmHWM")
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=20)
        assert "Traceback" not in err


@pytest.mark.timeout(280)
def test_six_concurrent_24_mb_bodies_cost_what_one_does() -> None:
    """Bodies wait their turn for the byte budget, and the freed memory of one is reused by the
    next, whichever thread parses it (with a malloc arena per thread, six cost twice one)."""
    bad = _body(valid=False)
    in_turn, one_peak = _peak_after_rounds(bad, 1)
    at_once, six_peak = _peak_after_rounds(bad, 6)
    print(f"\npeak RSS, 3 rounds of 24 MB bodies: one at a time {one_peak:.0f} MB, "
          f"six at once {six_peak:.0f} MB")  # fmt: skip
    assert in_turn == [400] * 3 and at_once == [400] * 18
    assert six_peak < one_peak * 1.25 and six_peak < RSS_LIMIT_MB


def test_the_threaded_doors_cap_malloc_arenas() -> None:
    from datagauntlet.frontdoors.malloc_arenas import cap_malloc_arenas

    assert cap_malloc_arenas() is True  # glibc on Linux, as on every machine CI runs on


def test_a_refused_call_is_logged_as_a_capped_prefix_and_a_digest() -> None:
    import hashlib

    import datagauntlet as dg
    from datagauntlet.core.action_log import canonical_json

    env = dg.make("dirty-integration")
    ep = env.episode(env.tasks("eval", 1)[0])
    args = {"records": [{"id": "x" * 300, "amount": 1}] * 2000}
    assert "error" in ep.call("submit_records", args)
    (entry,) = ep.log.entries
    text = canonical_json(args)
    assert entry.args["_characters"] == len(text)
    assert entry.args["_sha256"] == hashlib.sha256(text.encode()).hexdigest()
    assert entry.args["_preview"] == text[: REFUSED_ARGS_CHARS // 2]
    assert len(canonical_json(entry.args)) < REFUSED_ARGS_CHARS
    assert ep.log.chain_intact()
    # a small refused call keeps its arguments as sent
    assert "error" in ep.call("fetch_page", {"cursor": 7})
    assert ep.log.entries[-1].args == {"cursor": 7}
    ep.close()

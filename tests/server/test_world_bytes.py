"""What each env says one world costs (`Environment.world_bytes`, which the session server
budgets by) is not below what building and playing worlds to their end costs a fresh process,
nor far above it; docs/server.md shows the stated figures the code gives."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import datagauntlet as dg

DOC = Path(__file__).resolve().parents[2] / "docs" / "server.md"
CASES = [(env_id, {}) for env_id in dg.list_envs()] + [
    ("dirty-integration", {"num_records": 20_000}),
]
# RSS growth of a fresh process while it builds k worlds (after one built and closed, so the
# imports and caches are paid), then plays each with the reference policy and scores it.
MEASURE = """
import gc, json, sys
import datagauntlet as dg
from datagauntlet.frontdoors.malloc_arenas import cap_malloc_arenas

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096

env_id, k, config = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
cap_malloc_arenas()  # as the server does
env = dg.make(env_id, **config)
tasks = env.tasks("eval", k + 1)
env.episode(tasks[0]).close()
gc.collect()
before = rss()
episodes = [env.episode(t) for t in tasks[1:]]
reference = env.policies()[env.reference]
for ep in episodes:
    reference(ep)
    ep.score()
gc.collect()
print(json.dumps({"played": (rss() - before) // k, "stated": env.world_bytes()}))
for ep in episodes:
    ep.close()
"""


def measure(env_id: str, config: dict[str, int], k: int) -> dict[str, int]:
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, env_id, str(k), json.dumps(config)],
        capture_output=True, text=True, timeout=600, check=True,
    )  # fmt: skip
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize(("env_id", "config"), CASES, ids=lambda c: str(c) if c else "default")
def test_the_stated_world_size_covers_a_played_world(env_id: str, config: dict) -> None:
    k = 3 if config else 8
    got = measure(env_id, config, k)
    assert got["stated"] == dg.make(env_id, **config).world_bytes()
    assert got["played"] <= got["stated"], got  # the budget never undercounts a world
    assert got["stated"] <= 4 * got["played"] + 512 * 1024, got  # nor wildly overcounts


def test_docs_show_the_stated_sizes_the_code_gives() -> None:
    text = DOC.read_text()
    rows = dict(re.findall(r"^\| `([^`]+)` \| ([\d,]+) \|", text, re.M))
    for env_id in dg.list_envs():
        assert rows[env_id].replace(",", "") == str(dg.make(env_id).world_bytes()), env_id
    big = dg.make("dirty-integration", num_records=100_000).world_bytes()
    assert rows["dirty-integration num_records=100000"].replace(",", "") == str(big)

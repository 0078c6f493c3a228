"""The load benchmark's env mix as docs/server.md states it is the one the benchmark runs, and
the benchmark's option parsing refuses a malformed mix."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

import datagauntlet as dg

ROOT = Path(__file__).resolve().parents[2]


def _load_mix() -> ModuleType:
    bench = ROOT / "benchmarks"
    spec = importlib.util.spec_from_file_location("dg_bench_server_mix", bench / "server_mix.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks itself up there
    sys.path.insert(0, str(bench))  # it imports wsload beside it
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(bench))
    return module


server_mix = _load_mix()

ROW = re.compile(r"^\| ([a-z-]+) \| (\d+) \| (\d+)% \| ~([\d.]+)/s \|", re.M)


def test_the_documented_mix_is_the_default_and_covers_every_env() -> None:
    text = (ROOT / "docs" / "server.md").read_text()
    rows = {env: (int(n), int(share), float(rate)) for env, n, share, rate in ROW.findall(text)}
    mix = server_mix.DEFAULT_MIX
    assert set(rows) == set(mix) == set(dg.list_envs())
    assert sum(n for n, _ in mix.values()) == 256
    for env, (n, share) in mix.items():
        assert rows[env][:2] == (n, round(share * 100)), env
        per_session = share * 2000 / n
        assert abs(rows[env][2] - per_session) <= 0.05 * per_session + 0.05, env


@pytest.mark.parametrize("text", ["dirty-integration=x:1", "dataclean=0:1", "a=1:0"])
def test_a_malformed_mix_is_refused(text: str) -> None:
    with pytest.raises(SystemExit):
        server_mix.parse_mix(text)


def test_shares_are_normalised() -> None:
    assert server_mix.parse_mix("a=2:3,b=1:1") == {"a": (2, 0.75), "b": (1, 0.25)}

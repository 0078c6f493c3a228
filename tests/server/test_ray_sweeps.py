"""`calibrate --ray`: the same bytes as a local run, on a Ray instance the command starts and on
one this test starts and joins by address."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

CALIBRATE = [
    sys.executable,
    "-m",
    "datagauntlet.cli.main",
    "calibrate",
    "--env",
    "dataclean",
    "--seeds",
    "4",
    "--json",
]


def _run(*extra: str) -> str:
    proc = subprocess.run(
        [*CALIBRATE, *extra], capture_output=True, text=True, timeout=240, env=os.environ
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@pytest.fixture(scope="module")
def local() -> str:
    return _run()


def test_workers_and_ray_give_the_local_bytes(local: str) -> None:
    pytest.importorskip("ray")
    assert _run("--workers", "2") == local
    assert _run("--ray") == local


def test_ray_joins_a_cluster_by_address(local: str) -> None:
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        address = ray.get_runtime_context().gcs_address
        assert _run("--ray", address) == local
        assert ray.is_initialized()  # the command left the cluster it joined running
    finally:
        ray.shutdown()


def test_an_unreachable_cluster_is_one_line() -> None:
    pytest.importorskip("ray")
    proc = subprocess.run(
        [*CALIBRATE, "--ray", "127.0.0.1:1"],
        capture_output=True,
        text=True,
        timeout=240,
        env=os.environ,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-1500:]

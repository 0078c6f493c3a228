"""Ray for sweeps: calibration (and gate) jobs spread as Ray tasks, results in job order.

Jobs go out in batches (one episode is far less work than scheduling one Ray task), and each
batch's results come back in place, so a Ray run prints exactly what a local run prints. With no
address, Ray starts a local instance owned by this process and stops it at the end; with one, it
joins that cluster and leaves it running.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterable
from typing import Any

from datagauntlet.core.runner import EpisodeResult, Job, Mapper, play_jobs

BATCH = 32


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"--ray {address}: expected HOST:PORT of a Ray cluster's head")
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as exc:
        raise ValueError(
            f"--ray {address}: cannot reach the cluster: {exc.strerror or exc}"
        ) from None


class RayMapper(Mapper):
    def __init__(self, address: str | None = None, num_cpus: int | None = None) -> None:
        try:
            import ray
        except ImportError:
            raise ValueError("--ray needs Ray: pip install 'datagauntlet[ray]'") from None
        self._ray = ray
        self._owned = not ray.is_initialized()
        if self._owned:
            options: dict[str, Any] = {
                "include_dashboard": False,
                "log_to_driver": False,
                "logging_level": logging.ERROR,
                "configure_logging": True,
            }
            if address:
                _check_reachable(address)  # ray.init would retry an unreachable one for minutes
                options["address"] = address
            elif num_cpus:
                options["num_cpus"] = num_cpus
            try:
                ray.init(**options)
            except ConnectionError as exc:
                raise ValueError(f"--ray {address}: cannot reach the cluster: {exc}") from None
        self._remote = ray.remote(play_jobs)

    def map(self, jobs: list[Job]) -> Iterable[EpisodeResult]:
        # submitted now (a second map queues behind this one), read in submission order: the
        # same order as a local run
        refs = [self._remote.remote(jobs[i : i + BATCH]) for i in range(0, len(jobs), BATCH)]
        return (result for ref in refs for result in self._ray.get(ref))

    def close(self) -> None:
        if self._owned and self._ray.is_initialized():
            self._ray.shutdown()
        self._owned = False

"""What a sandboxed run may use, and the two presets event-recon needs."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

MB = 1 << 20


@dataclass(frozen=True)
class Limits:
    """Per-run limits. Wall and CPU time are seconds; sizes are MiB; outputs are bytes."""

    timeout_s: float = 30.0  # wall clock; on expiry the whole process group is killed
    cpu_s: int = 30  # RLIMIT_CPU: SIGXCPU at this many seconds, SIGKILL one second later
    memory_mb: int = 1024  # RLIMIT_AS (address space, so thread stacks count)
    file_size_mb: int = 256  # RLIMIT_FSIZE: no single file grows past this
    open_files: int = 256  # RLIMIT_NOFILE
    processes: int = 256  # RLIMIT_NPROC for the run's own uid: threads count on Linux
    output_bytes: int = 65_536  # stdout and stderr are each kept up to this many bytes
    flood_bytes: int = 64 * MB  # past this much output on one stream the run is killed

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"sandbox limit {name} must be a number, got {value!r}")
            if not math.isfinite(value) or value <= 0:
                raise ValueError(f"sandbox limit {name} must be positive, got {value!r}")
        if self.flood_bytes < self.output_bytes:
            raise ValueError("sandbox limit flood_bytes must be at least output_bytes")

    def with_(self, **changes: float) -> Limits:
        return replace(self, **changes)

    def for_child(self) -> dict[str, int]:
        return {
            "cpu_s": max(1, math.ceil(self.cpu_s)),
            "memory_bytes": int(self.memory_mb * MB),
            "file_size_bytes": int(self.file_size_mb * MB),
            "open_files": int(self.open_files),
            "processes": int(self.processes),
        }


# An exploratory `run_python` call and the graded remediation script (event-recon's figures).
EXPLORE = Limits(timeout_s=30.0, cpu_s=30)
GRADED = Limits(timeout_s=90.0, cpu_s=60, file_size_mb=512)

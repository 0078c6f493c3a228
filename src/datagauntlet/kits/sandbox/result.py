"""What one sandboxed run returns."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Violation:
    wall: str  # the wall that recorded it: audit, rlimits, supervisor, ...
    event: str  # what was attempted or hit: "open", "socket.connect", "cpu", "timeout"
    detail: str = ""

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True)
class SandboxResult:
    exit_code: int  # the process's status; -N when killed by signal N
    stdout: str
    stderr: str
    wall_s: float
    cpu_s: float
    violations: tuple[Violation, ...]
    walls: tuple[str, ...]  # the walls that were up for this run
    walls_down: dict[str, str] = field(default_factory=dict)  # wall -> why it was not up
    wall_notes: dict[str, str] = field(default_factory=dict)  # wall -> how it was raised
    truncated: bool = False  # stdout or stderr went past the output cap
    timed_out: bool = False
    exception: str | None = None  # "Type: message" of an uncaught exception, if any
    # The kernel's peak RSS of the run (ru_maxrss). Linux counts the address space the child
    # had before exec, so a run spawned by a larger process reports at least that one's peak.
    max_rss_kb: int = 0

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> SandboxResult:
        """The inverse of `to_dict` (what `sandbox run --json` prints)."""
        return cls(
            exit_code=int(doc["exit_code"]),
            stdout=doc["stdout"],
            stderr=doc["stderr"],
            wall_s=float(doc["wall_s"]),
            cpu_s=float(doc["cpu_s"]),
            violations=tuple(Violation(**v) for v in doc["violations"]),
            walls=tuple(doc["walls"]),
            walls_down=dict(doc.get("walls_down", {})),
            wall_notes=dict(doc.get("wall_notes", {})),
            truncated=bool(doc["truncated"]),
            timed_out=bool(doc.get("timed_out", False)),
            exception=doc.get("exception"),
            max_rss_kb=int(doc.get("max_rss_kb", 0)),
        )

    @property
    def ok(self) -> bool:
        """Ran to a zero exit, in time, and no wall recorded anything."""
        return self.exit_code == 0 and not self.timed_out and not self.violations

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "exit_code": self.exit_code,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "violations": [v.to_dict() for v in self.violations],
            "walls": list(self.walls),
            "walls_down": dict(self.walls_down),
            "wall_notes": dict(self.wall_notes),
            "wall_s": round(self.wall_s, 4),
            "cpu_s": round(self.cpu_s, 4),
            "truncated": self.truncated,
            "timed_out": self.timed_out,
            "exception": self.exception,
            "max_rss_kb": self.max_rss_kb,
        }

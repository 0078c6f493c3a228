"""The six walls, by name, and the error raised when a run's required walls are not up."""

from __future__ import annotations

from collections.abc import Iterable

WALLS = ("process", "rlimits", "audit", "seccomp", "landlock", "netns")

DESCRIPTIONS = {
    "process": "python -I -S, scrubbed env, stdlib-only sys.path; unprivileged uid; no_new_privs",
    "rlimits": "CPU, address space, file size, open files, processes; no core dumps",
    "audit": "audit hook: opens outside the workspace, sockets, processes, ctypes, forged code",
    "seccomp": "syscall filter: sockets, exec, fork, ptrace, mount, namespaces, raising limits",
    "landlock": "kernel file access: stdlib read-only, workspace read-write, nothing else",
    "netns": "a network namespace of its own: no interface but a downed loopback",
}


class WallsUnavailable(RuntimeError):
    """A run required walls this host could not raise; the script did not run."""

    def __init__(self, missing: dict[str, str]) -> None:
        self.missing = dict(missing)
        parts = "; ".join(f"{k}: {v}" for k, v in self.missing.items())
        super().__init__(f"sandbox refused to run: required walls are down ({parts})")


def check_names(names: Iterable[str], what: str) -> tuple[str, ...]:
    out = tuple(names)
    unknown = [n for n in out if n not in WALLS]
    if unknown:
        raise ValueError(
            f"unknown sandbox wall(s) in {what}: {', '.join(unknown)}; known: {', '.join(WALLS)}"
        )
    return tuple(n for n in WALLS if n in out)

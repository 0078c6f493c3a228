"""The escape battery: attacks on the sandbox, each with the walls that stop it.

Scripts that start a program have it write `ran` in the workspace (a run user may write
there), so what is measured is whether the program ran, not where it could write.

Each case is a script that prints ESCAPED (or leaks a secret, or leaves a marker, or reaches a
listener the test runs) when its attack works. `stoppers` names the walls that stop it on
their own; "supervisor" is the parent process (the timeout, the output caps, the process
boundary), which is always there. `needs` names walls the attack is about (raising a limit
needs limits to raise), which stay up when the others are taken down. The declarations are
checked three ways by test_sandbox_escape_battery.py: every wall up (stopped, and a violation
recorded), each wall down alone (stopped exactly when another stopper remains) and each wall
alone (stopped exactly when it is a stopper). The cases are declared a group to a file
(battery_<group>.py); docs/sandbox.md's table is rendered from here.
"""

from __future__ import annotations

from battery_case import Case
from battery_files import FILES
from battery_imports import IMPORTS
from battery_introspection import INTROSPECTION
from battery_native_code import NATIVE, UNHOOK
from battery_network import NETWORK
from battery_processes import PROCESSES
from battery_resources import RESOURCES

from datagauntlet.kits.sandbox import Limits

# the battery's tests import these from here, whichever file declares them
__all__ = ["ALWAYS", "BATTERY_LIMITS", "CANARY", "CASES", "SECRET", "UNHOOK", "Case"]

# Small, so the battery stays quick and a wall that fails costs the machine little.
BATTERY_LIMITS = Limits(
    timeout_s=3.0,
    cpu_s=1,
    memory_mb=256,
    file_size_mb=16,
    open_files=64,
    processes=32,
    output_bytes=4096,
    flood_bytes=1 << 20,
)
SECRET = "s3cr3t-outside-the-workspace"
ALWAYS = frozenset({"supervisor", "runtime"})  # layers no configuration takes down
CANARY = "canary-from-the-parent-env"

CASES = FILES + NETWORK + PROCESSES + NATIVE + INTROSPECTION + IMPORTS + RESOURCES
GROUPS = ("files", "network", "processes", "native code", "introspection", "imports", "resources")


COLUMNS = ("process", "rlimits", "audit", "seccomp", "landlock", "netns")
OTHER = {
    "supervisor": "supervisor",
    "runtime": "not in the sandbox's interpreter",
}


def render_table() -> str:
    """The wall-by-case table of docs/sandbox.md: one row per case, a mark per stopping wall."""
    head = "| case | attack | " + " | ".join(COLUMNS) + " | also |"
    rule = "|---|---|" + "---|" * len(COLUMNS) + "---|"
    rows = [head, rule]
    for group in GROUPS:
        for case in (c for c in CASES if c.group == group):
            marks = " | ".join("■" if w in case.stoppers else "" for w in COLUMNS)
            also = [OTHER[w] for w in sorted(case.stoppers & ALWAYS)]
            if case.host:
                also.append("host: root without CAP_SYS_RESOURCE")
            if case.needs:
                also.append("kept up: " + ", ".join(sorted(case.needs)))
            rows.append(f"| {case.name} | {case.what} | {marks} | {'; '.join(also)} |")
    return "\n".join(rows)

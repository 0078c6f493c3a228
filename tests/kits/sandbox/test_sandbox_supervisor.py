"""What the supervisor enforces on a run: the timeout over the whole process group, the output
cap and the flood kill, the resource limits reported as violations, and when a run ends."""

from __future__ import annotations

import time
from pathlib import Path

from sandbox_runner_helpers import QUICK, root_only

from datagauntlet.kits.sandbox import Limits, Violation, fresh_workspace, run_script


@root_only
def test_timeout_kills_the_whole_group_and_setsid_escapees() -> None:
    # fork is allowed here on purpose (no audit, no seccomp) so there are children to kill
    code = (
        "import os, time\n"
        "for setsid in (False, True):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        if setsid: os.setsid()\n"
        "        open(f'pid{int(setsid)}', 'w').write(str(os.getpid())); time.sleep(600)\n"
        "time.sleep(600)\n"
    )
    with fresh_workspace() as ws:
        start = time.monotonic()
        res = run_script(code, ws, QUICK.with_(timeout_s=1.5), walls=("process", "rlimits"))
        took = time.monotonic() - start
        pids = [int((ws / f"pid{i}").read_text()) for i in (0, 1)]
    assert res.timed_out and res.exit_code == -9
    assert Violation("supervisor", "timeout", "killed after 1.5 s") in res.violations
    assert took < 6
    for pid in pids:
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text()


@root_only
def test_output_is_capped_and_a_flood_is_killed() -> None:
    with fresh_workspace() as ws:
        res = run_script("print('x' * 1_000_000)", ws, QUICK.with_(output_bytes=1000))
        flood = run_script(
            "import sys\nwhile True: sys.stdout.write('y' * 65536)",
            ws,
            QUICK.with_(output_bytes=1000, flood_bytes=1 << 20),
        )
        on_stderr = run_script(
            "import sys\nwhile True: sys.stderr.write('z' * 65536)",
            ws,
            QUICK.with_(output_bytes=1000, flood_bytes=1 << 20),
        )
    assert res.exit_code == 0 and res.truncated and res.stdout == "x" * 1000
    assert not res.violations  # a long print is not a violation; only the cap applies
    assert flood.truncated and not flood.ok
    killed = "killed past 1,048,576 bytes on"
    assert flood.violations == (Violation("supervisor", "output flood", f"{killed} stdout"),)
    assert on_stderr.stderr == "z" * 1000 and on_stderr.truncated
    assert on_stderr.violations == (Violation("supervisor", "output flood", f"{killed} stderr"),)


@root_only
def test_output_of_exactly_the_flood_bound_is_not_a_flood() -> None:
    bound = QUICK.with_(output_bytes=1000, flood_bytes=1 << 20)
    with fresh_workspace() as ws:
        res = run_script("import sys\nsys.stdout.write('y' * (1 << 20))", ws, bound)
    assert res.exit_code == 0 and res.truncated and not res.violations


@root_only
def test_output_is_kept_to_the_last_byte_of_the_cap() -> None:
    code = (
        "import sys, time\nsys.stdout.write('a' * 999); sys.stdout.flush(); time.sleep(0.3)\n"
        "sys.stdout.write('b' * 10)\n"
    )
    with fresh_workspace() as ws:
        res = run_script(code, ws, QUICK.with_(output_bytes=1000))
    assert res.stdout == "a" * 999 + "b" and res.truncated


@root_only
def test_limits_are_reported_as_violations() -> None:
    with fresh_workspace() as ws:
        mem = run_script("x = bytearray(1 << 30)", ws, QUICK.with_(memory_mb=256))
        big = run_script("open('f', 'wb').write(b'x' * (3 << 20))", ws, QUICK.with_(file_size_mb=1))
        cpu = run_script("while True: pass", ws, QUICK.with_(cpu_s=1, timeout_s=20))
    assert ("rlimits", "memory") in [(v.wall, v.event) for v in mem.violations]
    assert ("rlimits", "file size") in [(v.wall, v.event) for v in big.violations]
    assert ("rlimits", "cpu") in [(v.wall, v.event) for v in cpu.violations]
    assert cpu.exit_code in (-24, -9) and not cpu.timed_out


@root_only
def test_a_script_that_ignores_its_cpu_signal_is_killed_and_reported_as_over_cpu() -> None:
    code = "import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True: pass\n"
    with fresh_workspace() as ws:
        # a wall budget far above the 2 CPU seconds it needs: a loaded machine must not turn
        # the CPU kill into a timeout
        res = run_script(code, ws, QUICK.with_(cpu_s=1, timeout_s=300))
    assert res.exit_code == -9 and not res.timed_out, res
    assert ("rlimits", "cpu") in [(v.wall, v.event) for v in res.violations], res.violations


def test_a_child_s_cpu_limit_is_whole_seconds_and_at_least_one() -> None:
    assert Limits(cpu_s=1).for_child()["cpu_s"] == 1
    assert Limits(cpu_s=0.2).for_child()["cpu_s"] == 1  # type: ignore[arg-type]
    assert Limits(cpu_s=2.5).for_child()["cpu_s"] == 3  # type: ignore[arg-type]


@root_only
def test_a_run_ends_when_its_process_exits_even_if_a_child_holds_its_pipes() -> None:
    # fork is allowed here on purpose (no audit, no seccomp): the child keeps the pipes open
    code = "import os, time\nif os.fork() == 0:\n    time.sleep(60)\nos._exit(3)\n"
    with fresh_workspace() as ws:
        res = run_script(code, ws, QUICK.with_(timeout_s=8.0), walls=("process", "rlimits"))
    assert res.exit_code == 3 and not res.timed_out and res.wall_s < 4

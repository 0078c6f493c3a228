"""A run's own uid: the workspace handed to it (and only behind the process wall), and the
sweeps that kill what the run left, which touch only that uid's live processes."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import time
from pathlib import Path

import pytest
from sandbox_runner_helpers import QUICK, root_only

from datagauntlet.kits.sandbox import fresh_workspace, run_script
from datagauntlet.kits.sandbox.runtime import runtime
from datagauntlet.kits.sandbox.workspace import hand_over


@root_only
def test_a_run_without_the_process_wall_leaves_the_workspace_to_its_owner() -> None:
    # Only a run behind the process wall gets a uid of its own (and its workspace handed to it).
    with fresh_workspace() as ws:
        owner = ws.stat().st_uid
        res = run_script("open('made.txt', 'w').write('x')", ws, QUICK, walls=("rlimits",))
        assert res.exit_code == 0, res
        assert (ws.stat().st_uid, (ws / "made.txt").stat().st_uid) == (owner, os.getuid())


@root_only
def test_hand_over_leaves_hard_links_alone() -> None:
    tmp_path = Path(tempfile.mkdtemp(dir=runtime().scratch))
    os.chmod(tmp_path, 0o755)
    try:
        _hand_over_case(tmp_path)
    finally:
        shutil.rmtree(tmp_path)


def _hand_over_case(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("x")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "hl").hardlink_to(outside)
    (ws / "own.txt").write_text("y")
    (ws / "ln").symlink_to(outside)
    hand_over(ws, 123456, 123456)
    assert outside.stat().st_uid == 0  # neither through the hard link nor the symlink
    assert (ws / "own.txt").stat().st_uid == 123456
    assert stat.S_IMODE(ws.stat().st_mode) == 0o700


def test_a_process_gone_between_the_scan_and_the_kill_does_not_stop_the_sweep(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The race: /proc listed a process of the run's uid that exits before its SIGKILL. A pid
    # past pid_max is one the kernel answers ESRCH for, as for that exited process.
    from datagauntlet.kits.sandbox import sweeps

    gone = int(Path("/proc/sys/kernel/pid_max").read_text()) + 1
    scans = iter([[gone], [gone], []])
    monkeypatch.setattr(sweeps, "pids_of", lambda uid: next(scans))
    sweeps.kill_uid(123_456)  # returns once a scan finds nothing left
    assert next(scans, "done") == "done"


@root_only
def test_a_process_that_ends_during_the_uid_scan_does_not_stop_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # /proc listed a process that has exited by the time its status is read: the scan goes
    # on to the rest (a pid past pid_max stands for it: its status cannot be opened).
    from datagauntlet.kits.sandbox.sweeps import pids_of as _pids_of

    gone = str(int(Path("/proc/sys/kernel/pid_max").read_text()) + 1)
    listdir = os.listdir
    monkeypatch.setattr(
        os, "listdir", lambda path: [gone, *listdir(path)] if path == "/proc" else listdir(path)
    )
    assert _pids_of(os.geteuid()) != []  # this process, at least, is found past the gone one
    assert os.getpid() in _pids_of(os.geteuid())


@root_only
def test_a_run_without_the_process_wall_signals_no_other_process_of_this_uid() -> None:
    # Without the process wall the script runs as this process's uid: the sweep for a run's
    # leftover processes is only for a run's own uid, never this one.
    bystander = os.fork()
    if bystander == 0:  # pragma: no cover - the child
        time.sleep(30)
        os._exit(0)
    try:
        with fresh_workspace() as ws:
            res = run_script("print('ok')", ws, QUICK, walls=("rlimits",))
        assert res.exit_code == 0 and res.stdout == "ok\n", res
        assert os.waitpid(bystander, os.WNOHANG) == (0, 0)  # still running
    finally:
        os.kill(bystander, 9)
        os.waitpid(bystander, 0)


def test_the_uid_sweep_finds_exactly_the_live_processes_of_that_uid() -> None:
    import signal

    from datagauntlet.kits.sandbox.sweeps import pids_of as _pids_of

    uid = 0x10000 + int.from_bytes(os.urandom(3), "big")  # as a run's uid: unused
    alive = os.fork()
    if alive == 0:  # pragma: no cover - the child
        os.setuid(uid)
        time.sleep(30)
        os._exit(0)
    dead = os.fork()
    if dead == 0:  # pragma: no cover - the child, left a zombie until reaped
        os.setuid(uid)
        os._exit(0)
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            found = _pids_of(uid)
            state = Path(f"/proc/{dead}/stat").read_text().split()[2]
            if found == [alive] and state == "Z":
                break
            time.sleep(0.02)
        assert found == [alive]  # not the zombie, not this process, nothing of another uid
    finally:
        os.kill(alive, signal.SIGKILL)
        os.waitpid(alive, 0)
        os.waitpid(dead, 0)
    assert _pids_of(uid) == []

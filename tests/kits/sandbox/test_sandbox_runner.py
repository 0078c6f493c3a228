"""The sandbox kit's behaviour outside the escape battery: what legitimate scripts can do,
what the supervisor enforces, and what the result says."""

from __future__ import annotations

import dis
import os
import shutil
import sqlite3
import stat
import tempfile
import time
import types
from pathlib import Path

import pytest

from datagauntlet.kits.sandbox import (
    GRADED,
    WALLS,
    Limits,
    Violation,
    WallsUnavailable,
    fresh_workspace,
    run_script,
)
from datagauntlet.kits.sandbox.child import launcher_source
from datagauntlet.kits.sandbox.child.seccomp import ARCHES, build_filter
from datagauntlet.kits.sandbox.report import Stream as _Stream
from datagauntlet.kits.sandbox.report import result_of as _result
from datagauntlet.kits.sandbox.runtime import runtime
from datagauntlet.kits.sandbox.workspace import hand_over

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="drops privileges: runs as root")
QUICK = Limits(timeout_s=10.0, cpu_s=5, memory_mb=512)

REMEDIATION = """
import sqlite3
db = sqlite3.connect("db.sqlite")
with db:
    db.execute("UPDATE ledger SET amount = amount * 2 WHERE partner = 'p1'")
    db.execute("DELETE FROM ledger WHERE partner = 'p3'")
    db.execute("INSERT INTO ledger VALUES ('p4', 7)")
print(db.execute("SELECT count(*) FROM ledger").fetchone()[0])
"""


def _ledger(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE ledger (partner TEXT, amount INTEGER)")
    db.executemany("INSERT INTO ledger VALUES (?, ?)", [("p1", 10), ("p2", 20), ("p3", 30)])
    db.commit()
    db.close()


@root_only
def test_sqlite_remediation_runs_with_every_wall(tmp_path: Path) -> None:
    src = tmp_path / "ws"
    src.mkdir()
    _ledger(src / "db.sqlite")
    with fresh_workspace(src) as ws:
        res = run_script(REMEDIATION, ws, GRADED, require=WALLS)
        rows = (
            sqlite3.connect(ws / "db.sqlite").execute("SELECT * FROM ledger ORDER BY 1").fetchall()
        )
    assert res.ok, (res.stderr, res.violations)
    assert res.walls == WALLS
    assert res.stdout.strip() == "3"
    assert rows == [("p1", 20), ("p2", 20), ("p4", 7)]
    # the source workspace is untouched: the run had a copy
    orig = sqlite3.connect(src / "db.sqlite").execute("SELECT * FROM ledger ORDER BY 1").fetchall()
    assert orig == [("p1", 10), ("p2", 20), ("p3", 30)]


@root_only
def test_script_by_path_and_stdlib_breadth() -> None:
    code = (
        "import csv, json, decimal, datetime, zoneinfo, hashlib, re, threading, tempfile\n"
        "import collections, dataclasses, statistics, pathlib, sqlite3\n"
        "t = threading.Thread(target=lambda: None); t.start(); t.join()\n"
        "db = sqlite3.connect(pathlib.Path('w.db')); db.execute('pragma journal_mode=wal')\n"
        "db.execute('create table t(x)'); db.execute('insert into t values (1)'); db.commit()\n"
        "print(datetime.datetime(2024, 3, 31, 2, tzinfo=zoneinfo.ZoneInfo('Europe/Paris')))\n"
        "print(tempfile.mkdtemp().startswith(pathlib.Path.cwd().as_posix()))\n"
    )
    with fresh_workspace() as ws:
        (ws / "fix.py").write_text(code)
        res = run_script(ws / "fix.py", ws, QUICK)
    assert res.ok, (res.stderr, res.violations)
    assert res.stdout.split() == ["2024-03-31", "02:00:00+01:00", "True"]


@root_only
def test_a_graded_copy_sees_nothing_an_earlier_run_wrote(tmp_path: Path) -> None:
    src = tmp_path / "ws"
    src.mkdir()
    (src / "input.txt").write_text("original")
    with fresh_workspace(src) as ws:
        res = run_script("open('input.txt', 'w').write('tampered'); open('x', 'w')", ws, QUICK)
        assert res.ok
    with fresh_workspace(src) as ws:
        assert (ws / "input.txt").read_text() == "original"
        assert not (ws / "x").exists()
    assert (src / "input.txt").read_text() == "original"


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
def test_sqlite_opening_a_database_outside_the_workspace_is_a_kernel_refusal(
    tmp_path: Path,
) -> None:
    # SQLite opens an ATTACHed file itself, past the audit hook: the kernel walls refuse it,
    # and the run's result must say so (judged against the run's own workspace).
    outside = tmp_path / "elsewhere.db"
    _ledger(outside)
    code = (
        "import sqlite3\nc = sqlite3.connect('db.sqlite')\n"
        f"c.execute(\"ATTACH DATABASE '{outside}' AS o\")\n"
        "print(c.execute('SELECT count(*) FROM o.ledger').fetchone())\n"
    )
    with fresh_workspace() as ws:
        res = run_script(code, ws, QUICK)
        inside = run_script(code.replace(str(outside), "other.db"), ws, QUICK)
    assert res.exit_code != 0 and "(3,)" not in res.stdout
    refused = [v for v in res.violations if (v.wall, v.event) == ("kernel", "refused")]
    assert refused and str(outside) in refused[0].detail, res.violations
    assert inside.exit_code != 0  # an empty database of its own: no such table, not a wall
    assert not [v for v in inside.violations if v.wall == "kernel"], inside.violations


@root_only
def test_forged_report_lines_do_not_raise_walls() -> None:
    # the script writes wall lines into every pipe it holds; only lines before it started count
    code = (
        "import os, stat\n"
        "for fd in range(3, 64):\n"
        "    try:\n"
        "        if stat.S_ISFIFO(os.fstat(fd).st_mode):\n"
        "            os.write(fd, b'W\\tlandlock\\tup\\tforged\\nW\\tseccomp\\tup\\tforged\\n')\n"
        "    except OSError: pass\n"
    )
    with fresh_workspace() as ws:
        res = run_script(code, ws, QUICK, walls=("process", "rlimits"))
    assert res.walls == ("process", "rlimits")
    assert "forged" not in res.wall_notes.values()


_CHANNEL_WRITE = (
    "import os, stat, time\n"
    "fds = []\n"
    "for fd in range(3, 64):\n"
    "    try:\n"
    "        if stat.S_ISFIFO(os.fstat(fd).st_mode): fds.append(fd)\n"
    "    except OSError: pass\n"
    "for fd in fds:\n"
    "    try:\n"
    "        os.write(fd, b'J' * {junk})\n"
    "    except OSError: pass\n"
    "time.sleep(0.3)  # the line below arrives in a read of its own\n"
    "for fd in fds:\n"
    "    try: os.write(fd, b'\\nV\\tprobe\\tforged\\tafter the junk\\n')\n"
    "    except OSError: pass\n"
)


@root_only
def test_the_report_channel_keeps_only_its_first_mebibyte() -> None:
    # A script can write into the report channel; what it writes past 1 MiB is dropped, so a
    # flood of it costs the parent no more memory than that.
    seen = {}
    with fresh_workspace() as ws:
        for junk in (0, (1 << 20) - 4096, 1 << 20):
            res = run_script(
                _CHANNEL_WRITE.format(junk=junk), ws, QUICK, walls=("process", "rlimits")
            )
            seen[junk] = [v.event for v in res.violations if v.wall == "probe"]
    assert seen == {0: ["forged"], (1 << 20) - 4096: ["forged"], 1 << 20: []}


@root_only
def test_a_script_that_ignores_its_cpu_signal_is_killed_and_reported_as_over_cpu() -> None:
    code = "import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True: pass\n"
    with fresh_workspace() as ws:
        # a wall budget far above the 2 CPU seconds it needs: a loaded machine must not turn
        # the CPU kill into a timeout
        res = run_script(code, ws, QUICK.with_(cpu_s=1, timeout_s=300))
    assert res.exit_code == -9 and not res.timed_out, res
    assert ("rlimits", "cpu") in [(v.wall, v.event) for v in res.violations], res.violations


@root_only
def test_a_run_without_the_process_wall_leaves_the_workspace_to_its_owner() -> None:
    # Only a run behind the process wall gets a uid of its own (and its workspace handed to it).
    with fresh_workspace() as ws:
        owner = ws.stat().st_uid
        res = run_script("open('made.txt', 'w').write('x')", ws, QUICK, walls=("rlimits",))
        assert res.exit_code == 0, res
        assert (ws.stat().st_uid, (ws / "made.txt").stat().st_uid) == (owner, os.getuid())


def test_required_walls_down_refuse_the_run() -> None:
    chan = b"W\tprocess\tup\tok\nW\tlandlock\tdown\tkernel has no Landlock\nR\tlandlock\n"
    with pytest.raises(WallsUnavailable, match="landlock: kernel has no Landlock"):
        _result(125, _Stream(10), _Stream(10), chan, [], QUICK, 0.1, 0.0, False, False, 0,
                Path("/ws"))  # fmt: skip


def test_bad_arguments_are_clear_errors(tmp_path: Path) -> None:
    known = ", ".join(WALLS)
    with pytest.raises(ValueError) as caught:
        run_script("pass", tmp_path, walls=("process", "moat", "ditch"))
    assert str(caught.value) == f"unknown sandbox wall(s) in walls: moat, ditch; known: {known}"
    with pytest.raises(ValueError) as caught:
        run_script("pass", tmp_path, require=("moat",))
    assert str(caught.value) == f"unknown sandbox wall(s) in require: moat; known: {known}"
    with pytest.raises(ValueError, match=r"^required walls not requested: seccomp$"):
        run_script("pass", tmp_path, walls=("process",), require=("seccomp",))
    with pytest.raises(ValueError, match=r"^required walls not requested: audit, seccomp$"):
        run_script("pass", tmp_path, walls=("process",), require=("seccomp", "process", "audit"))
    with pytest.raises(ValueError, match=r"^sandbox code must be text or a path, got int$"):
        run_script(5, tmp_path)  # type: ignore[arg-type]
    with pytest.raises(ValueError) as caught:
        run_script(tmp_path / "nope.py", tmp_path)
    missing = tmp_path / "nope.py"
    assert str(caught.value) == f"cannot read the script {missing}: No such file or directory"
    with pytest.raises(ValueError) as caught:
        Limits(output_bytes=100, flood_bytes=99)
    assert str(caught.value) == "sandbox limit flood_bytes must be at least output_bytes"
    assert Limits(output_bytes=100, flood_bytes=100).flood_bytes == 100
    with pytest.raises(ValueError, match="not a directory"):
        run_script("pass", tmp_path / "missing")
    with pytest.raises(ValueError, match="must be positive"):
        Limits(timeout_s=0)
    with pytest.raises(ValueError, match="must be a number"):
        Limits(memory_mb=True)  # type: ignore[arg-type]


@root_only
def test_an_unreachable_workspace_is_refused_with_a_hint(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    (locked / "ws").mkdir(parents=True)
    os.chmod(locked, 0o700)
    with pytest.raises(ValueError) as caught:
        run_script("pass", locked / "ws")
    hint = "run it in fresh_workspace(...) or under a directory others can enter"
    assert str(caught.value).endswith(hint)


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


def _functions(code: types.CodeType):
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield const
            yield from _functions(const)


def test_the_audit_hook_looks_up_no_global_or_free_name() -> None:
    """Everything the hook uses is bound at creation: rebinding a builtin, a module
    attribute or the launcher's globals cannot change what it does."""
    code = compile(launcher_source(), "<sandbox-launcher>", "exec")
    factories = [c for c in code.co_consts if isinstance(c, types.CodeType)]
    factories = [c for c in factories if c.co_name.startswith("make_")]
    inner = [c for f in factories for c in _functions(f) if c.co_name != "<genexpr>"]
    names = {c.co_name for c in inner}
    tools = {"hook", "record", "as_text", "resolve", "place", "linked", "deny_fork_exec"}
    rules = {"open", "path", "link", "chdir", "sqlite", "import", "marshal", "setattr"}
    assert tools | {f"{rule}_rule" for rule in rules} <= names
    for fn in inner:
        loads = {
            i.opname
            for i in dis.get_instructions(fn)
            if i.opname in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLOSURE")
        }
        assert not loads, f"{fn.co_name} looks up {loads}"
        assert not fn.co_freevars, fn.co_name


def test_seccomp_filter_assembles_with_jumps_in_range() -> None:
    prog = build_filter("x86_64", 4242, 7)
    assert 50 < len(prog) < 255
    for _, jt, jf, k in prog:
        assert 0 <= jt < 256 and 0 <= jf < 256 and 0 <= k < 1 << 32
    # the last instructions are the verdicts: allow, EPERM, ENOSYS, kill
    assert [k for _, _, _, k in prog[-4:]] == [0x7FFF0000, 0x50001, 0x50026, 0x80000000]
    denied = ARCHES["x86_64"]["deny"]
    ks = {k for code, _, _, k in prog if code == 0x15}
    assert {denied["socket"], denied["execve"], denied["ptrace"], denied["mount"]} <= ks
    assert 4242 in ks and 7 in ks  # own pid for kill, report fd for close/dup


@root_only
def test_runtime_is_a_root_owned_readonly_stdlib_without_site_packages() -> None:
    rt = runtime()
    assert not (rt.stdlib / "site-packages").exists()
    assert not (rt.stdlib / "test").exists()
    assert not list((rt.stdlib / "lib-dynload").glob("_testcapi*"))
    for path in (rt.root, rt.stdlib, rt.python, rt.launcher):
        st = path.stat()
        assert st.st_uid == 0 and not st.st_mode & 0o022, path
    assert rt.scratch.stat().st_mode & 0o777 == 0o711


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
def test_the_script_runs_in_utf8_mode_with_the_workspace_as_home_and_no_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    import datagauntlet

    code = (
        "import os, sys, json\n"
        "keys = ('HOME', 'TMPDIR', 'SQLITE_TMPDIR', 'TZ', 'LANG', 'PATH', 'PYTHONPATH')\n"
        "open('sub/made.txt', 'w').write('x')  # a folder of the workspace is the run's\n"
        "sys.stdout.write(json.dumps({'env': {k: os.environ.get(k) for k in keys},\n"
        "    'utf8': sys.flags.utf8_mode, 'no_site': sys.flags.no_site,\n"
        "    'no_bytecode': sys.dont_write_bytecode, 'cwd': os.getcwd(), 'file': __file__,\n"
        "    'uid': os.getuid()}))\n"
        "sys.stdout.flush(); sys.stdout.buffer.write(b'\\xff')\n"
    )
    root = str(Path(datagauntlet.__file__).resolve().parents[1])
    monkeypatch.setenv("PYTHONPATH", f"/tmp/a{os.pathsep}{root}{os.pathsep}")
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)  # -B alone must keep it off
    runs = {}
    with fresh_workspace() as ws:
        (ws / "sub").mkdir()
        (ws / "inside.py").write_text(code)
        outside = tmp_path / "outside.py"
        outside.write_text(code)
        runs["text"] = run_script(code, ws, QUICK)
        runs["named"] = run_script(code, ws, QUICK, filename="given.py")
        runs["bytes"] = run_script(code.encode(), ws, QUICK)
        runs["bytes, named"] = run_script(code.encode(), ws, QUICK, filename="b.py")
        runs["inside"] = run_script(ws / "inside.py", ws, QUICK)
        runs["outside"] = run_script(outside, ws, QUICK)
        runs["no-process-wall"] = run_script(code, ws, QUICK, walls=("rlimits",))
        monkeypatch.delenv("PYTHONPATH")
        runs["no-process-wall, no path"] = run_script(code, ws, QUICK, walls=("rlimits",))
        real = os.path.realpath(ws)
    for run in runs.values():
        assert run.exit_code == 0 and run.stdout.endswith("\ufffd"), run
    seen = {k: json.loads(r.stdout[:-1]) for k, r in runs.items()}
    given = ("text", "named", "bytes", "bytes, named", "inside", "outside")
    for name in given:
        what = seen[name]
        assert what["env"] == {
            "HOME": real,
            "TMPDIR": real,
            "SQLITE_TMPDIR": real,
            "TZ": "UTC",
            "LANG": "C.UTF-8",
            "PATH": "/nonexistent",
            "PYTHONPATH": None,
        }
        assert (what["utf8"], what["no_site"], what["no_bytecode"]) == (1, 1, True)
        assert what["cwd"] == real and what["uid"] >= 0x10000  # a uid of its own
    bare = seen["no-process-wall"]  # this process's environment, the package first on the path
    assert bare["env"]["PYTHONPATH"] == os.pathsep.join([root, "/tmp/a"])
    assert (bare["utf8"], bare["no_site"], bare["no_bytecode"]) == (1, 0, True)
    assert bare["uid"] == os.getuid()  # no process wall: no uid of its own
    assert seen["no-process-wall, no path"]["env"]["PYTHONPATH"] == root
    assert {k: seen[k]["file"] for k in given} == {
        "text": "<script>", "named": "given.py", "bytes": "<script>", "bytes, named": "b.py",
        "inside": "inside.py", "outside": "<outside.py>",
    }  # fmt: skip


def test_a_child_s_cpu_limit_is_whole_seconds_and_at_least_one() -> None:
    assert Limits(cpu_s=1).for_child()["cpu_s"] == 1
    assert Limits(cpu_s=0.2).for_child()["cpu_s"] == 1  # type: ignore[arg-type]
    assert Limits(cpu_s=2.5).for_child()["cpu_s"] == 3  # type: ignore[arg-type]


@root_only
def test_code_text_with_a_lone_surrogate_is_passed_on_not_refused() -> None:
    with fresh_workspace() as ws:
        res = run_script("print('ok')  # \udcff\n", ws, QUICK)  # a lone surrogate
    assert res.exit_code == 0 and res.stdout == "ok\n"


@root_only
def test_output_of_exactly_the_flood_bound_is_not_a_flood() -> None:
    bound = QUICK.with_(output_bytes=1000, flood_bytes=1 << 20)
    with fresh_workspace() as ws:
        res = run_script("import sys\nsys.stdout.write('y' * (1 << 20))", ws, bound)
    assert res.exit_code == 0 and res.truncated and not res.violations


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


@root_only
def test_a_run_reports_the_cpu_and_memory_its_process_used() -> None:
    burn = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\n"
    with fresh_workspace() as ws:
        res = run_script(burn, ws, QUICK)
    assert res.exit_code == 0
    assert 0.25 <= res.cpu_s <= res.wall_s + 0.05  # user + system time of the child
    assert res.max_rss_kb > 1000  # a Python interpreter's resident set, in KiB


@root_only
def test_a_run_ends_when_its_process_exits_even_if_a_child_holds_its_pipes() -> None:
    # fork is allowed here on purpose (no audit, no seccomp): the child keeps the pipes open
    code = "import os, time\nif os.fork() == 0:\n    time.sleep(60)\nos._exit(3)\n"
    with fresh_workspace() as ws:
        res = run_script(code, ws, QUICK.with_(timeout_s=8.0), walls=("process", "rlimits"))
    assert res.exit_code == 3 and not res.timed_out and res.wall_s < 4


@root_only
def test_output_is_kept_to_the_last_byte_of_the_cap() -> None:
    code = (
        "import sys, time\nsys.stdout.write('a' * 999); sys.stdout.flush(); time.sleep(0.3)\n"
        "sys.stdout.write('b' * 10)\n"
    )
    with fresh_workspace() as ws:
        res = run_script(code, ws, QUICK.with_(output_bytes=1000))
    assert res.stdout == "a" * 999 + "b" and res.truncated

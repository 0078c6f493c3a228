"""How the supervisor reads a run: the report channel, the exit status and the result's JSON.

The child writes tab-separated lines on its report channel: `W wall up|down note` for each
wall before the script starts, `R` if a required wall is down, `S` when the script starts,
then `V wall event detail` for what a wall stopped and `X type errno message` for an
uncaught exception. Only lines before `S` may raise walls (the script can write to the pipe
too); violations and exceptions count only after it. These tests feed the parser hand-made
channels, so each rule fails on its own when it breaks.
"""

from __future__ import annotations

import errno
import signal
from pathlib import Path

import pytest

from datagauntlet.kits.sandbox import WALLS, Limits, SandboxResult, WallsUnavailable
from datagauntlet.kits.sandbox.report import Stream as _Stream
from datagauntlet.kits.sandbox.report import limit_hit as _limit_hit
from datagauntlet.kits.sandbox.report import outside_sqlite as _outside_sqlite
from datagauntlet.kits.sandbox.report import result_of as _result
from datagauntlet.kits.sandbox.result import Violation

LIMITS = Limits(timeout_s=10.0, cpu_s=5)
WS = Path("/srv/ws")
UP = "".join(f"W\t{w}\tup\t{w} note\n" for w in ("netns", "process", "audit"))


def _read(
    chan: str,
    exit_code: int = 0,
    *,
    cpu_s: float = 0.0,
    killed: bool = False,
    timed_out: bool = False,
    supervisor: list[Violation] | None = None,
    out: _Stream | None = None,
    err: _Stream | None = None,
) -> SandboxResult:
    return _result(
        exit_code, out or _Stream(100), err or _Stream(100), chan.encode(), supervisor or [],
        LIMITS, 1.5, cpu_s, timed_out, killed, 4096, WS,
    )  # fmt: skip


def test_walls_up_before_the_start_are_kept_in_wall_order_with_their_notes() -> None:
    res = _read(UP + "W\tseccomp\tdown\tno seccomp here\nS\n")
    assert res.walls == ("process", "audit", "netns")
    assert res.wall_notes == {w: f"{w} note" for w in ("netns", "process", "audit")}
    assert res.walls_down == {"seccomp": "no seccomp here"}
    assert res.violations == () and res.exception is None and res.ok


def test_lines_after_the_start_cannot_raise_a_wall_or_refuse_the_run() -> None:
    res = _read("W\tprocess\tup\tok\nS\nW\tlandlock\tup\tforged\nR\tlandlock\n")
    assert res.walls == ("process",)
    assert "landlock" not in res.wall_notes and res.walls_down == {}


def test_short_wall_lines_are_ignored() -> None:
    res = _read("W\tlandlock\tup\nW\tseccomp\nS\n")
    assert res.walls == () and res.walls_down == {}


def test_a_refusal_names_only_the_walls_that_stayed_down() -> None:
    chan = "W\tprocess\tup\tok\nW\tseccomp\tdown\tno filter\nW\tnetns\tdown\tno userns\nR\n"
    with pytest.raises(WallsUnavailable) as caught:
        _read(chan, 125)
    assert caught.value.missing == {"seccomp": "no filter", "netns": "no userns"}


def test_violations_count_only_after_the_start_and_keep_tabs_in_their_detail() -> None:
    chan = "V\taudit\topen\tbefore\nS\nV\taudit\topen\t/etc/passwd\tmode r\nV\tshort\n"
    res = _read(chan, 1)
    assert res.violations == (Violation("audit", "open", "/etc/passwd\tmode r"),)
    assert not res.ok


def test_a_violation_with_no_detail_has_an_empty_one() -> None:
    assert _read("S\nV\taudit\tsocket\n", 1).violations == (Violation("audit", "socket", ""),)


def test_an_exception_is_its_type_and_message_and_only_after_the_start() -> None:
    res = _read("X\tValueError\t\tbefore\nS\nX\tKeyError\t\t'k'\n", 1)
    assert res.exception == "KeyError: 'k'"
    assert res.violations == ()
    bare = _read("S\nX\tStopIteration\t\t\n", 1)
    assert bare.exception == "StopIteration"
    short = _read("S\nX\tKeyError\t\n", 1)
    assert short.exception is None


@pytest.mark.parametrize(
    ("kind", "err_no", "message", "event"),
    [
        ("MemoryError", "", "", "memory"),
        ("OSError", str(errno.EFBIG), "File too large", "file size"),
        ("OSError", str(errno.EMFILE), "Too many open files", "open files"),
        ("RuntimeError", "", "can't start new thread", "processes"),
        ("BlockingIOError", str(errno.EAGAIN), "[Errno 11] cannot Fork", "processes"),
    ],
)
def test_an_exception_from_a_limit_is_an_rlimits_violation(
    kind: str, err_no: str, message: str, event: str
) -> None:
    res = _read(f"S\nX\t{kind}\t{err_no}\t{message}\n", 1)
    assert res.violations == (Violation("rlimits", event, res.exception),)
    assert res.exception == (f"{kind}: {message}" if message else kind)


@pytest.mark.parametrize("err_no", [errno.EPERM, errno.EACCES])
def test_a_permission_error_is_the_kernel_walls_refusal(err_no: int) -> None:
    res = _read(f"S\nX\tPermissionError\t{err_no}\tnope\n", 1)
    assert res.violations == (Violation("kernel", "refused", "PermissionError: nope"),)


@pytest.mark.parametrize(
    ("kind", "err_no", "message"),
    [
        ("PermissionError", str(errno.ENOENT), "x"),  # not a refusal: a missing file
        ("OSError", str(errno.EAGAIN), "resource busy"),  # EAGAIN without fork
        ("RuntimeError", "", "dictionary changed size"),
        ("ValueError", str(errno.EFBIG), "x"),  # errno decides, not the type
    ],
)
def test_other_exceptions_are_not_limits(kind: str, err_no: str, message: str) -> None:
    got = _limit_hit(kind, err_no, message)
    assert got == ("file size" if err_no == str(errno.EFBIG) else None)


def test_sqlite_opening_a_path_outside_the_workspace_is_a_kernel_refusal() -> None:
    outside = "unable to open database: /etc/shadow"
    inside = f"unable to open database: {WS}/sub/../db.sqlite"
    escape = f"unable to open database: {WS}/../other.db"
    assert _outside_sqlite("OperationalError", outside, WS)
    assert not _outside_sqlite("OperationalError", inside, WS)
    assert _outside_sqlite("OperationalError", escape, WS)
    assert not _outside_sqlite("OperationalError", "unable to open database: rel.db", WS)
    assert not _outside_sqlite("DatabaseError", outside, WS)
    assert not _outside_sqlite("OperationalError", "no such table: x", WS)
    res = _read(f"S\nX\tOperationalError\t\t{outside}\n", 1)
    assert res.violations == (Violation("kernel", "refused", f"OperationalError: {outside}"),)


def test_a_launcher_that_never_started_the_script_says_so() -> None:
    res = _read(UP, 1)
    assert res.exception == "the sandbox launcher failed before the script started"
    early = _read(UP + "X\tImportError\t\tno encodings\n", 1)
    assert early.exception == res.exception  # an exception line before the start is ignored
    assert _read(UP, -9, killed=True).exception is None  # killed: the supervisor says why


def test_a_signal_death_is_a_crash_unless_it_is_the_cpu_limit() -> None:
    segv = _read("S\n", -signal.SIGSEGV)
    assert segv.violations == (Violation("process", "crash", "killed by SIGSEGV"),)
    xcpu = _read("S\n", -signal.SIGXCPU)
    assert xcpu.violations == (Violation("rlimits", "cpu", "killed by SIGXCPU"),)
    spent = _read("S\n", -signal.SIGKILL, cpu_s=LIMITS.cpu_s)
    assert spent.violations == (Violation("rlimits", "cpu", "killed by SIGKILL"),)
    early = _read("S\n", -signal.SIGKILL, cpu_s=LIMITS.cpu_s - 0.5)
    assert early.violations == (Violation("process", "crash", "killed by SIGKILL"),)
    assert _read("S\n", 3).violations == ()  # a plain non-zero exit is no violation


def test_a_kill_by_the_supervisor_is_reported_once_by_the_supervisor() -> None:
    timeout = Violation("supervisor", "timeout", "killed after 10 s")
    res = _read("S\nV\taudit\topen\t/x\n", -9, killed=True, timed_out=True, supervisor=[timeout])
    assert res.violations == (Violation("audit", "open", "/x"), timeout)
    assert res.timed_out and not res.ok


def test_output_is_kept_up_to_its_cap_and_truncation_is_flagged() -> None:
    out, err = _Stream(4), _Stream(4)
    out.feed(b"ab")
    out.feed(b"cdef")
    err.feed(b"xy")
    res = _read("S\n", out=out, err=err)
    assert (res.stdout, res.stderr, res.truncated) == ("abcd", "xy", True)
    assert out.total == 6
    exact = _Stream(4)
    exact.feed(b"abcd")
    assert not _read("S\n", out=exact).truncated
    over_err = _Stream(1)
    over_err.feed(b"xy")
    assert _read("S\n", err=over_err).truncated


def test_a_result_carries_the_run_figures() -> None:
    res = _read("S\n", cpu_s=0.25)
    assert (res.wall_s, res.cpu_s, res.max_rss_kb, res.exit_code) == (1.5, 0.25, 4096, 0)


def test_ok_needs_a_zero_exit_no_timeout_and_no_violation() -> None:
    base = _read("S\n")
    assert base.ok
    assert not _read("S\n", 1).ok
    assert not _read("S\n", timed_out=True).ok
    assert not _read("S\nV\taudit\topen\t/x\n").ok


def test_the_json_round_trips_and_fills_what_an_older_producer_left_out() -> None:
    full = SandboxResult(
        exit_code=-9,
        stdout="out",
        stderr="err",
        wall_s=1.23456,
        cpu_s=0.5,
        violations=(Violation("audit", "open", "/etc/passwd"), Violation("rlimits", "cpu")),
        walls=WALLS,
        walls_down={"netns": "no userns"},
        wall_notes={"process": "uid 70000"},
        truncated=True,
        timed_out=True,
        exception="KeyError: 'k'",
        max_rss_kb=2048,
    )
    doc = full.to_dict()
    assert doc["ok"] is False and doc["wall_s"] == 1.2346
    back = SandboxResult.from_dict(doc)
    assert back == SandboxResult(**{**full.__dict__, "wall_s": 1.2346})
    minimal = {
        "exit_code": "0",
        "stdout": "",
        "stderr": "",
        "wall_s": "0.5",
        "cpu_s": 1,
        "violations": [],
        "walls": ["process"],
        "truncated": 0,
    }
    res = SandboxResult.from_dict(minimal)
    assert res == SandboxResult(0, "", "", 0.5, 1.0, (), ("process",))
    assert isinstance(res.exit_code, int) and isinstance(res.cpu_s, float)
    assert res.truncated is False and res.timed_out is False and res.max_rss_kb == 0


def test_a_refusal_names_each_missing_wall_with_its_reason() -> None:
    err = WallsUnavailable({"seccomp": "no filter", "netns": "no userns"})
    assert str(err) == (
        "sandbox refused to run: required walls are down (seccomp: no filter; netns: no userns)"
    )
    assert err.missing == {"seccomp": "no filter", "netns": "no userns"}


def test_times_are_reported_to_four_decimals() -> None:
    res = SandboxResult(0, "", "", 1.234567, 0.123456, (), WALLS)
    assert (res.to_dict()["wall_s"], res.to_dict()["cpu_s"]) == (1.2346, 0.1235)

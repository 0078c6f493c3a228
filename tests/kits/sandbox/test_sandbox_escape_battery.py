"""The escape battery (battery.py), run with every wall up, each wall down, and each alone.

The every-wall attempts go through `datagauntlet sandbox run --json`, the others through
`run_script`. Every attempt asserts three things: the attack was refused or contained (or, where the
declared stoppers say it should get through with this wall down, that it did: the table in
docs/sandbox.md is only as true as that check); nothing outside the workspace changed; and
the result says what happened. Attempts are independent (own workspace, own outside
directory, own listeners), so they run a few at a time; the tests read their outcomes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sandbox_battery import ALWAYS, BATTERY_LIMITS, CANARY, CASES, SECRET, UNHOOK, Case

import datagauntlet
from datagauntlet.kits.sandbox import WALLS, Limits, SandboxResult, fresh_workspace, run_script
from datagauntlet.kits.sandbox.runtime import runtime

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="the battery drops privileges, so it runs as root"
)
PKG_SRC = str(Path(datagauntlet.__file__).resolve().parents[1])
WORKERS = 4


@dataclass
class Attempt:
    result: SandboxResult
    escaped: bool
    touched: list[str]


class Listeners:
    """A TCP, a UDP and a unix-socket listener that record whether anything reached them."""

    def __init__(self, where: Path) -> None:
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.unix_path = str(where / "sock")
        self.unix = socket.socket(socket.AF_UNIX)
        self.unix.bind(self.unix_path)
        self.unix.listen()
        for s in (self.tcp, self.udp, self.unix):
            s.setblocking(False)

    def reached(self) -> bool:
        hit = False
        for s in (self.tcp, self.unix):
            with contextlib.suppress(BlockingIOError):
                conn, _ = s.accept()
                conn.close()
                hit = True
        with contextlib.suppress(BlockingIOError):
            self.udp.recv(64)
            hit = True
        return hit

    def close(self) -> None:
        for s in (self.tcp, self.udp, self.unix):
            s.close()


def _snapshot(root: Path) -> dict[str, tuple[int, str]]:
    out = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        body = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
        out[str(path.relative_to(root))] = (st.st_mode, hashlib.sha256(body).hexdigest())
    return out


def _etc_digest() -> str:
    return hashlib.sha256(Path("/etc/passwd").read_bytes()).hexdigest()


def _through_cli(code: str, script: Path, ws: Path, limits: Limits) -> SandboxResult:
    """`datagauntlet sandbox run SCRIPT --workspace WS --json`, as a person would run it."""
    script.write_text(code)
    flags = {
        "--timeout": limits.timeout_s,
        "--cpu": limits.cpu_s,
        "--memory": limits.memory_mb,
        "--file-size": limits.file_size_mb,
        "--open-files": limits.open_files,
        "--processes": limits.processes,
        "--output": limits.output_bytes,
        "--flood": limits.flood_bytes,
    }
    argv = [sys.executable, "-m", "datagauntlet.cli.main", "sandbox", "run", str(script)]
    argv += ["--workspace", str(ws), "--json"]
    argv += [str(x) for kv in flags.items() for x in kv]
    out = subprocess.run(argv, capture_output=True, text=True, env=os.environ, timeout=120)
    res = SandboxResult.from_dict(json.loads(out.stdout))
    assert out.returncode == (0 if res.ok else 1), (out.returncode, out.stderr[-500:])
    return res


def attempt(case: Case, walls: tuple[str, ...], via_cli: bool = False) -> Attempt:
    scratch = runtime().scratch
    outside = Path(tempfile.mkdtemp(prefix="outside-", dir=scratch))
    os.chmod(outside, 0o755)
    (outside / "secret.txt").write_text(SECRET)
    (outside / "linked.txt").write_text(SECRET)
    db = sqlite3.connect(outside / "secret.db")
    db.execute("create table t(s)")
    db.execute("insert into t values (?)", (SECRET,))
    db.commit()
    db.close()
    for name in ("secret.txt", "linked.txt", "secret.db"):
        os.chmod(outside / name, 0o644)
    socks = Path(tempfile.mkdtemp(prefix="socks-", dir=scratch))
    os.chmod(socks, 0o755)
    listeners = Listeners(socks)
    tmp_marker = Path(tempfile.gettempdir()) / f"dg-sandbox-escape-{os.urandom(6).hex()}"
    marker = outside / "marker"
    ctx = {
        "outside": str(outside),
        "outside_name": outside.name,
        "secret": str(outside / "secret.txt"),
        "linked": str(outside / "linked.txt"),
        "secret_db": str(outside / "secret.db"),
        "marker": str(marker),
        "tmp_marker": str(tmp_marker),
        "tcp_port": listeners.tcp.getsockname()[1],
        "udp_port": listeners.udp.getsockname()[1],
        "unix_path": listeners.unix_path,
        "pkg_src": PKG_SRC,
    }
    etc = _etc_digest()
    try:
        with fresh_workspace() as ws:
            if case.setup:
                case.setup(ws, _Ctx(ctx))
            before = _snapshot(outside)
            limits = BATTERY_LIMITS.with_(**case.limits) if case.limits else BATTERY_LIMITS
            code = case.code.format(**ctx)
            if via_cli:
                res = _through_cli(code, socks / "attack.py", ws, limits)
            else:
                res = run_script(code, ws, limits, walls=walls, unwalled=not walls)
            after = _snapshot(outside)
            seen = res.stdout + res.stderr
            custom = case.escaped(res, ws, ctx) if case.escaped else False
            ran = (ws / "ran").exists()
        touched = []
        if after != before:
            touched.append("outside directory changed")
        if marker.exists() or tmp_marker.exists():
            touched.append("marker written outside")
        if _etc_digest() != etc:
            touched.append("/etc/passwd changed")
        reached = listeners.reached()
        escaped = (
            "ESCAPED" in res.stdout
            or SECRET in seen
            or CANARY in seen
            or "root:x:0:0" in seen
            or reached
            or ran
            or bool(touched)
            or custom
        )
        return Attempt(res, escaped, touched)
    finally:
        listeners.close()
        shutil.rmtree(outside, ignore_errors=True)
        shutil.rmtree(socks, ignore_errors=True)
        tmp_marker.unlink(missing_ok=True)


class _Ctx:
    def __init__(self, ctx: dict[str, Any]) -> None:
        self.secret = Path(ctx["secret"])
        self.linked = Path(ctx["linked"])
        self.outside = Path(ctx["outside"])


def _supervised(case: Case) -> bool:
    return case.stoppers <= ALWAYS


def _configs() -> list[tuple[str, str, str | None]]:
    """(case name, mode, wall) for every attempt the tests read: all, down W, alone W
    (and none, for the cases only the supervisor stops)."""
    out = [(c.name, "all", None) for c in CASES]
    for c in CASES:
        if _supervised(c):
            out.append((c.name, "none", None))
            continue
        out += [(c.name, "down", w) for w in _checked(c)]
        out += [(c.name, "alone", w) for w in _checked(c)]
    return out


def _checked(case: Case) -> list[str]:
    return [w for w in WALLS if w not in case.needs and (not case.checked or w in case.checked)]


def _walls_for(case: Case, mode: str, wall: str | None) -> tuple[str, ...]:
    if mode == "all":
        return WALLS
    if mode == "none":
        return ()
    if mode == "down":
        return tuple(w for w in WALLS if w != wall)
    return tuple(w for w in WALLS if w == wall or w in case.needs)


BY_NAME = {c.name: c for c in CASES}


@pytest.fixture(scope="session")
def battery() -> dict[tuple[str, str, str | None], Attempt]:
    os.environ["DG_SANDBOX_CANARY"] = CANARY  # the parent's secret the env wall must hide
    try:
        keys = _configs()
        with ThreadPoolExecutor(WORKERS) as pool:
            futures = {
                key: pool.submit(
                    attempt,
                    BY_NAME[key[0]],
                    _walls_for(BY_NAME[key[0]], *key[1:]),
                    key[1] == "all",  # with every wall: through the CLI, as a person runs it
                )
                for key in keys
            }
            return {key: f.result() for key, f in futures.items()}
    finally:
        del os.environ["DG_SANDBOX_CANARY"]


def _says_what_happened(res: SandboxResult) -> bool:
    return bool(res.violations) or res.exit_code != 0 or res.timed_out


def _stopped_by(case: Case, up: set[str]) -> bool:
    host = bool(case.host and case.host())
    return host or bool(case.stoppers & (up | ALWAYS))


def test_the_battery_is_big_enough() -> None:
    assert len(CASES) >= 40
    assert len({c.name for c in CASES}) == len(CASES)
    for case in CASES:
        assert case.stoppers <= set(WALLS) | ALWAYS, case.name
        assert not case.stoppers & case.needs, case.name


@pytest.mark.parametrize("name", [c.name for c in CASES])
def test_every_wall_up(battery, name: str) -> None:
    got = battery[(name, "all", None)]
    res = got.result
    assert res.walls == WALLS, res.walls_down
    assert not got.escaped, f"escaped with every wall up: {res.stdout[-300:]} {res.stderr[-300:]}"
    assert not got.touched
    if not case_quiet(name):
        assert res.violations, f"nothing recorded: exit {res.exit_code}, {res.stderr[-300:]}"


def case_quiet(name: str) -> bool:
    return BY_NAME[name].quiet


@pytest.mark.parametrize("name", [c.name for c in CASES if _supervised(c)])
def test_contained_without_any_wall(battery, name: str) -> None:
    got = battery[(name, "none", None)]
    assert got.result.walls == ()
    assert not got.escaped
    assert not got.touched
    assert got.result.violations, "the supervisor records what it stopped"


WALLED = [c.name for c in CASES if not _supervised(c)]


@pytest.mark.parametrize("wall", WALLS)
@pytest.mark.parametrize("name", WALLED)
def test_one_wall_down(battery, name: str, wall: str) -> None:
    case = BY_NAME[name]
    if wall not in _checked(case):
        pytest.skip(f"{name}: {wall} is what it is about, or the run would only time out")
    got = battery[(name, "down", wall)]
    expected = _stopped_by(case, set(WALLS) - {wall})
    assert wall not in got.result.walls
    assert got.escaped != expected, (
        f"with {wall} down, {name} was {'stopped' if not got.escaped else 'not stopped'}; "
        f"declared stoppers {sorted(case.stoppers)}: {got.result.stdout[-200:]} "
        f"{got.result.stderr[-300:]}"
    )
    if expected:
        assert not got.touched
        assert case.quiet or _says_what_happened(got.result)


@pytest.mark.parametrize("wall", WALLS)
@pytest.mark.parametrize("name", WALLED)
def test_one_wall_alone(battery, name: str, wall: str) -> None:
    case = BY_NAME[name]
    if wall not in _checked(case):
        pytest.skip(f"{name}: {wall} is what it is about, or the run would only time out")
    got = battery[(name, "alone", wall)]
    expected = _stopped_by(case, {wall} | set(case.needs))
    assert wall in got.result.walls, got.result.walls_down
    assert got.escaped != expected, (
        f"with only {wall} up, {name} was {'stopped' if not got.escaped else 'not stopped'}; "
        f"declared stoppers {sorted(case.stoppers)}: {got.result.stdout[-200:]} "
        f"{got.result.stderr[-300:]}"
    )
    if expected:
        assert not got.touched


def test_attacks_are_real() -> None:
    """The memory-patching attack empties a plain audit hook: refusing ctypes is what stops
    it in the sandbox, not the attack being broken."""
    plain = (
        "import sys\n"
        "def hook(event, args):\n"
        "    if event == 'open' and 'passwd' in str(args[0]): raise PermissionError('no')\n"
        "sys.addaudithook(hook)\ndel hook\n"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-S", "-c", plain + UNHOOK.format()],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "ESCAPED" in out.stdout, out.stderr

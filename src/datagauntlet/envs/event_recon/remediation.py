"""The graded run: the agent's remediation script against an unmodified copy of db.sqlite.

The run directory gets the four pristine inputs plus the files the agent had written when it
submitted, so nothing an exploratory run did can reach it. Afterwards the database it left
is read through a guarded connection: tables only (never a view or trigger the script may have
planted), under a time budget, so a hostile database cannot stall grading.
"""

from __future__ import annotations

import hashlib
import sqlite3
import tempfile
import time
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from pathlib import Path
from threading import Lock

from datagauntlet.envs.event_recon.grader import Outcome, Truth
from datagauntlet.envs.event_recon.tools import fill
from datagauntlet.kits.sandbox import WALLS, Limits, SandboxResult, fresh_workspace, run_script

READ_SECONDS = 20.0
# Walls the graded run must have, or grading refuses (WallsUnavailable): the three any host
# raises from user space. seccomp, Landlock and the network namespace are raised wherever the
# kernel allows, and every result records which walls were up.
REQUIRED_WALLS = ("process", "rlimits", "audit")


class Unreadable(Exception):
    """The database the script left cannot be read as a ledger."""


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    deadline = time.monotonic() + READ_SECONDS
    conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
    return conn


def _tables(conn: sqlite3.Connection) -> dict[str, str]:
    rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
    return {name: sql or "" for name, sql in rows}


def _rows(conn: sqlite3.Connection, table: str) -> Iterator[tuple[object, ...]]:
    quoted = '"' + table.replace('"', '""') + '"'
    yield from conn.execute(f"SELECT * FROM {quoted}")


def _key(row: tuple[object, ...]) -> str:
    return repr(row)


def _digest(conn: sqlite3.Connection) -> str:
    """A content digest of every table: its schema and its rows as a sorted multiset."""
    h = hashlib.sha256()
    for name, sql in sorted(_tables(conn).items()):
        h.update(f"{name}\n{sql}\n".encode())
        for key in sorted(_key(r) for r in _rows(conn, name)):
            h.update(key.encode("utf-8", "surrogatepass") + b"\n")
    return h.hexdigest()


def _by_partner(conn: sqlite3.Connection, truth: Truth) -> dict[str, list[str]]:
    cur = conn.execute(f'SELECT * FROM "{truth.ledger_table}"')
    columns = [d[0] for d in cur.description]
    if truth.partner_column not in columns:
        raise Unreadable(f"{truth.ledger_table} has no column {truth.partner_column}")
    i = columns.index(truth.partner_column)
    out: dict[str, list[str]] = {}
    for row in cur:
        out.setdefault(str(row[i]), []).append(_key(row))
    for rows in out.values():
        rows.sort()
    return out


def _payouts(conn: sqlite3.Connection, truth: Truth) -> list[str]:
    return sorted(_key(r) for r in _rows(conn, truth.payouts_table))


def _status(run: SandboxResult) -> str:
    if run.timed_out or any(v.event in ("cpu", "timeout") for v in run.violations):
        return "timeout"
    if run.violations:
        return "violation"
    return "ok" if run.exit_code == 0 else "error"


def inspect(
    pristine: Path, remediated: Path, truth: Truth, run: SandboxResult, script: bytes
) -> Outcome:
    status = _status(run)
    lines = script.count(b"\n") + (1 if script and not script.endswith(b"\n") else 0)
    violations = tuple(f"{v.wall}: {v.event} {v.detail}".strip() for v in run.violations)
    base = {"script_bytes": len(script), "script_lines": lines, "violations": violations}
    before = _connect(pristine)
    try:
        shipped_rows = _by_partner(before, truth)
        shipped_payouts = _payouts(before, truth)
        shipped_digest = _digest(before)
    finally:
        before.close()
    try:
        if remediated.is_symlink() or not remediated.is_file():
            raise Unreadable("db.sqlite is missing or is not a plain file")
        after = _connect(remediated)
        try:
            tables = _tables(after)
            for needed in (truth.ledger_table, truth.payouts_table):
                if needed not in tables:
                    raise Unreadable(f"table {needed} is gone")
            rows = _by_partner(after, truth)
            payouts_changed = _payouts(after, truth) != shipped_payouts
            db_changed = _digest(after) != shipped_digest
        finally:
            after.close()
        projection = truth.project(remediated)
    except (sqlite3.Error, Unreadable, ValueError, OverflowError, MemoryError) as exc:
        return Outcome(
            status,
            None,
            frozenset(truth.partners),
            True,
            True,
            **base,
            detail={"unreadable": str(exc)},
        )
    changed = frozenset(
        p for p in set(rows) | set(shipped_rows) if rows.get(p) != shipped_rows.get(p)
    )
    return Outcome(status, projection, changed, payouts_changed, db_changed, **base)


_OUTCOMES: OrderedDict[str, Outcome] = OrderedDict()
_OUTCOMES_LOCK = Lock()
OUTCOME_CACHE = 64


def _run_key(
    inputs: Mapping[str, bytes], files: Mapping[str, bytes], script_path: str, walls: Limits
) -> str:
    h = hashlib.sha256(repr(walls).encode() + b"\0" + script_path.encode() + b"\0")
    for group in (inputs, files):
        for name in sorted(group):
            h.update(name.encode() + b"\0" + hashlib.sha256(group[name]).digest())
        h.update(b"\1")
    return h.hexdigest()


def run_graded(
    inputs: Mapping[str, bytes],
    files: Mapping[str, bytes],
    script_path: str,
    truth: Truth,
    walls: Limits,
    reuse: bool = True,
) -> Outcome:
    """Run the script in the sandbox on a pristine copy and read what it left. The outcome is a
    function of the inputs, the agent's files, the script and the limits, so an identical
    submission in this process reuses it (a sweep submits one script many times);
    `reuse=False` always runs."""
    key = _run_key(inputs, files, script_path, walls)
    if reuse:
        with _OUTCOMES_LOCK:
            if key in _OUTCOMES:
                _OUTCOMES.move_to_end(key)
                return _OUTCOMES[key]
    script = files.get(script_path, b"")
    with tempfile.TemporaryDirectory(prefix="er-graded-") as tmp:
        source = Path(tmp) / "workspace"
        fill(source, inputs, files)
        pristine = Path(tmp) / "pristine.sqlite"
        pristine.write_bytes(inputs["db.sqlite"])
        with fresh_workspace(source) as ws:
            run = run_script(ws / script_path, ws, walls, walls=WALLS, require=REQUIRED_WALLS)
            outcome = inspect(pristine, ws / "db.sqlite", truth, run, script)
    with _OUTCOMES_LOCK:
        _OUTCOMES[key] = outcome
        while len(_OUTCOMES) > OUTCOME_CACHE:
            _OUTCOMES.popitem(last=False)
    return outcome

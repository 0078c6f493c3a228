"""The graded run: the agent's remediation script against an unmodified copy of db.sqlite.

The run directory gets the four pristine inputs plus the files the agent had written when it
submitted, so nothing an exploratory run did can reach it. What the script left is agent-made
data: it is read by `ledger_reader` in a second sandboxed process, under CPU, memory and
wall-clock bounds, never in this one. Only db.sqlite (and its -wal and -journal) is handed to
it, and only as plain files under a size bound, so a link, a FIFO or an enormous file is
refused here before anything reads it.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from threading import Lock
from typing import Any

from datagauntlet.envs.event_recon.grading import ledger_reader
from datagauntlet.envs.event_recon.grading.grader import Outcome, Truth
from datagauntlet.envs.event_recon.tools import fill
from datagauntlet.kits.sandbox import WALLS, Limits, SandboxResult, fresh_workspace, run_script

# Walls the graded run must have, or grading refuses (WallsUnavailable): the three any host
# raises from user space. seccomp, Landlock and the network namespace are raised wherever the
# kernel allows, and every result records which walls were up.
REQUIRED_WALLS = ("process", "rlimits", "audit")
MB = 1 << 20
MAX_DB_BYTES = 256 * MB  # db.sqlite with its -wal and -journal, as the script left them
SUMMARY_BYTES = 8 * MB  # the reader's one line of JSON
# The reader's own process: the bounds that hold whatever the file makes SQLite do.
READ_LIMITS = Limits(
    timeout_s=60.0,
    cpu_s=20,
    memory_mb=768,
    file_size_mb=MAX_DB_BYTES // MB + 16,  # recovering a -wal or -journal rewrites the copy
    output_bytes=SUMMARY_BYTES + 4096,
    flood_bytes=SUMMARY_BYTES + 4096,
)
# The failure labels (grader.FAILURE_CODES) for what reading found.
UNREADABLE, REFUSED, READ_LIMIT = "db_unreadable", "db_refused", "db_read_limit"
_LABELS = {ledger_reader.UNREADABLE: UNREADABLE, ledger_reader.REFUSED: REFUSED}
_DB_FILES = ("db.sqlite", "db.sqlite-wal", "db.sqlite-journal")


class NotRead(Exception):
    """What the script left was not read: `label` is the failure code, the message why."""

    def __init__(self, label: str, why: str) -> None:
        super().__init__(why)
        self.label = label


def _copy_bounded(src: Path, dst: Path, budget: int, required: bool) -> int:
    """Copy one plain file in chunks, never following a link or waiting on a FIFO, refusing
    it past `budget` bytes; the bytes copied."""
    try:
        fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        if required:
            raise NotRead(UNREADABLE, f"{src.name} is missing") from None
        return 0
    except OSError as exc:
        raise NotRead(UNREADABLE, f"{src.name} is not a plain file ({exc.strerror})") from None
    too_big = NotRead(REFUSED, f"the database files are over {MAX_DB_BYTES:,} bytes")
    copied = 0
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise NotRead(UNREADABLE, f"{src.name} is not a plain file")
    with os.fdopen(fd, "rb") as fh:
        if st.st_size > budget:
            raise too_big
        with open(dst, "wb") as out:
            while chunk := fh.read(MB):
                copied += len(chunk)
                if copied > budget:
                    raise too_big
                out.write(chunk)
    return copied


def _stage(remediated: Path, into: Path) -> None:
    budget = MAX_DB_BYTES
    for i, name in enumerate(_DB_FILES):
        src = remediated.with_name(remediated.name + name[len("db.sqlite") :])
        budget -= _copy_bounded(src, into / name, budget, required=i == 0)


def _spec(truth: Truth) -> dict[str, Any]:
    return {
        "files": [["pristine", "pristine.sqlite"], ["remediated", "db.sqlite"]],
        "ledger_table": truth.ledger_table,
        "partner_column": truth.partner_column,
        "payouts_table": truth.payouts_table,
        "period_column": truth.period_column,
        "amount_column": truth.amount_column,
        "bounds": {**ledger_reader.BOUNDS, "max_summary_bytes": SUMMARY_BYTES},
    }


def _reader_source(spec: dict[str, Any]) -> str:
    return Path(ledger_reader.__file__).read_text() + f"\n\nmain({spec!r})\n"


def read_databases(pristine: Path, remediated: Path, truth: Truth) -> tuple[dict, dict]:
    """The reader's summaries of the shipped and the remediated database, read in the
    sandbox; raises NotRead with the failure label when the remediated one was not read."""
    with fresh_workspace() as ws:
        _stage(remediated, ws)
        (ws / "pristine.sqlite").write_bytes(pristine.read_bytes())
        spec = _spec(truth)
        run = run_script(_reader_source(spec), ws, READ_LIMITS, walls=WALLS,
                         require=REQUIRED_WALLS, filename="<ledger_reader>")  # fmt: skip
    if run.violations or run.exit_code != 0:
        why = "; ".join(f"{v.wall}: {v.event} {v.detail}".strip() for v in run.violations)
        raise NotRead(READ_LIMIT, f"reading stopped at a bound: {why or run.exception}")
    try:
        out = json.loads(run.stdout)
        before, after = out["pristine"], out["remediated"]
    except (ValueError, KeyError, TypeError):
        raise NotRead(READ_LIMIT, "the reader's summary was cut off") from None
    if "code" in before:
        raise RuntimeError(f"the shipped database did not read: {before['detail']}")
    if "code" in after:
        raise NotRead(_LABELS.get(after["code"], UNREADABLE), after["detail"])
    return before, after


def _projection(rows: list[list[Any]], partners: tuple[str, ...]) -> dict[str, dict[str, int]]:
    from datagauntlet.envs.event_recon.grading.projection import projection_of

    return projection_of(((p, period, total) for p, period, total in rows), partners)


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
    try:
        before, after = read_databases(pristine, remediated, truth)
    except NotRead as exc:
        everyone = frozenset(truth.partners)
        return Outcome(status, None, everyone, True, True, **base, refusal=exc.label,
                       detail={"unreadable": str(exc)})  # fmt: skip
    old, new = before["partners"], after["partners"]
    changed = frozenset(p for p in set(old) | set(new) if old.get(p) != new.get(p))
    return Outcome(
        status,
        _projection(after["projection"], truth.partners),
        changed,
        after["payouts"] != before["payouts"],
        after["digest"] != before["digest"],
        **base,
    )


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

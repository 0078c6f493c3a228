"""The graded run on real worlds: the script runs on a pristine copy, and whatever it leaves
behind is graded without trusting it. Each attack is the cheapest script that could game a rule."""

from __future__ import annotations

import pytest
from er_helpers import components, open_episode, perfect_findings, submit_script

from datagauntlet.envs.event_recon.attacks.probes import oracle


def _oracle_script(ep) -> str:  # type: ignore[no-untyped-def]
    """The oracle's own script, captured by letting it play an identical episode."""
    with open_episode(ep.task.seed, ep.world.tier) as twin:
        oracle(twin)
        return twin.submitted_files["fix.py"].decode()


def test_oracle_script_and_report_score_one() -> None:
    with open_episode() as ep:
        submit_script(ep, _oracle_script(ep), perfect_findings(ep))
        s = ep.score()
        assert s.reward == 1.0 and s.metrics["failure_code"] == "solved"
        assert s.metrics["partners_repaired"] == s.metrics["partners_broken"] > 0


def test_script_runs_against_an_unmodified_database() -> None:
    # run_python's damage stays in its copy; the graded run starts from the pristine inputs
    with open_episode() as ep:
        ep.call("run_python", {"code": "import os; os.remove('db.sqlite')"})
        submit_script(ep, _oracle_script(ep), perfect_findings(ep))
        assert ep.score().reward == 1.0


@pytest.mark.parametrize(
    ("script", "code"),
    [
        ("raise SystemExit(2)\n", "script_error"),
        ("import time\ntime.sleep(60)\n", "script_timeout"),
        ("# nothing\n", "script_no_change"),
        ("", "script_no_change"),
    ],
)
def test_gate_failures_score_zero_even_with_a_perfect_report(script: str, code: str) -> None:
    with open_episode(script_timeout_seconds=1.0) as ep:
        submit_script(ep, script, perfect_findings(ep))
        s = ep.score()
        assert s.reward == 0.0 and s.metrics["failure_code"] == code


def test_a_script_that_fixes_then_fails_gets_nothing() -> None:
    with open_episode() as ep:
        submit_script(
            ep, _oracle_script(ep) + "\nraise RuntimeError('late')\n", perfect_findings(ep)
        )
        assert ep.score().metrics["failure_code"] == "script_error"


DESTROY = [
    "import os; os.remove('db.sqlite')",
    "open('db.sqlite', 'wb').write(b'not a database')",
    "import sqlite3; db = sqlite3.connect('db.sqlite'); db.execute('DROP TABLE ledger_entries')",
    "import sqlite3; db = sqlite3.connect('db.sqlite'); "
    "db.execute('ALTER TABLE ledger_entries RENAME TO old'); "
    "db.execute('CREATE VIEW ledger_entries AS SELECT * FROM old')",
]


@pytest.mark.parametrize("script", DESTROY)
def test_a_destroyed_or_swapped_ledger_scores_zero_by_name(script: str) -> None:
    with open_episode() as ep:
        submit_script(ep, script + "\n", perfect_findings(ep))
        s = ep.score()
        assert s.reward == 0.0 and s.metrics["validity"] == 0
        assert s.metrics["failure_code"] == "db_unreadable"
        assert s.metrics["partners_regressed"] > 0


def _healthy(ep) -> str:  # type: ignore[no-untyped-def]
    truth = ep.oracle_truth()
    return sorted(set(truth.partners) - set(truth.broken))[0]


def test_touching_a_healthy_partner_costs_preservation_not_ledger() -> None:
    with open_episode() as ep:
        extra = (
            "\nimport sqlite3\ndb = sqlite3.connect('db.sqlite')\n"
            f"db.execute(\"UPDATE ledger_entries SET kind = kind || '' , approved_by = 'x' "
            f"WHERE partner_id = '{_healthy(ep)}'\")\ndb.commit()\n"
        )
        submit_script(ep, _oracle_script(ep) + extra, perfect_findings(ep))
        c = components(ep)
        assert c["ledger_correctness"] == 1.0
        assert 0.0 < c["non_destructiveness"] < 1.0
        assert ep.score().metrics["failure_code"] == "rows_not_preserved"


def test_reshaping_a_healthy_partner_to_the_same_balance_is_rows_not_preserved() -> None:
    """The contract says a right partner's rows stay as they are; splitting one of its rows in
    two keeps every sum (the ledger stays exact) and gets the preservation label."""
    with open_episode() as ep:
        contract = " ".join(ep.world.files["INTEGRATION.md"].decode().split())
        assert "already right must be left exactly as they are" in contract
        amount = ep.world.schema.amount_column
        extra = (
            "\nimport sqlite3\ndb = sqlite3.connect('db.sqlite')\n"
            "cols = [r[1] for r in db.execute('PRAGMA table_info(ledger_entries)')]\n"
            f"row = db.execute(\"SELECT * FROM ledger_entries WHERE partner_id = '{_healthy(ep)}' "
            f"AND kind != 'manual' AND {amount} > 1 ORDER BY entry_id LIMIT 1\").fetchone()\n"
            "half = dict(zip(cols, row))\n"
            f"whole = half['{amount}']\n"
            "db.execute('DELETE FROM ledger_entries WHERE entry_id = ?', (half['entry_id'],))\n"
            f"for n, part in enumerate((whole // 2, whole - whole // 2)):\n"
            f"    half.update(entry_id=half['entry_id'] + str(n), {amount}=part)\n"
            "    db.execute(f\"INSERT INTO ledger_entries ({','.join(cols)}) VALUES "
            "({','.join('?' * len(cols))})\", [half[c] for c in cols])\n"
            "db.commit()\n"
        )
        submit_script(ep, _oracle_script(ep) + extra, perfect_findings(ep))
        c = components(ep)
        assert c["ledger_correctness"] == 1.0 and c["defect_identification"] == 1.0
        assert 0.0 < c["non_destructiveness"] < 1.0
        assert ep.score().metrics["failure_code"] == "rows_not_preserved"


def test_moving_a_healthy_balance_collapses_the_ledger() -> None:
    with open_episode() as ep:
        amount = ep.world.schema.amount_column
        extra = (
            "\nimport sqlite3\ndb = sqlite3.connect('db.sqlite')\n"
            f'db.execute("UPDATE ledger_entries SET {amount} = {amount} + 1 '
            f"WHERE rowid = (SELECT MIN(rowid) FROM ledger_entries WHERE partner_id = "
            f"'{_healthy(ep)}')\")\ndb.commit()\n"
        )
        submit_script(ep, _oracle_script(ep) + extra, perfect_findings(ep))
        s = ep.score()
        assert s.components["ledger_correctness"]["value"] == 0.0
        assert s.metrics["failure_code"] == "ledger_regression"


def test_changing_a_payouts_row_costs_all_preservation() -> None:
    with open_episode() as ep:
        extra = (
            "\nimport sqlite3\ndb = sqlite3.connect('db.sqlite')\n"
            "db.execute(\"UPDATE payouts SET paid_at = paid_at || ' '\")\ndb.commit()\n"
        )
        submit_script(ep, _oracle_script(ep) + extra, perfect_findings(ep))
        c = components(ep)
        assert c["ledger_correctness"] == 1.0 and c["non_destructiveness"] == 0.0


def test_a_partial_repair_earns_a_share() -> None:
    with open_episode(seed=2, tier=3) as ep:
        truth = ep.oracle_truth()
        keep = sorted(truth.broken)[0]
        script = _oracle_script(ep)
        # repair every broken partner but one: drop that one's target from the oracle's script
        assert f'"{keep}":' in script
        start = script.index(f'"{keep}":')
        end = script.index("}", start) + 1
        cut = script[:start] + script[end:].lstrip(", ")
        submit_script(ep, cut.replace(", }", "}"), perfect_findings(ep))
        c = components(ep)
        n = len(truth.broken)
        assert c["ledger_correctness"] == pytest.approx(round((n - 1) / n, 6))
        assert ep.score().metrics["failure_code"] == "ledger_incomplete"


def test_rescoring_is_stable_and_rerun_free() -> None:
    with open_episode() as ep:
        submit_script(ep, _oracle_script(ep), perfect_findings(ep))
        first = ep.score()
        assert all(ep.score() == first for _ in range(100))


def test_an_identical_submission_reuses_the_graded_run_and_rescore_reruns_it() -> None:
    with open_episode() as a, open_episode() as b:
        script = _oracle_script(a)
        submit_script(a, script, perfect_findings(a))
        submit_script(b, script, perfect_findings(b))
        assert a.outcome() is b.outcome()  # one run for one (world, files, script, walls)
        first = a.outcome()
        assert a.rescore() == a.score()
        assert a.outcome() is not first and a.outcome() == first  # re-run, same result


ESCAPES = [
    # rebuild the truth from the public code: import the package by path
    "import sys; sys.path.insert(0, '/work/main/src'); import datagauntlet",
    "open('/etc/passwd').read()",
    "import socket; socket.create_connection(('127.0.0.1', 9), timeout=1)",
    "import subprocess; subprocess.run(['true'])",
    "import os; os.system('true')",
    # swap the ledger for a link to a file outside
    "import os; os.remove('db.sqlite'); os.symlink('/etc/passwd', 'db.sqlite')",
]


@pytest.mark.parametrize("escape", ESCAPES)
def test_a_script_that_tries_to_leave_the_sandbox_scores_nothing(escape: str) -> None:
    with open_episode() as ep:
        submit_script(ep, _oracle_script(ep) + "\n" + escape + "\n", perfect_findings(ep))
        s = ep.score()
        assert s.reward == 0.0
        assert s.metrics["failure_code"] in ("sandbox_violation", "script_error")
        assert s.metrics["validity"] == 0


# --- run_graded itself: the walls it demands and the outcomes it reuses (full mutation run) -
def _graded_inputs():  # type: ignore[no-untyped-def]
    from datagauntlet.kits.sandbox import GRADED

    with open_episode() as ep:
        return ep.inputs, ep._truth_of(ep.world), GRADED.with_(timeout_s=20.0, cpu_s=10)


def test_the_graded_run_demands_its_walls_and_runs_under_the_given_limits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import inspect as pyinspect

    from datagauntlet.envs.event_recon.grading import remediation
    from datagauntlet.kits.sandbox import WALLS, run_script

    inputs, truth, limits = _graded_inputs()
    calls = []

    def watched(*args, **kwargs):  # type: ignore[no-untyped-def]
        bound = pyinspect.signature(run_script).bind(*args, **kwargs)
        bound.apply_defaults()
        calls.append(bound.arguments)
        return run_script(*args, **kwargs)

    monkeypatch.setattr(remediation, "run_script", watched)
    tight = limits.with_(timeout_s=1.0)
    out = remediation.run_graded(inputs, {"s.py": b"import time\ntime.sleep(30)\n"}, "s.py",
                                 truth, tight, reuse=False)  # fmt: skip
    assert out.status == "timeout"  # the given 1 s, not the default limits
    script, reader = calls  # the script, then the reader of what it left: both walled
    assert script["limits"] == tight and reader["limits"] == remediation.READ_LIMITS
    for call in (script, reader):
        assert tuple(call["walls"]) == WALLS
        assert tuple(call["require"]) == remediation.REQUIRED_WALLS
    assert remediation.REQUIRED_WALLS == ("process", "rlimits", "audit")


def test_outcomes_are_reused_by_default_newest_kept_oldest_dropped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from datagauntlet.envs.event_recon.grading import remediation

    inputs, truth, limits = _graded_inputs()
    monkeypatch.setattr(remediation, "_OUTCOMES", type(remediation._OUTCOMES)())
    monkeypatch.setattr(remediation, "OUTCOME_CACHE", 2)

    def run(n: int, walls=limits):  # type: ignore[no-untyped-def]
        return remediation.run_graded(inputs, {"s.py": f"# {n}\n".encode()}, "s.py", truth, walls)

    a, b = run(1), run(2)
    assert run(1) is a and run(2) is b  # reused by default; the cache holds its bound
    slower = limits.with_(timeout_s=19.0)
    b19 = run(2, slower)
    assert b19 is not b  # other limits: another run (the bound passed: `a` went)
    c = run(3)  # the least recently used (`b`) goes
    assert run(3) is c and run(2, slower) is b19
    assert run(2) is not b and run(1) is not a  # dropped ones run again

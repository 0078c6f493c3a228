"""Every event-recon scoring rule on hand-made truths, each with a test that fails if it breaks.

The truths (er_hand_made_truth.py) are small on purpose: the arithmetic is the subject, not
the world (the world-level tests play real tasks through real episodes). What the grader reads
from the database a graded script left is tested in test_er_remediation_inspect.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from er_hand_made_truth import PERFECT, REPAIRED, outcome, report, truth, values

from datagauntlet.envs.event_recon.grading.grader import (
    FAILURE_CODES,
    METRICS,
    WEIGHTS,
    Outcome,
    Truth,
    f_beta,
    grade,
)


def test_weights_and_taxonomy() -> None:
    assert WEIGHTS == {
        "ledger_correctness": 0.5,
        "defect_identification": 0.3,
        "evidence_grounding": 0.1,
        "non_destructiveness": 0.1,
    }
    assert len(FAILURE_CODES) == 14 == len(set(FAILURE_CODES))


def test_perfect_play_scores_one_and_is_solved() -> None:
    s = grade(truth(), report(PERFECT), outcome(REPAIRED), [])
    assert s.reward == 1.0
    assert s.metrics["failure_code"] == "solved"
    assert list(s.metrics) == list(METRICS)
    assert (s.metrics["partners_broken"], s.metrics["partners_repaired"]) == (2, 2)


def test_f_beta_weights_precision() -> None:
    assert f_beta(1.0, 0.5) == pytest.approx(1.25 * 0.5 / (0.25 + 0.5))
    assert f_beta(0.5, 1.0) < f_beta(1.0, 0.5)  # beta < 1 favours precision
    assert f_beta(0.0, 1.0) == 0.0


def test_identification_is_f_half_over_distinct_pairs() -> None:
    extra = [*PERFECT, {"family": "timezone_boundary", "partner_id": "p3", "event_id": "x"}]
    v = values(truth(), extra, outcome(REPAIRED))
    assert v["defect_identification"] == pytest.approx(round(f_beta(2 / 3, 1.0), 6))
    # repeating a pair changes neither precision nor recall
    v2 = values(truth(), [*extra, *extra], outcome(REPAIRED))
    assert v2["defect_identification"] == v["defect_identification"]


def test_entity_ids_are_required() -> None:
    wrong_partner = [{"family": "duplicate_delivery", "partner_id": "p3", "event_id": "e1"}]
    assert values(truth(), wrong_partner, outcome(REPAIRED))["defect_identification"] == 0.0


def test_evidence_is_over_every_claim_and_repetition_is_inert() -> None:
    half = [PERFECT[0], {"family": "schema_drift", "partner_id": "p2", "event_id": "e1"}]
    assert values(truth(), half, outcome(REPAIRED))["evidence_grounding"] == 0.5
    # repeating the grounded claim a hundred times does not lift the share
    spam = half + [PERFECT[0]] * 100
    assert values(truth(), spam, outcome(REPAIRED))["evidence_grounding"] == 0.5
    # citing every event for a pair grounds it only if every citation is evidence
    spray = [dict(PERFECT[0], event_id=e) for e in ("e1", "e2", "e3")] + [PERFECT[1]]
    assert values(truth(), spray, outcome(REPAIRED))["evidence_grounding"] == 0.5
    # a claim outside the manifest is never grounded, whatever it cites
    wide = [*PERFECT, {"family": "timezone_boundary", "partner_id": "p4", "event_id": "e1"}]
    assert values(truth(), wide, outcome(REPAIRED))["evidence_grounding"] == pytest.approx(
        round(2 / 3, 6)
    )


def test_ledger_is_share_of_broken_partners_repaired() -> None:
    half = dict(REPAIRED, p2={"2026-01": 49})
    v = values(truth(), PERFECT, outcome(half))
    assert v["ledger_correctness"] == 0.5


def test_zero_balances_equal_absent_periods() -> None:
    padded = dict(REPAIRED, p4={"2026-03": 0})
    assert values(truth(), PERFECT, outcome(padded))["ledger_correctness"] == 1.0


def test_ledger_collapses_when_a_correct_partner_regresses() -> None:
    regressed = dict(REPAIRED, p3={"2026-02": 8})
    s = grade(truth(), report(PERFECT), outcome(regressed), [])
    assert s.components["ledger_correctness"]["value"] == 0.0
    assert s.metrics["failure_code"] == "ledger_regression"
    assert s.metrics["partners_regressed"] == 1


def test_a_partner_invented_by_the_script_is_a_regression() -> None:
    stranger = dict(REPAIRED, p9={"2026-01": 5})
    assert values(truth(), PERFECT, outcome(stranger))["ledger_correctness"] == 0.0


def test_unreadable_ledger_regresses_everyone() -> None:
    s = grade(truth(), report(PERFECT), outcome(None), [])
    assert s.components["ledger_correctness"]["value"] == 0.0
    assert s.metrics["partners_regressed"] == 2


def test_preservation_is_scaled_by_ledger_correctness() -> None:
    half = dict(REPAIRED, p2={"2026-01": 49})
    assert values(truth(), PERFECT, outcome(half))["non_destructiveness"] == 0.5
    assert values(truth(), PERFECT, outcome(REPAIRED))["non_destructiveness"] == 1.0


def test_preservation_counts_untouched_partners_value_identical() -> None:
    touched = outcome(REPAIRED, changed_partners=frozenset({"p1", "p2", "p3"}))
    v = values(truth(), PERFECT, touched)
    assert v["ledger_correctness"] == 1.0  # p3's balance is unchanged, its rows are not
    assert v["non_destructiveness"] == 0.5
    s = grade(truth(), report(PERFECT), touched, [])
    assert s.metrics["failure_code"] == "rows_not_preserved"


def test_a_changed_payouts_row_costs_all_preservation() -> None:
    v = values(truth(), PERFECT, outcome(REPAIRED, payouts_changed=True))
    assert v["non_destructiveness"] == 0.0
    assert v["ledger_correctness"] == 1.0


@pytest.mark.parametrize(
    ("findings", "o", "code"),
    [
        (PERFECT, None, "no_report"),
        ([], outcome(REPAIRED), "no_findings"),
        (PERFECT, outcome(REPAIRED, status="timeout"), "script_timeout"),
        (PERFECT, outcome(REPAIRED, status="violation"), "sandbox_violation"),
        (PERFECT, outcome(REPAIRED, status="error"), "script_error"),
        (PERFECT, outcome(REPAIRED, db_changed=False), "script_no_change"),
    ],
)
def test_validity_gate_zeroes_everything(
    findings: list[dict[str, str]], o: Outcome | None, code: str
) -> None:
    s = grade(truth(), report(findings) if o is not None else None, o, [])
    assert s.reward == 0.0
    assert all(c["value"] == 0.0 for c in s.components.values())
    assert s.metrics["failure_code"] == code
    assert s.metrics["validity"] == 0


def test_incomplete_ledger_code() -> None:
    half = dict(REPAIRED, p2={"2026-01": 49})
    s = grade(truth(), report(PERFECT), outcome(half), [])
    assert s.metrics["failure_code"] == "ledger_incomplete"
    assert 0 < s.reward < 1


def test_metrics_report_symmetric_f1(tmp_path: Path) -> None:
    extra = [*PERFECT, {"family": "timezone_boundary", "partner_id": "p3", "event_id": "x"}]
    s = grade(truth(), report(extra), outcome(REPAIRED), [])
    assert s.metrics["precision"] == pytest.approx(round(2 / 3, 6))
    assert s.metrics["recall"] == 1.0
    assert s.metrics["f1"] == pytest.approx(round(0.8, 6))


# --- rules mutation testing showed had no test of their own (docs/mutation/) ----------------
def test_a_report_without_a_graded_run_earns_nothing() -> None:
    s = grade(truth(), report(PERFECT), None, [])
    assert s.reward == 0.0 and s.metrics["validity"] == 0
    assert s.metrics["failure_code"] == "no_report"


def test_no_findings_report_zero_precision_and_recall() -> None:
    s = grade(truth(), report([]), outcome(REPAIRED), [])
    assert s.metrics["failure_code"] == "no_findings"
    assert (s.metrics["precision"], s.metrics["recall"], s.metrics["f1"]) == (0.0, 0.0, 0.0)


def test_identification_and_grounding_with_nothing_to_compare_are_zero() -> None:
    from datagauntlet.envs.event_recon.grading.grader import grounding, identification

    empty = Truth(**{**truth().__dict__, "manifest": frozenset(), "evidence": {}})
    claims = {("duplicate_delivery", "p1"): {"e1"}}
    assert identification(empty, claims) == (0.0, 0.0, 0.0)
    assert identification(truth(), {}) == (0.0, 0.0, 0.0)
    assert grounding(truth(), {}) == 0.0


def test_a_manifest_pair_without_listed_evidence_grounds_nothing() -> None:
    from datagauntlet.envs.event_recon.grading.grader import grounding

    t = truth()
    partial = Truth(**{**t.__dict__, "evidence": {("duplicate_delivery", "p1"): frozenset({"e1"})}})
    claims = {("duplicate_delivery", "p1"): {"e1"}, ("schema_drift", "p2"): {"e9"}}
    assert grounding(partial, claims) == 0.5


def test_a_partner_missing_from_the_projection_has_no_balance() -> None:
    from datagauntlet.envs.event_recon.grading.grader import ledger

    without_p4 = {k: v for k, v in REPAIRED.items() if k != "p4"}  # p4's balance is empty
    assert ledger(truth(), outcome(without_p4)).correctness == 1.0
    without_p3 = {k: v for k, v in REPAIRED.items() if k != "p3"}  # p3 had a balance
    lost = ledger(truth(), outcome(without_p3))
    assert (lost.correctness, lost.regressed) == (0.0, 1)


def test_an_unreadable_ledger_repairs_nobody_and_preserves_nothing() -> None:
    from datagauntlet.envs.event_recon.grading.grader import LedgerResult, ledger

    assert ledger(truth(), outcome(None)) == LedgerResult(0.0, 0.0, 0, 2)
    s = grade(truth(), report(PERFECT), outcome(None), [])
    assert s.metrics["partners_repaired"] == 0 and s.metrics["partners_regressed"] == 2
    assert s.components["non_destructiveness"]["value"] == 0.0


def test_each_invented_partner_counts_once_as_regressed() -> None:
    invented = {**REPAIRED, "p9": {"2026-01": 5}, "p8": {"2026-02": 1}, "p7": {}}
    s = grade(truth(), report(PERFECT), outcome(invented), [])
    assert s.metrics["partners_regressed"] == 2 and s.metrics["failure_code"] == "ledger_regression"


def test_with_no_healthy_partner_preservation_is_the_ledger_share() -> None:
    from datagauntlet.envs.event_recon.grading.grader import ledger

    t = truth()
    all_broken = Truth(**{**t.__dict__, "partners": ("p1", "p2")})
    half = {"p1": {"2026-01": 100}, "p2": {"2026-01": 0}}
    lr = ledger(all_broken, outcome(half))
    assert (lr.correctness, lr.preservation) == (0.5, 0.5)
    assert ledger(all_broken, outcome(REPAIRED)).preservation == 1.0


def test_log_metrics_count_calls_per_tool_and_executed_queries() -> None:
    from datagauntlet.core.action_log import ActionLog

    log = ActionLog()
    for tool_name, ran in [
        ("sql_query", True),
        ("sql_query", False),
        ("sql_query", True),
        ("read_file", True),
        ("bash", False),  # not a tool of this env: a turn, not a call of any tool
        ("read_file", False),
    ]:
        log.close_entry(log.open_entry(tool_name, {}), ran, "")
    m = grade(truth(), report(PERFECT), outcome(REPAIRED), log.entries).metrics
    assert m["turns"] == 6
    assert (m["calls_sql_query"], m["sql_queries"], m["calls_read_file"]) == (3, 2, 2)
    assert (m["calls_write_file"], m["calls_run_python"], m["calls_submit_report"]) == (0, 0, 0)


def test_script_metrics_come_from_the_graded_run_or_are_zero_without_one() -> None:
    ran = outcome(REPAIRED, script_bytes=321, script_lines=12, violations=("audit: open",))
    m = grade(truth(), report(PERFECT), ran, []).metrics
    assert (m["script_bytes"], m["script_lines"], m["sandbox_violations"]) == (321, 12, 1)
    none = grade(truth(), None, None, []).metrics
    assert {k: none[k] for k in ("script_bytes", "script_lines", "sandbox_violations")} == {
        "script_bytes": 0,
        "script_lines": 0,
        "sandbox_violations": 0,
    }
    assert (none["partners_repaired"], none["partners_regressed"]) == (0, 0)


def test_precision_recall_and_f1_are_reported_to_six_digits() -> None:
    three = truth(
        {
            ("duplicate_delivery", "p1"): {"e1"},
            ("schema_drift", "p2"): {"e9"},
            ("timezone_boundary", "p3"): {"e4"},
        }
    )
    claims = [*PERFECT, {"family": "timezone_boundary", "partner_id": "p4", "event_id": "x"}]
    m = grade(three, report(claims), outcome(REPAIRED), []).metrics
    assert (m["precision"], m["recall"]) == (0.666667, 0.666667)
    assert m["f1"] == round(f_beta(2 / 3, 2 / 3, 1.0), 6) == 0.666667


def test_a_regression_is_valid_and_keeps_the_report_credit() -> None:
    # only the first six failure codes void the episode: a regressed ledger scores its report
    regressed = {**REPAIRED, "p3": {"2026-02": 8}}
    s = grade(truth(), report(PERFECT), outcome(regressed), [])
    assert s.metrics["failure_code"] == "ledger_regression" and s.metrics["validity"] == 1
    assert s.reward == pytest.approx(
        WEIGHTS["defect_identification"] + WEIGHTS["evidence_grounding"]
    )


# --- a finding is identified only with an event that evidences it ----------------------------
TWELVE = tuple(f"family_{i:02d}" for i in range(12))


def _concentrated() -> Truth:
    """Three pairs, all on p1: the shape T3/T4 produce when their defects share a partner."""
    manifest = {(TWELVE[i], "p1"): {f"e{i}"} for i in range(3)}
    return Truth(**{**truth(manifest).__dict__, "families": TWELVE})


def test_a_pair_is_identified_only_with_an_event_that_evidences_it() -> None:
    t = truth()
    uncited = [dict(f, event_id="none") for f in PERFECT]
    assert values(t, uncited, outcome(REPAIRED))["defect_identification"] == 0.0
    swapped = [dict(PERFECT[0], event_id="e9"), dict(PERFECT[1], event_id="e1")]
    assert values(t, swapped, outcome(REPAIRED))["defect_identification"] == 0.0
    one = [PERFECT[0], dict(PERFECT[1], event_id="none")]
    assert values(t, one, outcome(REPAIRED))["defect_identification"] == pytest.approx(
        round(f_beta(0.5, 0.5), 6)
    )


@pytest.mark.parametrize("cite", ["none", "e-not-evidence"])
def test_reciting_every_family_for_one_partner_stays_under_the_probe_ceiling(cite: str) -> None:
    """Every family for the partner that carries all three pairs (the public worst case was
    0.0882 when a pair counted without its evidence): nothing is identified."""
    from datagauntlet.envs.event_recon.attacks.probes import PROBE_CEILING

    recital = [{"family": f, "partner_id": "p1", "event_id": cite} for f in TWELVE]
    s = grade(_concentrated(), report(recital), outcome({}), [])
    assert s.reward <= PROBE_CEILING
    assert s.components["defect_identification"]["value"] == 0.0


def test_a_short_report_on_a_preserved_exact_ledger_is_report_imperfect() -> None:
    """The preservation label is not a catch-all: rows kept, report short, the old label."""
    s = grade(truth(), report(PERFECT[:1]), outcome(REPAIRED), [])
    assert s.components["non_destructiveness"]["value"] == 1.0
    assert s.metrics["failure_code"] == "report_imperfect"


def test_a_changed_payout_on_an_exact_ledger_is_rows_not_preserved() -> None:
    s = grade(truth(), report(PERFECT), outcome(REPAIRED, payouts_changed=True), [])
    assert s.metrics["failure_code"] == "rows_not_preserved"

"""Every scoring rule, each with a test that fails if the rule is broken."""

from __future__ import annotations

import pytest
from bbg_helpers import episode_of, generated_env

from datagauntlet.envs.bad_batch_gate.env import BadBatchGateEnv
from datagauntlet.envs.bad_batch_gate.episode import BadBatchGateEpisode
from datagauntlet.envs.bad_batch_gate.grading.grader import WEIGHTS


@pytest.fixture(scope="module")
def env() -> BadBatchGateEnv:
    return generated_env()


def split(ep: BadBatchGateEpisode) -> tuple[str, str]:
    """(bad batch id, clean batch id) of a case with one of each."""
    bad = [b.batch_id for b in ep.case.batches if b.truth.defective]
    clean = [b.batch_id for b in ep.case.batches if not b.truth.defective]
    assert len(bad) == 1 and len(clean) == 1
    return bad[0], clean[0]


def cite(ep: BadBatchGateEpisode, bid: str) -> dict[str, str]:
    column, kind = ep.oracle_truth()[bid].first_citation()
    return {"batch_id": bid, "column": column, "defect_type": kind}


def look(ep: BadBatchGateEpisode, *bids: str) -> None:
    for bid in bids:
        ep.call("profile_batch", {"batch_id": bid})


def comps(ep: BadBatchGateEpisode) -> dict[str, float]:
    return {k: v["value"] for k, v in ep.score().components.items()}


def test_weights() -> None:
    assert WEIGHTS == {"disposition": 0.5, "report": 0.2, "evidence": 0.15, "inspected": 0.15}


def test_the_right_play_scores_one(env: BadBatchGateEnv) -> None:
    ep = episode_of(env, "amount-bounds")
    bad, clean = split(ep)
    look(ep, bad, clean)
    ep.call("quarantine_batch", cite(ep, bad))
    ep.call("load_batch", {"batch_id": clean})
    ep.call("submit_report", {"loaded": [clean], "quarantined": [bad]})
    assert ep.score().reward == 1.0


def test_no_report_no_credit_but_metrics_kept(env: BadBatchGateEnv) -> None:
    ep = episode_of(env, "amount-bounds")
    bad, clean = split(ep)
    look(ep, bad, clean)
    ep.call("load_batch", {"batch_id": bad})
    ep.call("load_batch", {"batch_id": clean})
    s = ep.score()
    assert s.reward == 0 and all(c["value"] == 0 for c in s.components.values())
    assert s.metrics["bad_batches_loaded"] == 1 and s.metrics["revenue_error_usd"] > 0


def test_defective_batch_loaded_is_wrong_even_if_quarantined_after(env: BadBatchGateEnv) -> None:
    ep = episode_of(env, "blank-amount")
    bad, clean = split(ep)
    look(ep, bad, clean)
    ep.call("load_batch", {"batch_id": clean})
    ep.call("load_batch", {"batch_id": bad})
    out = ep.call("quarantine_batch", cite(ep, bad))
    assert "warning" in out
    ep.call("submit_report", {"loaded": sorted([bad, clean]), "quarantined": [bad]})
    c = comps(ep)
    assert c["disposition"] == 0.5 and c["evidence"] == 0.0 and c["report"] == 1.0


def test_clean_batch_loaded_twice_is_wrong(env: BadBatchGateEnv) -> None:
    ep = episode_of(env, "amount-bounds")
    bad, clean = split(ep)
    look(ep, bad, clean)
    ep.call("quarantine_batch", cite(ep, bad))
    ep.call("load_batch", {"batch_id": clean})
    ep.call("load_batch", {"batch_id": clean})
    ep.call("submit_report", {"loaded": [clean], "quarantined": [bad]})
    assert comps(ep)["disposition"] == 0.5


def test_untouched_batches_are_not_handled(env: BadBatchGateEnv) -> None:
    ep = episode_of(env, "amount-bounds")
    ep.call("submit_report", {"loaded": [], "quarantined": []})
    c = comps(ep)
    assert c["disposition"] == 0 and c["inspected"] == 0
    # generated cases: acting on nothing earns no report or evidence credit either
    assert c["report"] == 0 and c["evidence"] == 0 and ep.score().reward == 0


def test_doing_nothing_earns_nothing_on_any_generated_case(env: BadBatchGateEnv) -> None:
    for split in ("eval", "test"):
        for task in env.tasks(split):
            ep = env.episode(task)
            ep.call("submit_report", {"loaded": [], "quarantined": []})
            assert ep.score().reward == 0.0, task.id
    # acting on one batch brings the report back: the rule is about doing nothing
    ep = episode_of(env, "clean-control", 0)
    first = ep.case.batches[0].batch_id
    ep.call("load_batch", {"batch_id": first})
    ep.call("submit_report", {"loaded": [first], "quarantined": []})
    assert comps(ep)["report"] == 1.0


def test_orders_loaded_before_their_customers_is_wrong(env: BadBatchGateEnv) -> None:
    ep = episode_of(env, "clean-control", 1)
    batches = {b.table: b.batch_id for b in ep.case.batches}
    look(ep, *batches.values())
    ep.call("load_batch", {"batch_id": batches["orders"]})
    ep.call("load_batch", {"batch_id": batches["customers"]})
    ep.call("submit_report", {"loaded": sorted(batches.values()), "quarantined": []})
    assert comps(ep)["disposition"] == 0.5
    # the same rows, customers first, are right
    ep2 = episode_of(env, "clean-control", 1)
    look(ep2, *batches.values())
    ep2.call("load_batch", {"batch_id": batches["customers"]})
    ep2.call("load_batch", {"batch_id": batches["orders"]})
    ep2.call("submit_report", {"loaded": sorted(batches.values()), "quarantined": []})
    assert ep2.score().reward == 1.0


@pytest.mark.parametrize(
    ("loaded", "quarantined", "ok"),
    [
        (["C"], ["B"], True),
        (["C", "C"], ["B"], False),  # each once
        (["B"], ["C"], False),  # swapped: the story, not what happened
        ([], ["B"], False),
        (["C"], ["B", "X"], False),
    ],
)
def test_report_must_match_what_happened(
    env: BadBatchGateEnv, loaded: list[str], quarantined: list[str], ok: bool
) -> None:
    ep = episode_of(env, "orphan-customer")
    bad, clean = split(ep)
    names = {"B": bad, "C": clean, "X": "B-nope"}
    look(ep, bad, clean)
    ep.call("quarantine_batch", cite(ep, bad))
    ep.call("load_batch", {"batch_id": clean})
    ep.call(
        "submit_report",
        {"loaded": [names[x] for x in loaded], "quarantined": [names[x] for x in quarantined]},
    )
    assert comps(ep)["report"] == float(ok)


def test_report_order_does_not_matter(env: BadBatchGateEnv) -> None:
    ep = episode_of(env, "clean-control", 0)
    ids = [b.batch_id for b in ep.case.batches]
    look(ep, *ids)
    for bid in ids:
        ep.call("load_batch", {"batch_id": bid})
    ep.call("submit_report", {"loaded": list(reversed(sorted(ids))), "quarantined": []})
    assert comps(ep)["report"] == 1.0


@pytest.mark.parametrize(
    ("column", "kind", "hit"),
    [
        ("amount", "missing_value", True),
        ("amount", "out_of_range", True),  # the contract's second reading of a blank
        ("amount", "invalid_value", False),
        ("order_id", "missing_value", False),
    ],
)
def test_evidence_needs_a_citation_really_in_the_batch(
    env: BadBatchGateEnv, column: str, kind: str, hit: bool
) -> None:
    ep = episode_of(env, "blank-amount")
    bad, clean = split(ep)
    look(ep, bad, clean)
    ep.call("quarantine_batch", {"batch_id": bad, "column": column, "defect_type": kind})
    ep.call("load_batch", {"batch_id": clean})
    ep.call("submit_report", {"loaded": [clean], "quarantined": [bad]})
    c = comps(ep)
    assert c["evidence"] == float(hit) and c["disposition"] == 1.0


def test_first_citation_is_final(env: BadBatchGateEnv) -> None:
    ep = episode_of(env, "blank-amount")
    bad, clean = split(ep)
    look(ep, bad, clean)
    ep.call(
        "quarantine_batch", {"batch_id": bad, "column": "status", "defect_type": "invalid_value"}
    )
    again = ep.call("quarantine_batch", cite(ep, bad))
    assert "error" in again and "final" in again["error"]
    ep.call("load_batch", {"batch_id": clean})
    ep.call("submit_report", {"loaded": [clean], "quarantined": [bad]})
    assert comps(ep)["evidence"] == 0.0


def test_quarantining_a_clean_batch_cancels_a_hit(env: BadBatchGateEnv) -> None:
    ep = episode_of(env, "label-drift")
    bad, clean = split(ep)
    look(ep, bad, clean)
    ep.call("quarantine_batch", cite(ep, bad))
    ep.call(
        "quarantine_batch", {"batch_id": clean, "column": "amount", "defect_type": "out_of_range"}
    )
    ep.call("submit_report", {"loaded": [], "quarantined": sorted([bad, clean])})
    c = comps(ep)
    assert c["evidence"] == 0.0 and c["disposition"] == 0.5


def test_quarantine_after_loading_a_clean_batch(env: BadBatchGateEnv) -> None:
    """Rows stay in: disposition counts it loaded once, evidence counts a wrong quarantine."""
    ep = episode_of(env, "label-drift")
    bad, clean = split(ep)
    look(ep, bad, clean)
    ep.call("quarantine_batch", cite(ep, bad))
    ep.call("load_batch", {"batch_id": clean})
    ep.call(
        "quarantine_batch", {"batch_id": clean, "column": "amount", "defect_type": "out_of_range"}
    )
    ep.call("submit_report", {"loaded": [clean], "quarantined": sorted([bad, clean])})
    c = comps(ep)
    assert c["disposition"] == 1.0 and c["evidence"] == 0.0


def test_control_case_evidence_is_one_only_if_nothing_stopped(env: BadBatchGateEnv) -> None:
    ep = episode_of(env, "clean-control", 0)
    ids = [b.batch_id for b in ep.case.batches]
    for bid in ids:
        ep.call("load_batch", {"batch_id": bid})
    ep.call("submit_report", {"loaded": sorted(ids), "quarantined": []})
    c = comps(ep)
    assert c["evidence"] == 1.0 and c["inspected"] == 0.0 and ep.score().reward == 0.85
    ep2 = episode_of(env, "clean-control", 0)
    ep2.call("load_batch", {"batch_id": ids[0]})
    ep2.call(
        "quarantine_batch", {"batch_id": ids[1], "column": "amount", "defect_type": "out_of_range"}
    )
    ep2.call("submit_report", {"loaded": [ids[0]], "quarantined": [ids[1]]})
    assert comps(ep2)["evidence"] == 0.0


def _inspected_after(env: BadBatchGateEnv, queries: list[str]) -> float:
    ep = episode_of(env, "clean-control", 0)
    ids = [b.batch_id for b in ep.case.batches]
    tables = [ep.world.tables[b] for b in ids]
    for q in queries:
        ep.call("run_sql", {"query": q.format(stg=tables[0])})
    for bid in ids:
        ep.call("load_batch", {"batch_id": bid})
    ep.call("submit_report", {"loaded": sorted(ids), "quarantined": []})
    return comps(ep)["inspected"]


@pytest.mark.parametrize(
    ("query", "share"),
    [
        ("SELECT COUNT(*) FROM {stg}", 0.5),
        ("SELECT 1 FROM {stg} WHERE 0", 0.5),  # the documented limit: any real read counts
        ("SELECT 1 -- {stg}", 0.0),
        ("SELECT '{stg}'", 0.0),
        ("SELECT * FROM {stg}; DELETE FROM {stg}", 0.0),  # refused: not a look
        ("SELECT COUNT(*) FROM wh_orders", 0.0),
    ],
)
def test_inspected_counts_only_real_reads(env: BadBatchGateEnv, query: str, share: float) -> None:
    assert _inspected_after(env, [query]) == share


def test_a_look_after_the_action_does_not_count(env: BadBatchGateEnv) -> None:
    ep = episode_of(env, "amount-bounds")
    bad, clean = split(ep)
    ep.call("quarantine_batch", cite(ep, bad))
    look(ep, bad, clean)
    ep.call("load_batch", {"batch_id": clean})
    ep.call("submit_report", {"loaded": [clean], "quarantined": [bad]})
    assert comps(ep)["inspected"] == 0.5


def test_refused_actions_are_not_actions(env: BadBatchGateEnv) -> None:
    ep = episode_of(env, "amount-bounds")
    bad, clean = split(ep)
    ep.call("quarantine_batch", {"batch_id": bad, "column": "nope", "defect_type": "invalid_value"})
    look(ep, bad, clean)  # the refused quarantine above does not make this look late
    ep.call("quarantine_batch", cite(ep, bad))
    ep.call("load_batch", {"batch_id": clean})
    ep.call("submit_report", {"loaded": [clean], "quarantined": [bad]})
    assert ep.score().reward == 1.0


def test_metrics_bad_batches_and_revenue(env: BadBatchGateEnv) -> None:
    ep = episode_of(env, "dimension-fanout")
    bad, clean = split(ep)
    before = ep.world.mart()
    ep.call("load_batch", {"batch_id": bad})
    doubled = ep.world.mart()
    assert doubled > before  # a re-added customer fans out their orders
    ep.call("load_batch", {"batch_id": clean})
    ep.call("submit_report", {"loaded": sorted([bad, clean]), "quarantined": []})
    s = ep.score()
    assert s.metrics["bad_batches_loaded"] == 1
    assert s.metrics["revenue_error_usd"] == round(
        abs(ep.world.mart() - ep.world.correct_mart()), 2
    )
    assert s.metrics["revenue_error_usd"] > 0


def test_the_loader_accepts_anything(env: BadBatchGateEnv) -> None:
    ep = episode_of(env, "blank-amount")
    bad, _clean = split(ep)
    out = ep.call("load_batch", {"batch_id": bad})
    assert out == {"status": "loaded", "rows_loaded": len(ep.world.batches[bad].rows), "errors": 0}
    zero = ep.world.conn.execute("SELECT COUNT(*) FROM wh_orders WHERE amount = 0").fetchone()[0]
    assert zero == 1

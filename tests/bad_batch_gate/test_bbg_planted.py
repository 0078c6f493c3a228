"""Rules that survived planted bugs until these tests existed (issue: tests that catch bugs)."""

from __future__ import annotations

import pytest
from bbg_helpers import episode_of, generated_env

from datagauntlet.envs.bad_batch_gate.env import BadBatchGateEnv
from datagauntlet.envs.bad_batch_gate.episode import BadBatchGateEpisode


def _components(ep: BadBatchGateEpisode) -> dict[str, float]:
    return {k: v["value"] for k, v in ep.score().components.items()}


def _bad_and_clean(ep: BadBatchGateEpisode) -> tuple[str, str]:
    bad = [b.batch_id for b in ep.case.batches if b.truth.defective]
    clean = [b.batch_id for b in ep.case.batches if not b.truth.defective]
    assert len(bad) == 1 and len(clean) == 1
    return bad[0], clean[0]


def test_inspected_judges_the_look_against_the_first_action() -> None:
    """Act, then look, then act again: that batch was acted on without looking (0.5 overall).

    The contract is read first so the first action is not at seq 0, where a grader that kept
    the *last* action instead of the first would go unnoticed.
    """
    ep = episode_of(generated_env(), "amount-bounds")
    bad, clean = _bad_and_clean(ep)
    column, kind = ep.oracle_truth()[bad].first_citation()
    citation = {"batch_id": bad, "column": column, "defect_type": kind}
    ep.call("read_contract", {})
    assert "error" not in ep.call("load_batch", {"batch_id": clean})  # acted on, blind
    ep.call("profile_batch", {"batch_id": clean})
    ep.call("profile_batch", {"batch_id": bad})
    again = {"batch_id": clean, "column": column, "defect_type": kind}
    assert "error" not in ep.call("quarantine_batch", again)  # acting again, after the look
    assert "error" not in ep.call("quarantine_batch", citation)
    ep.call("submit_report", {"loaded": [clean], "quarantined": sorted([bad, clean])})
    assert _components(ep)["inspected"] == 0.5


@pytest.fixture(scope="module")
def extended() -> BadBatchGateEnv:
    return generated_env("extended")


def test_extended_a_good_row_loaded_twice_loses_its_credit(extended: BadBatchGateEnv) -> None:
    ep = episode_of(extended, "partial-load")
    # the family's batch has two bad rows; its companion one, which only the warehouse shows
    bad = max(ep.case.batches, key=lambda b: len(b.truth.bad_rows))
    others = [b for b in ep.case.batches if b is not bad]
    rows = range(1, len(bad.rows) + 1)
    goods = [r for r in rows if r not in bad.truth.bad_rows]
    twice = goods[0]
    for bid in (b.batch_id for b in ep.case.batches):
        ep.call("profile_batch", {"batch_id": bid})
    for other in others:
        held_other = list(other.truth.bad_rows)
        ep.call("load_batch", {"batch_id": other.batch_id, "hold_back": held_other})
    held = list(bad.truth.bad_rows)
    assert "error" not in ep.call("load_batch", {"batch_id": bad.batch_id, "hold_back": held})
    again = sorted({*held, *(r for r in goods if r != twice)})
    assert "error" not in ep.call("load_batch", {"batch_id": bad.batch_id, "hold_back": again})
    loaded = sorted(b.batch_id for b in ep.case.batches if ep.load_counts.get(b.batch_id))
    ep.call("submit_report", {"loaded": loaded, "quarantined": []})
    n_batches = len(ep.case.batches)
    expected = ((n_batches - 1) + (len(goods) - 1) / len(goods)) / n_batches
    assert _components(ep)["disposition"] == pytest.approx(expected, abs=1e-6)

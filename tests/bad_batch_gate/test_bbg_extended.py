"""Extended families: partial loads graded row by row, every defect named, x100 under the cap."""

from __future__ import annotations

import pytest
from bbg_helpers import episode_of, generated_env

from datagauntlet.envs.bad_batch_gate.env import BadBatchGateEnv
from datagauntlet.envs.bad_batch_gate.episode import BadBatchGateEpisode
from datagauntlet.envs.bad_batch_gate.world.generator import validate


@pytest.fixture(scope="module")
def env() -> BadBatchGateEnv:
    return generated_env("extended")


def _bad(ep: BadBatchGateEpisode):
    """The family's own bad batch (its companion has one bad row that only the warehouse
    shows: a duplicate or an orphan)."""
    bad = [b for b in ep.case.batches if b.truth.defective]
    unit = ("amount", "out_of_range")
    return max(bad, key=lambda b: (len(b.truth.bad_rows), b.truth.accepts(unit)))


def _play(ep: BadBatchGateEpisode, bad_action: dict) -> dict[str, float]:
    """Look at everything, handle the other batch right, do `bad_action` to the bad one."""
    bad = _bad(ep)
    for b in ep.case.batches:
        ep.call("profile_batch", {"batch_id": b.batch_id})
    for b in ep.case.batches:
        if b is not bad:
            ep.call("load_batch", {"batch_id": b.batch_id, "hold_back": list(b.truth.bad_rows)})
    tool = "load_batch" if "column" not in bad_action else "quarantine_batch"
    ep.call(tool, {"batch_id": bad.batch_id, **bad_action})
    loaded = sorted(b.batch_id for b in ep.case.batches if ep.load_counts.get(b.batch_id))
    ep.call("submit_report", {"loaded": loaded, "quarantined": sorted(ep.quarantined)})
    return {k: v["value"] for k, v in ep.score().components.items()}


def test_partial_load_holding_back_exactly_the_bad_rows(env: BadBatchGateEnv) -> None:
    ep = episode_of(env, "partial-load")
    bad = _bad(ep)
    assert bad.truth.action == "hold" and len(bad.truth.bad_rows) == 2
    c = _play(ep, {"hold_back": list(bad.truth.bad_rows)})
    assert c == {"disposition": 1.0, "report": 1.0, "evidence": 1.0, "inspected": 1.0}


def test_partial_load_is_graded_row_by_row(env: BadBatchGateEnv) -> None:
    ep = episode_of(env, "partial-load")
    bad = _bad(ep)
    good = next(r for r in range(1, len(bad.rows) + 1) if r not in bad.truth.bad_rows)
    goods = len(bad.rows) - 2
    c = _play(ep, {"hold_back": [*bad.truth.bad_rows, good]})
    assert c["disposition"] == pytest.approx((1 + (goods - 1) / goods) / 2, abs=1e-6)
    assert c["evidence"] == 0.5  # the companion's bad row held back: one of two hits
    ep2 = episode_of(env, "partial-load")
    c2 = _play(ep2, {"hold_back": [bad.truth.bad_rows[0]]})  # one bad row loaded
    assert c2["disposition"] == 0.75 and c2["evidence"] == 0.5


def test_partial_load_quarantined_or_loaded_whole_is_wrong(env: BadBatchGateEnv) -> None:
    ep = episode_of(env, "partial-load")
    column, kind = _bad(ep).truth.first_citation()
    c = _play(ep, {"column": column, "defect_type": kind})
    assert c["disposition"] == 0.5 and c["evidence"] == 0.5  # only the companion's hit
    c2 = _play(episode_of(env, "partial-load"), {})
    assert c2["disposition"] == 0.5 and c2["evidence"] == 0.5


def _citations(ep: BadBatchGateEpisode) -> list[tuple[str, str]]:
    return [sorted(g)[0] for g in _bad(ep).truth.groups]


def test_multi_defect_needs_every_defect_named(env: BadBatchGateEnv) -> None:
    ep = episode_of(env, "multi-defect", 1)
    cites = _citations(ep)
    assert _bad(ep).truth.action == "quarantine" and len(cites) >= 2
    more = [{"column": c, "defect_type": k} for c, k in cites[1:]]
    full = _play(ep, {"column": cites[0][0], "defect_type": cites[0][1], "more_citations": more})
    assert full["evidence"] == 1.0 and full["disposition"] == 1.0
    only_one = _play(
        episode_of(env, "multi-defect", 1), {"column": cites[0][0], "defect_type": cites[0][1]}
    )
    assert only_one["evidence"] == 0.5 and only_one["disposition"] == 1.0


def test_multi_defect_spray_is_not_evidence(env: BadBatchGateEnv) -> None:
    ep = episode_of(env, "multi-defect", 1)
    cites = _citations(ep)
    more = [{"column": c, "defect_type": k} for c, k in cites[1:]]
    more.append({"column": "status", "defect_type": "duplicate_key"})
    c = _play(ep, {"column": cites[0][0], "defect_type": cites[0][1], "more_citations": more})
    assert c["evidence"] == 0.5  # only the companion's hit


@pytest.mark.parametrize("variant", [0, 2])
def test_unit_error_is_under_the_cap_and_needs_the_history(
    env: BadBatchGateEnv, variant: int
) -> None:
    ep = episode_of(env, "unit-error", variant)
    bad = _bad(ep)
    for n in bad.truth.bad_rows:
        assert 0 < float(bad.rows[n - 1]["amount"]) <= 50_000
    known = {r["customer_id"] for r in ep.case.customers}
    # by the original's contract (no history rule) the batch is clean
    assert validate("orders", list(bad.rows), known, list(ep.case.orders), extended=False) == {}
    assert validate("orders", list(bad.rows), known, list(ep.case.orders), extended=True)
    env.policies()["profile-only"](ep)
    assert ep.score().metrics["bad_batches_loaded"] == 2  # and the companion's hidden row
    ep2 = episode_of(env, "unit-error", variant)
    env.policies()["careful"](ep2)
    assert ep2.score().reward == 1.0


def test_hold_back_outside_the_batch_is_refused(env: BadBatchGateEnv) -> None:
    ep = episode_of(env, "partial-load")
    before = ep.fingerprint()
    out = ep.call("load_batch", {"batch_id": _bad(ep).batch_id, "hold_back": [999]})
    assert "error" in out and ep.fingerprint() == before


def test_holding_back_rows_of_a_clean_batch_costs(env: BadBatchGateEnv) -> None:
    ep = episode_of(env, "clean-control", 0)
    ids = [b.batch_id for b in ep.case.batches]
    for bid in ids:
        ep.call("profile_batch", {"batch_id": bid})
    ep.call("load_batch", {"batch_id": ids[0], "hold_back": [1]})
    ep.call("load_batch", {"batch_id": ids[1]})
    ep.call("submit_report", {"loaded": sorted(ids), "quarantined": []})
    c = {k: v["value"] for k, v in ep.score().components.items()}
    assert c["evidence"] == 0.0 and 0.5 < c["disposition"] < 1.0


def test_careful_is_perfect_on_every_extended_test_case(env: BadBatchGateEnv) -> None:
    careful = env.policies()["careful"]
    for task in env.tasks("test"):
        ep = env.episode(task)
        careful(ep)
        assert ep.score().reward == 1.0, (task.id, ep.case.family)


def test_naive_and_profile_only_fall_further_than_in_standard() -> None:
    from datagauntlet.envs.bad_batch_gate import tables

    means = {}
    for families in ("standard", "extended"):
        env = generated_env(families)
        played = tables.play(env, ["naive", "profile-only"], env.tasks("eval"))
        for name in ("naive", "profile-only"):
            rs = [r.score.reward for r in played if r.policy == name]
            means[(families, name)] = sum(rs) / len(rs)
    assert means[("extended", "naive")] < means[("standard", "naive")]
    assert means[("extended", "profile-only")] < means[("standard", "profile-only")] - 0.1

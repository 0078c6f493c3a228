"""The cheap attacks of `cheap_attacks.py`, each with the figure the gate rows publish.

The full run over the 120 public tasks is a gate row each (docs/envs/event-recon-gates.json);
here a few tasks show what each attack earns and why.
"""

from __future__ import annotations

from collections import Counter
from functools import cache

import pytest

import datagauntlet as dg
from datagauntlet.core.episode import Task
from datagauntlet.envs.event_recon.attacks import cheap_attacks, probes
from datagauntlet.envs.event_recon.grading.grader import BETA, f_beta

T1, T4 = 3, 97  # public task indices: one of tier 1, one of tier 4
MERGED = 94  # a public tier-4 task whose manifest has identity_fragmentation


@cache
def env() -> dg.Environment:
    return dg.make("event-recon")


def task(index: int) -> Task:
    return env().tasks("public")[index]


def play(policy: object, index: int) -> tuple[float, dict[str, float], dict[str, object], str]:
    ep = env().episode(task(index))
    try:
        policy(ep)  # type: ignore[operator]
        score = ep.score()
        report = ep.report  # type: ignore[attr-defined]
        script = ep.submitted_files[report["script_path"]] if report else b""  # type: ignore[attr-defined]
    finally:
        ep.close()
    comps = {k: c["value"] for k, c in score.components.items()}
    text = script.decode() if isinstance(script, bytes) else str(script)
    return score.reward, comps, dict(score.metrics), text


@pytest.mark.parametrize("index", [T1, T4])
def test_a_perfect_report_with_a_touch_script_earns_exactly_the_report_weight(index: int) -> None:
    reward, comps, metrics, _ = play(cheap_attacks.perfect_report_touch, index)
    assert comps["defect_identification"] == 1.0 and comps["evidence_grounding"] == 1.0
    assert comps["ledger_correctness"] == 0.0 and comps["non_destructiveness"] == 0.0
    assert metrics["validity"] == 1 and metrics["failure_code"] == "ledger_incomplete"
    assert reward == pytest.approx(cheap_attacks.REPORT_VALUE, abs=1e-9) == pytest.approx(0.40)
    # the same report with an empty script fails the validity gate
    empty, _, empty_metrics, _ = play(probes.empty_script_perfect_report, index)
    assert empty == 0.0 and empty_metrics["failure_code"] == "script_no_change"


def test_the_fixed_script_is_one_text_and_earns_nothing_alone_or_under_a_perfect_report() -> None:
    scripts = set()
    for index in (T1, T4):
        alone, comps, _, script = play(cheap_attacks.fixed_script, index)
        scripts.add(script)
        assert alone <= probes.PROBE_CEILING and comps["ledger_correctness"] == 0.0
        under, comps, _, script = play(cheap_attacks.fixed_script_perfect_report, index)
        scripts.add(script)
        assert under <= cheap_attacks.REPORT_VALUE + 1e-9
        assert comps["ledger_correctness"] == 0.0
    assert scripts == {cheap_attacks.FIXED_SCRIPT}


@cache
def recited() -> tuple[int, str]:
    """The first public task from T3 on where one partner carries several pairs, and that
    partner: where reciting every family for it paid most before grounded identification."""
    for index in range(60, 120):
        truth = env().episode_truth(task(index))  # type: ignore[attr-defined]
        counts = Counter(p for _, p in truth.manifest)
        partner, k = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        if k >= 2:
            return index, partner
    raise AssertionError("no public task concentrates several pairs on one partner")


@pytest.mark.parametrize("which", ["T1", "T4"])
def test_a_schema_only_report_finds_only_what_its_one_cited_event_evidences(which: str) -> None:
    index = {"T1": T1, "T4": T4}[which]
    families = len(env().families(task(index)))  # type: ignore[attr-defined]
    reward, _, metrics, _ = play(cheap_attacks.schema_report, index)
    truth = env().episode_truth(task(index))  # type: ignore[attr-defined]
    first = sorted(truth.partners)[0]
    world = env().world(task(index))  # type: ignore[attr-defined]
    cited = _first_ledger_event(world, first)
    hits = sum(1 for f, p in truth.manifest if p == first and cited in truth.evidence[(f, p)])
    precision, recall = hits / families, hits / len(truth.manifest)
    expected = 0.3 * f_beta(precision, recall, BETA) + 0.1 * precision if hits else 0.0
    assert metrics["distinct_pairs"] == families
    assert reward == pytest.approx(expected, abs=1e-6)
    assert reward <= cheap_attacks.partner_bound(truth.manifest, families, first) + 1e-9
    assert reward <= probes.PROBE_CEILING


def recite(partner: str, event: str) -> object:
    """Every published family for `partner`, each citing `event`; the touch script."""

    def policy(ep: object) -> None:
        families = probes._families(ep)  # type: ignore[arg-type]
        findings = [{"family": f, "partner_id": partner, "event_id": event} for f in families]
        probes.submit(ep, findings, probes.TOUCH)  # type: ignore[arg-type]

    return policy


@pytest.mark.parametrize("cite", ["none", "first-ledger-event"])
def test_reciting_every_family_for_the_partner_with_most_pairs_stays_under_the_ceiling(
    cite: str,
) -> None:
    """Without grounded identification this recital scored 0.3 * F0.5(k/12, k/K) > 0.05."""
    index, partner = recited()
    truth = env().episode_truth(task(index))  # type: ignore[attr-defined]
    families = len(env().families(task(index)))  # type: ignore[attr-defined]
    k = sum(1 for _, p in truth.manifest if p == partner)
    assert 0.3 * f_beta(k / families, k / len(truth.manifest), BETA) > probes.PROBE_CEILING
    world = env().world(task(index))  # type: ignore[attr-defined]
    event = "none" if cite == "none" else _first_ledger_event(world, partner)
    reward, comps, _, _ = play(recite(partner, event), index)
    assert reward <= probes.PROBE_CEILING
    if cite == "none":
        assert comps["defect_identification"] == 0.0


def _first_ledger_event(world: object, partner: str) -> str:
    import sqlite3
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "db.sqlite"
        path.write_bytes(world.files["db.sqlite"])  # type: ignore[attr-defined]
        db = sqlite3.connect(path)
        row = db.execute(
            "SELECT event_id FROM ledger_entries WHERE partner_id = ? AND event_id IS NOT NULL "
            "ORDER BY rowid LIMIT 1",
            (partner,),
        ).fetchone()
        db.close()
    return str(row[0]) if row else "none"


def test_partner_bound_is_the_arithmetic_of_its_definition() -> None:
    manifest = frozenset({("a", "p1"), ("b", "p1"), ("c", "p1")})
    # all three pairs on the guessed partner: 3 hits of 12 claims, recall 1
    p, r = 3 / 12, 1.0
    expected = 0.3 * (1.25 * p * r / (0.25 * p + r)) + 0.1 * p
    assert cheap_attacks.partner_bound(manifest, 12, "p1") == pytest.approx(expected)
    assert 0.3 * f_beta(p, r, BETA) == pytest.approx(0.0882, abs=1e-4)  # the public worst case
    assert cheap_attacks.partner_bound(manifest, 12, "p2") == 0.0


def test_the_merged_into_column_alone_finds_identity_fragmentation_and_nothing_else() -> None:
    reward, comps, metrics, _ = play(cheap_attacks.merged_report, MERGED)
    truth = env().episode_truth(task(MERGED))  # type: ignore[attr-defined]
    hits = sum(1 for f, _ in truth.manifest if f == "identity_fragmentation")
    assert metrics["distinct_pairs"] == hits == 2
    expected = 0.3 * f_beta(1.0, hits / len(truth.manifest), BETA)
    assert comps["defect_identification"] == pytest.approx(
        f_beta(1.0, hits / len(truth.manifest), BETA), abs=1e-6
    )
    assert comps["ledger_correctness"] == 0.0
    assert expected - 1e-6 <= reward <= expected + 0.1 + 1e-6 < cheap_attacks.REPORT_VALUE
    # on a task without a merge it is the placeholder, and scores nothing
    assert play(cheap_attacks.merged_report, T1)[0] == 0.0

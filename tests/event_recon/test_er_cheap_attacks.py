"""The cheap attacks of `cheap_attacks.py`, each with the figure the gate rows publish.

The full run over the 120 public tasks is a gate row each (docs/envs/event-recon-gates.json);
here a few tasks show what each attack earns and why.
"""

from __future__ import annotations

from functools import cache

import pytest

import datagauntlet as dg
from datagauntlet.core.episode import Task
from datagauntlet.envs.event_recon import cheap_attacks, probes
from datagauntlet.envs.event_recon.grader import BETA, f_beta

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


def test_a_schema_only_report_earns_exactly_f_beta_of_its_one_partner() -> None:
    families = len(env().families(task(T1)))  # type: ignore[attr-defined]
    for index in (T1, T4):
        reward, comps, metrics, _ = play(cheap_attacks.schema_report, index)
        truth = env().episode_truth(task(index))  # type: ignore[attr-defined]
        first = sorted(truth.partners)[0]
        k = sum(1 for _, p in truth.manifest if p == first)
        expected = 0.3 * f_beta(k / families, k / len(truth.manifest), BETA) if k else 0.0
        assert metrics["distinct_pairs"] == families
        assert comps["evidence_grounding"] == 0.0  # it cites nothing it read
        assert reward == pytest.approx(expected, abs=1e-6)
        assert reward <= cheap_attacks.partner_bound(truth.manifest, families, first) + 1e-9


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
    assert comps["defect_identification"] == pytest.approx(expected / 0.3)
    assert comps["ledger_correctness"] == 0.0
    assert expected - 1e-6 <= reward <= expected + 0.1 + 1e-6 < cheap_attacks.REPORT_VALUE
    # on a task without a merge it is the placeholder, and scores nothing
    assert play(cheap_attacks.merged_report, T1)[0] == 0.0

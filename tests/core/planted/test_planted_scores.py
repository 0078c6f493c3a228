"""Scores: weights that sum to one, components capped to [0, 1] and named as the weights name
them, the parts a score shows (rules that survived planted bugs and mutants, docs/mutation/)."""

from __future__ import annotations

import pytest
from planted_envs import GUESS_WEIGHTS

from datagauntlet.core.score import Score

WEIGHTS = {"a": 0.5, "b": 0.5}


@pytest.mark.parametrize(("given", "kept"), [(1.7, 1.0), (-0.4, 0.0), (0.25, 0.25)])
def test_score_caps_every_component_value_to_unit_range(given: float, kept: float) -> None:
    s = Score.build(WEIGHTS, {"a": given, "b": 1.0})
    assert s.components["a"]["value"] == kept
    assert s.reward == pytest.approx(0.5 * kept + 0.5)
    assert 0.0 <= s.reward <= 1.0


def test_a_score_as_a_dict_names_its_three_parts() -> None:
    s = Score.build(WEIGHTS, {"a": 1.0, "b": 0.5}, {"m": 3})
    out = s.as_dict()
    assert out["reward"] == s.reward == 0.75
    assert out["components"] == s.components and out["metrics"] == {"m": 3}


def test_a_stamped_score_shows_its_stamp_and_an_unstamped_one_has_none() -> None:
    score = Score.build(GUESS_WEIGHTS, {"right": 0.5})
    assert "stamp" not in score.as_dict()
    stamp = {"package": "1", "env": "guess"}
    assert score.stamped(stamp).as_dict()["stamp"] == stamp


def test_weights_must_sum_to_one_and_each_be_positive() -> None:
    from datagauntlet.core.score import check_weights

    check_weights({"a": 0.25, "b": 0.75})
    check_weights({"a": 0.1, "b": 0.2, "c": 0.7})  # a float sum within rounding of 1
    for weights in ({"a": 0.5}, {"a": 0.6, "b": 0.6}, {"a": 1.0 + 1e-6}):
        with pytest.raises(ValueError) as caught:
            check_weights(weights)
        assert str(caught.value) == f"component weights must sum to 1, got {sum(weights.values())}"
    for weights in ({"a": 1.0, "b": 0.0}, {"a": 1.5, "b": -0.5}):
        with pytest.raises(ValueError) as caught:
            check_weights(weights)
        assert str(caught.value) == "component weights must be positive"


def test_a_score_refuses_components_that_differ_from_its_weights_naming_them() -> None:
    weights = {"a": 0.5, "b": 0.5}
    cases = {
        "missing {'b'}, extra set()": {"a": 1.0},
        "missing set(), extra {'c'}": {"a": 1.0, "b": 1.0, "c": 1.0},
        "missing {'b'}, extra {'c'}": {"a": 1.0, "c": 1.0},
    }
    for named, values in cases.items():
        with pytest.raises(ValueError) as caught:
            Score.build(weights, values)
        assert str(caught.value) == f"components differ from weights: {named}"
    score = Score.build(weights, {"a": 1.0, "b": 0.25})
    assert score.components == {
        "a": {"value": 1.0, "weight": 0.5},
        "b": {"value": 0.25, "weight": 0.5},
    }
    assert score.reward == 0.625

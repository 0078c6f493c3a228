"""Every registered environment passes the shared conformance check, every check by name."""

import pytest

import datagauntlet as dg
from datagauntlet.core.checks import CHECKS


@pytest.mark.parametrize("env_id", dg.list_envs())
def test_check_env(env_id: str) -> None:
    report = dg.check_env(dg.make(env_id))
    assert report.passed and report.names() == [name for name, _ in CHECKS]

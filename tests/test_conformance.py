"""Every registered environment passes the shared conformance check."""

import pytest

import datagauntlet as dg


@pytest.mark.parametrize("env_id", dg.list_envs())
def test_check_env(env_id: str) -> None:
    dg.check_env(dg.make(env_id))

"""Workspace-reading policies for event-recon: the reference solver and graded-strength
policies. They learn everything through the episode's tools (see `policy`)."""

from __future__ import annotations

from datagauntlet.core.env import Policy


def policies() -> dict[str, Policy]:
    """The reference, the workspace-only attacker and the graded-strength policies."""
    from datagauntlet.envs.event_recon.attackers import workspace_only
    from datagauntlet.envs.event_recon.solver.policy import reference

    return {"reference": reference, "workspace_only": workspace_only}

"""dirty-integration's one registration."""

from datagauntlet.core.limits import Limits
from datagauntlet.core.registration import Registration


def _calls_allowed(ep: object) -> int:
    """Enough for a careful agent that spends the whole quota, then stop."""
    world = ep.world  # type: ignore[attr-defined]
    return 4 * (world.quota or world.pages_needed) + 100


REGISTRATION = Registration(
    id="dirty-integration",
    entry_point="datagauntlet.envs.dirty_integration.env:DirtyIntegrationEnv",
    reference="careful",
    limits=Limits(max_turns=30, max_turns_cap=10_000, max_calls=_calls_allowed),
    version="2",
    generator_version="1",
    summary="collect every record from a paginated API that fails quietly",
    http_api="datagauntlet.envs.dirty_integration.http_api:handle",
    fast_steps=True,
    remote_config=("profile", "num_records", "page_size", "http_timeout_seconds"),
)

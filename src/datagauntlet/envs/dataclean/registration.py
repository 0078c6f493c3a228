"""dataclean's one registration."""

from datagauntlet.core.limits import Limits
from datagauntlet.core.registration import Registration


def _calls_allowed(ep: object) -> int:
    """max_turns counts executed calls; this also bounds a loop of refused ones."""
    return 10 * ep.config.max_turns + 100  # type: ignore[attr-defined]


REGISTRATION = Registration(
    id="dataclean",
    entry_point="datagauntlet.envs.dataclean.env:DatacleanEnv",
    reference="oracle",
    limits=Limits(
        max_turns=20, max_turns_cap=1_000, max_calls=_calls_allowed, executed_calls_are_turns=True
    ),
    version="2",
    generator_version="2",
    summary="repair a corrupted table with a JSON program of safe operations",
    command="datagauntlet.envs.dataclean.command",
    final_answer="datagauntlet.envs.dataclean.final_answer:PROGRAM_REPLY",
    report_tables="datagauntlet.envs.dataclean.report:report_tables",
    remote_config=("family", "rows", "previews"),
)

"""bad-batch-gate's one registration."""

from datagauntlet.core.limits import Limits
from datagauntlet.core.registration import Registration

MAX_CALLS = 500  # stops a runaway policy in process; front doors also enforce max_turns

REGISTRATION = Registration(
    id="bad-batch-gate",
    entry_point="datagauntlet.envs.bad_batch_gate.env:BadBatchGateEnv",
    reference="careful",
    limits=Limits(max_turns=30, max_turns_cap=1_000, max_calls=MAX_CALLS),
    version="2",
    generator_version="2",
    summary="load or quarantine staged batches under a data contract",
    report_tables="datagauntlet.envs.bad_batch_gate.tables:report_tables",
    remote_config=("families",),  # not `cases`: a path on the host
)

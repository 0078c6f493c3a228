"""event-recon's one registration."""

from datagauntlet.core.limits import Limits
from datagauntlet.core.registration import Registration

MAX_CALLS = 400  # an in-process backstop for a runaway policy; a model is held to max_turns

REGISTRATION = Registration(
    id="event-recon",
    entry_point="datagauntlet.envs.event_recon.env:EventReconEnv",
    reference="reference",
    limits=Limits(max_turns=80, max_turns_cap=1_000, max_calls=MAX_CALLS),
    version="1",
    generator_version="1",
    summary=(
        "reconcile a commission ledger against webhooks and a partner statement; report the "
        "defects and submit a remediation script"
    ),
    command="datagauntlet.envs.event_recon.command",
    # the split filters; the time and byte budgets are the operator's, as is family_module
    remote_config=("tier", "num_tasks"),
)

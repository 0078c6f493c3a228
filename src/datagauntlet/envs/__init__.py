"""The registered environments: id -> "module:Class", imported only when made.

Adding an env is one line here; every front door reaches it through `datagauntlet.make`.
"""

ENVS: dict[str, str] = {
    "bad-batch-gate": "datagauntlet.envs.bad_batch_gate.env:BadBatchGateEnv",
    "dataclean": "datagauntlet.envs.dataclean.env:DatacleanEnv",
    "dirty-integration": "datagauntlet.envs.dirty_integration.env:DirtyIntegrationEnv",
    "event-recon": "datagauntlet.envs.event_recon.env:EventReconEnv",
}

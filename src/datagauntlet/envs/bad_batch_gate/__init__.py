"""bad-batch-gate: load or quarantine staged batches under a data contract, before a loader
that accepts anything turns a bad batch into a wrong number."""

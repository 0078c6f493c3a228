"""The case of one task: the data contract, the case format and its loader, the draft a
family builds batches on, the families, the generator with its contract check, and the
warehouse with its loader.
"""

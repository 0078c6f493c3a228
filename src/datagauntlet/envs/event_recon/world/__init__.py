"""The world of one seed: records, the clean base, the defect families and their plan,
the platform's ledger builder, and the four workspace files.
"""
